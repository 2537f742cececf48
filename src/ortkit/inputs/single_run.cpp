#include "ortkit/inputs/single_run.h"

#include <chrono>

#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/runtime/run.h"

namespace ortkit {
namespace {

/// Outputs that are sequences, maps or optionals: RunSession leaves them in the runtime.
std::vector<std::string> NonTensorOutputs(Session& session) {
  std::vector<std::string> names;
  auto specs = DescribeOutputs(session);
  if (!specs.ok()) return names;
  for (const auto& spec : *specs) {
    if (!spec.is_tensor) names.push_back(spec.name);
  }
  return names;
}

}  // namespace

Result<SingleRun> RunModelOnce(Session& session, const std::vector<TensorSpec>& specs, const onnx::ModelProto& model,
                               const std::filesystem::path& model_path, const InputSources& sources) {
  SingleRun run;
  InputSources settled = sources;
  if (settled.files.empty()) {  // the files' sizes are the sizes
    ORTKIT_ASSIGN_OR_RETURN(SettledSizes sizes, SettleSizes(session, specs, &model, settled));
    for (const auto& [dim, size] : sizes.found) settled.plan.dims.emplace(dim, size);
    run.size_notes = std::move(sizes.notes);
  }
  ORTKIT_ASSIGN_OR_RETURN(run.inputs, PrepareInputs(specs, &model, settled));
  // --shape and --dim would be ignored for an input read from a file: refused rather than dropped in silence.
  ORTKIT_RETURN_IF_ERROR(CheckSizesOfFileInputs(settled.plan, specs, run.inputs));

  Location where;
  where.file = model_path.string();
  const auto start = std::chrono::steady_clock::now();
  auto outputs = RunSession(session, RunRequest{run.inputs.tensors, {}});
  run.run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outputs.ok()) {
    const bool input_problem = outputs.error().kind == ErrorKind::kInvalidArgument;
    run.failure = MakeError(input_problem ? ErrorKind::kInvalidArgument : ErrorKind::kRuntime, "the run failed");
    run.diagnoses.push_back(input_problem ? Diagnose("runtime.invalid-input", outputs.error().message, where)
                                          : TranslateRuntimeError(outputs.error().message, where, /*during_run=*/true));
    return run;
  }
  run.outputs = std::move(outputs).value();
  for (auto& mismatch : OutputShapeMismatches(DeclaredOutputs(model), run.outputs))
    run.diagnoses.push_back(Diagnose("runtime.output-shape-differs", std::move(mismatch), where));
  run.not_fetched = NonTensorOutputs(session);
  return run;
}

}  // namespace ortkit
