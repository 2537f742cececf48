#include "ortkit/optimize/candidate_trials.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/model/output_purpose.h"
#include "ortkit/runtime/run.h"
#include "ortkit/validate/reference.h"
#include "ortkit/validate/sweep.h"

namespace ortkit {
namespace {

// The reference's cases as trials.
Result<std::vector<ProofInputs>> ReferenceTrials(const std::filesystem::path& reference,
                                                 const std::vector<TensorSpec>& inputs,
                                                 const std::vector<TensorSpec>& outputs) {
  ORTKIT_ASSIGN_OR_RETURN(auto cases, ReadReference(reference, inputs, outputs));
  std::vector<ProofInputs> trials;
  for (auto& c : cases) trials.push_back({c.label, std::move(c.inputs), {}});
  return trials;
}

// The first trial at the sizes the model runs at, and the same at another batch size unless the inputs
// come from files.
Result<std::vector<ProofInputs>> SynthesisedTrials(Session& session, const onnx::ModelProto& model,
                                                   const std::vector<TensorSpec>& inputs, const InputSources& sources,
                                                   const std::string& batch_dim, ProofBaseline& baseline) {
  ORTKIT_ASSIGN_OR_RETURN(SettledSizes settled, SettleSizes(session, inputs, &model, sources));
  baseline.notes = settled.notes;
  InputSources first = sources;
  for (const auto& [dim, size] : settled.found) first.plan.dims.emplace(dim, size);
  ORTKIT_ASSIGN_OR_RETURN(PreparedInputs prepared, PrepareInputs(inputs, &model, first));
  ORTKIT_RETURN_IF_ERROR(CheckSizesOfFileInputs(first.plan, inputs, prepared));
  std::vector<ProofInputs> trials;
  const std::string label = DescribeShapes(prepared.tensors);
  trials.push_back({sources.files.empty() ? label : "the --input files: " + label, std::move(prepared.tensors), {}});
  if (!sources.files.empty()) return trials;
  InputSources second = first;
  second.plan.seed = first.plan.seed + 1;
  if (!batch_dim.empty()) {
    const auto it = first.plan.dims.find(batch_dim);
    const std::int64_t batch = it == first.plan.dims.end() ? 1 : it->second;
    second.plan.dims[batch_dim] = batch == 1 ? 3 : 1;
  }
  auto other = PrepareInputs(inputs, &model, second);
  if (other.ok()) trials.push_back({DescribeShapes(other->tensors), std::move(other->tensors), {}});
  return trials;
}

}  // namespace

std::string DescribeShapes(const std::vector<NamedTensor>& tensors) {
  std::vector<std::string> parts;
  for (const auto& t : tensors) parts.push_back(fmt::format("{} {}", t.name, t.tensor.Describe()));
  return fmt::format("{}", fmt::join(parts, ", "));
}

Result<ProofBaseline> RunOriginal(Session& session, const onnx::ModelProto& model, const InputSources& sources,
                                  const std::filesystem::path& reference) {
  ProofBaseline baseline;
  ORTKIT_ASSIGN_OR_RETURN(baseline.session_inputs, DescribeInputs(session));
  ORTKIT_ASSIGN_OR_RETURN(auto session_outputs, DescribeOutputs(session));
  baseline.declared_inputs = DeclaredInputs(model);
  baseline.declared_outputs = DeclaredOutputs(model);
  baseline.batch_dim = DetectBatchDim(baseline.session_inputs);
  if (!reference.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(baseline.trials, ReferenceTrials(reference, baseline.session_inputs, session_outputs));
    baseline.source = fmt::format("the reference '{}' ({} cases)", reference.string(), baseline.trials.size());
  } else {
    ORTKIT_ASSIGN_OR_RETURN(baseline.trials, SynthesisedTrials(session, model, baseline.session_inputs, sources,
                                                               baseline.batch_dim, baseline));
    baseline.source = sources.files.empty() ? "synthesised" : "the --input files";
  }
  for (std::size_t i = 0; i < baseline.trials.size(); ++i) {
    auto outputs = RunSession(session, RunRequest{baseline.trials[i].inputs, {}});
    if (!outputs.ok() && i == 0) {
      return MakeError(ErrorKind::kRuntime,
                       fmt::format("the original model does not run on {} ({}): {}", baseline.source,
                                   DescribeShapes(baseline.trials[i].inputs), outputs.error().message));
    }
    if (!outputs.ok()) {
      baseline.notes.push_back(
          fmt::format("the original does not run at {}: {}; the proof compares at the other "
                      "shapes",
                      baseline.trials[i].label, outputs.error().message));
      baseline.trials.erase(baseline.trials.begin() + static_cast<std::ptrdiff_t>(i--));
      continue;
    }
    baseline.trials[i].expected = std::move(*outputs);
  }
  for (const auto& out : baseline.trials.front().expected) {
    baseline.output_names.push_back(out.name);
    baseline.purposes.push_back(GuessOutputPurpose(model, out.name, out.tensor));
  }
  return baseline;
}

}  // namespace ortkit
