#pragma once
// One run of a model, as `ortkit run` makes it: the sizes no flag sets found by running, the inputs
// made (read from files or synthesised), one timed run, and what went wrong said as a finding.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit {

/// What one run made and found.
struct SingleRun {
  std::vector<std::string> size_notes;  ///< sizes found by running (SettleSizes), before the run itself
  PreparedInputs inputs;
  std::vector<NamedTensor> outputs;  ///< the tensor outputs, in the session's order
  double run_ms = 0;                 ///< the run alone: the inputs are made before the clock starts
  /// Outputs that are sequences, maps or optionals (a ZipMap of class probabilities): computed, not fetched.
  std::vector<std::string> not_fetched;
  /// Set when the run itself failed: kInvalidArgument when the runtime refused the inputs given
  /// (runtime.invalid-input), kRuntime when the model failed on them. `diagnoses` then hold the finding
  /// that says why.
  std::optional<Error> failure;
  /// The failure's finding, or, after a run that succeeded, outputs whose shapes differ from the
  /// declared ones (runtime.output-shape-differs).
  std::vector<Diagnosis> diagnoses;
};

/// Runs `session` (whose declared inputs are `specs`) once on inputs made from `sources`: the sizes the
/// plan leaves open found by running (SettleSizes, unless files give the inputs), the inputs read or
/// synthesised (PrepareInputs) and checked against the plan (CheckSizesOfFileInputs), then one timed run.
/// `model` (the parsed file, not null) gives value hints and the declared outputs; findings name
/// `model_path`. Errors: inputs that cannot be made from `sources` (the caller's to fix); a run that
/// fails is the result's `failure`.
Result<SingleRun> RunModelOnce(Session& session, const std::vector<TensorSpec>& specs, const onnx::ModelProto& model,
                               const std::filesystem::path& model_path, const InputSources& sources);

}  // namespace ortkit
