#pragma once
// Lint rules over a parsed model: what makes a graph invalid (structural_rules.cpp) and what an
// exporter typically gets wrong (exporter_rules.cpp: static batch, training mode, float64 leaks,
// baked reshapes, ...). Pure functions of the ModelProto; no runtime needed.

#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

struct LintOptions {
  /// Highest ai.onnx opset the installed ONNX Runtime implements (graph.opset-too-new);
  /// see ProbeMaxSupportedOpset in ortkit/runtime/capabilities.h.
  int max_supported_opset = 0;  ///< 0: do not check
  /// Findings one rule reports one by one; the rest are counted in one last diagnosis of the same code.
  int max_diagnoses_per_rule = 20;
  /// Rule codes to skip ("graph.static-batch", ...; see LintRuleCodes()).
  std::vector<std::string> disabled_rules;
};

/// The codes of every lint rule, in the order they run. Each rule reports under its own code only.
std::vector<std::string_view> LintRuleCodes();

/// Runs every rule over the main graph and, where it makes sense, the If/Loop/Scan bodies.
/// Never throws; a malformed model (missing attributes, empty names, cycles, deep nesting) yields
/// diagnoses, not crashes. Linear in the model's size apart from per-rule sorting.
std::vector<Diagnosis> LintModel(const onnx::ModelProto& model, const LintOptions& options = {});

}  // namespace ortkit
