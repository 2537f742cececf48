#pragma once
// What a model's output is for, read from the graph that computes it, its name and the values a run
// gave it: the purpose a difference between two runs is judged by (tensor/agreement.h).

#include <string>

#include <onnx/onnx_pb.h>

#include "ortkit/tensor/agreement.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// The purpose of `output` of `model`'s main graph, `sample` being a value a run gave it. In order:
///  - integer or bool elements: kLabels;
///  - one entry per row (a scalar, a last axis of 1): kValues;
///  - computed by Softmax, LogSoftmax or TopK (through nodes that only move or re-encode values:
///    Reshape, Transpose, Squeeze, Cast, QuantizeLinear/DequantizeLinear, ...): kScores; by
///    LpNormalization or a division by a norm: kEmbedding; by Sigmoid: kValues (independent
///    probabilities, judged by their error);
///  - named for scores (logits, scores, probabilities, classes) or for vectors (embedding, features,
///    hidden state, pooled output): kScores or kEmbedding;
///  - rows that are probability distributions (entries in [0, 1] summing to 1): kScores;
///  - rows of 1,000 or more that are no multiple of 64 (a vocabulary, a character set): kScores;
///  - otherwise kEmbedding: a row of values is judged by its direction.
OutputPurpose GuessOutputPurpose(const onnx::ModelProto& model, const std::string& output, const Tensor& sample);

}  // namespace ortkit
