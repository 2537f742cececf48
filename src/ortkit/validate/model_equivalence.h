#pragma once
// Whether two models compute the same thing, shown by the numbers before anything is written: the
// original and a candidate made from it (converted by `convert`, repaired by `fix`) run on the same
// synthesised inputs at two shapes, and every output is compared with validate's tolerances. The
// commands that rewrite a model prove their result with it; it lives beside the cross-check it is
// built on.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/synthesis.h"
#include "ortkit/validate/cross_check.h"

namespace ortkit {

struct EquivalenceOptions {
  InputPlan inputs;  ///< the first shape; the second doubles every symbolic dimension the plan leaves open
  ToleranceRules tolerance;
  SessionConfig session;
};

/// One shape both models ran at.
struct ShapeTrial {
  std::string label;                ///< "batch=1, sequence=16"
  std::vector<std::string> shapes;  ///< "input_ids int64[1, 16]", one per input
  std::optional<CrossCheckReport> report;
  std::string skipped;        ///< why the shape was not compared: the original itself does not run at it
  std::int64_t nan_both = 0;  ///< elements NaN in both models' outputs: equal, and proving nothing

  nlohmann::json ToJson() const;
};

struct EquivalenceReport {
  std::vector<ShapeTrial> trials;

  /// Every trial that ran passed, and at least one ran.
  bool Passed() const;
  /// The largest absolute error over every output of every trial.
  double MaxAbsError() const;
  /// Elements NaN in both models' outputs, over every trial.
  std::int64_t NanBoth() const;
  /// {"passed", "max_abs_error", "trials": [ShapeTrial::ToJson()]}
  nlohmann::json ToJson() const;
};

/// Runs `original` (a file; its external data found next to it) and `candidate_bytes` (a serialised
/// model with its weights inline, made from the original) on the same inputs at two shapes. Errors:
/// kRuntime when the original does not load or run at the first shape ("original: ..."), or when the
/// candidate does not load or run where the original did ("converted: ...").
Result<EquivalenceReport> CheckEquivalence(Runtime& runtime, const ModelToLoad& original,
                                           std::string_view candidate_bytes, const onnx::ModelProto& original_proto,
                                           const EquivalenceOptions& options);

}  // namespace ortkit
