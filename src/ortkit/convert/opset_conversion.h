#pragma once
// Moving a model to another ai.onnx opset: ONNX's version converter, with down-conversion adapters
// of ortkit's own for what today's exporters emit and the stock converter refuses (Gelu-20, Shape-15
// with start/end, Split-18 with num_outputs, ConstantOfShape-20, ops of opsets 14-22 that only
// widened their types, ...). Pure model work: proving the result by the numbers is CheckEquivalence's.

#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

struct ConversionOptions {
  int opset = 0;       ///< target ai.onnx opset
  int ir_version = 0;  ///< 0: the IR version the first ONNX release with `opset` wrote (never above the model's
                       ///< when converting down, never below it when converting up)
};

/// One node an ortkit adapter rewrote or re-versioned under a condition it checked.
struct NodeRewrite {
  std::string node;     ///< the node's name, or "#index"
  std::string op_type;  ///< "Gelu"
  std::string change;   ///< "Gelu-20 -> Erf formula (opset 19)"
};

struct ConversionOutcome {
  std::optional<onnx::ModelProto> model;  ///< the converted model; empty when conversion failed
  int from_opset = 0;
  int to_opset = 0;
  int from_ir = 0;
  int to_ir = 0;
  std::vector<NodeRewrite> rewrites;
  std::vector<Diagnosis> diagnoses;  ///< why `model` is empty (errors), and warnings
};

/// The IR version of the first ONNX release that wrote `opset` (opset 17: IR 8, opset 20: IR 9).
int IrVersionForOpset(int opset);

/// Converts `model` (external data already inlined) to `options.opset`. Errors name the node and
/// operator that cannot be expressed in the target opset (convert.no-adapter,
/// convert.not-expressible) or the IR version that cannot hold the model (convert.ir-too-low).
/// Nodes of other domains are kept as they are, with a warning (convert.custom-domain).
ConversionOutcome ConvertOpset(const onnx::ModelProto& model, const ConversionOptions& options);

}  // namespace ortkit
