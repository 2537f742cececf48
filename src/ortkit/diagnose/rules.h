#pragma once
// Lint rules over a parsed model: what an exporter typically gets wrong (static batch, training
// mode, float64 leaks, baked reshapes, ...). Pure functions of the ModelProto; no runtime needed.

#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

struct LintOptions {
  /// Highest ai.onnx opset the installed ONNX Runtime implements (graph.opset-too-new).
  int max_supported_opset = 0;  ///< 0: do not check
};

/// Runs every rule. Never throws; a malformed model yields diagnoses, not crashes.
std::vector<Diagnosis> LintModel(const onnx::ModelProto& model, const LintOptions& options = {});

}  // namespace ortkit
