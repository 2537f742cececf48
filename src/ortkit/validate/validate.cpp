#include "ortkit/validate/validate.h"

#include <algorithm>
#include <optional>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/check/target_runtime.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/tensor_stats.h"

namespace ortkit {
namespace {

/// The session's declared inputs and outputs.
struct SessionSpecs {
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

Localization Localized(Result<LocalizeReport> report, const onnx::ModelProto& model) {
  std::vector<Diagnosis> diagnoses;
  if (report.ok()) diagnoses = LocalizeDiagnoses(*report, &model);
  return Localization{std::move(report), std::move(diagnoses)};
}

LocalizeOptions LocalizeOptionsFor(const ValidateOptions& options) {
  LocalizeOptions localize;
  localize.tolerance = options.tolerance;
  localize.chunk_size = options.localize_chunk;
  return localize;
}

Status ValidateAgainstReference(Session& session, const onnx::ModelProto& model, const SessionSpecs& specs,
                                const ValidateOptions& options, ValidateReport& report) {
  ORTKIT_ASSIGN_OR_RETURN(auto cases, ReadReference(options.reference, specs.inputs, specs.outputs));
  report.reference = ValidateAgainst(session, cases, options.tolerance, &model);
  return OkStatus();
}

/// Whether one run on `inputs` gives NaN or Inf in any output (a failed run does not count).
bool ProducesNan(Session& session, const std::vector<NamedTensor>& inputs) {
  auto outputs = RunSession(session, RunRequest{inputs, {}});
  if (!outputs.ok()) return false;
  return std::any_of(outputs->begin(), outputs->end(), [](const NamedTensor& o) {
    if (o.tensor.is_string()) return false;
    const TensorStats stats = ComputeStats(o.tensor);
    return stats.nan > 0 || stats.inf > 0;
  });
}

// Normal values are negative half the time: positive ones are tried before the model is blamed for NaN.
void PreferPositiveInputs(Session& session, const std::vector<TensorSpec>& specs, const onnx::ModelProto& model,
                          InputSources sources, ValidationInputs& inputs) {
  if (!inputs.prepared.ok() || !ProducesNan(session, inputs.prepared->tensors)) return;
  sources.plan.positive_floats = true;
  auto retried = PrepareInputs(specs, &model, sources);
  if (!retried.ok() || ProducesNan(session, retried->tensors)) return;
  inputs.prepared = std::move(retried);
  inputs.positive_floats = true;
  if (inputs.settled.search) inputs.settled.search->base.positive_floats = true;
}

// False when the step could not be carried out (report.failure says why). `made` keeps the inputs made here
// for the sweep.
bool RunCrossCheck(Runtime& runtime, Session& session, const onnx::ModelProto& model, const SessionSpecs& specs,
                   const ValidateOptions& options, ValidateReport& report, std::optional<ValidationInputs>& made) {
  using Step = ValidateFailure::Step;
  report.compare_mode = options.compare;
  auto plan = ParseCrossCheckMode(options.compare, options.session);
  if (!plan.ok()) {
    report.failure = ValidateFailure{Step::kCompareMode, plan.error()};
    return false;
  }
  if (options.given_inputs == nullptr) {
    made = PrepareValidationInputs(session, specs.inputs, model, options);
    if (!made->prepared.ok()) {
      report.failure = ValidateFailure{Step::kInputs, made->prepared.error()};
      return false;
    }
    report.size_notes = made->settled.notes;
  }
  const std::span<const NamedTensor> inputs =
      options.given_inputs != nullptr ? *options.given_inputs : made->prepared->tensors;
  const ModelToLoad source{options.model, {}};
  auto cross = CrossCheck(runtime, source, *plan, inputs, options.tolerance, &model);
  if (!cross.ok() &&
      (cross.error().kind == ErrorKind::kUnavailable || cross.error().kind == ErrorKind::kInvalidArgument)) {
    report.failure = ValidateFailure{Step::kCrossCheck, cross.error()};
    return false;
  }
  if (!cross.ok()) {
    report.cross_check_error = cross.error();
    return true;
  }
  report.cross_check = std::move(cross).value();
  // A quantised model's output beyond rounding is always localised: where the runs part is the finding.
  const bool quantized = report.cross_check->quantization.quantized();
  if ((options.localize || quantized) && !report.cross_check->Passed()) {
    LocalizeOptions localize = LocalizeOptionsFor(options);
    localize.quantized = quantized;
    if (!options.localize) localize.time_budget = kQuantizedLocalizeBudget;
    report.localizations.push_back(Localized(Localize(runtime, source, *plan, inputs, localize), model));
  }
  return true;
}

}  // namespace

ValidationInputs PrepareValidationInputs(Session& session, const std::vector<TensorSpec>& specs,
                                         const onnx::ModelProto& model, const ValidateOptions& options) {
  ValidationInputs inputs;
  auto settled = SettleSizes(session, specs, &model, options.inputs);
  if (!settled.ok()) {
    inputs.prepared = settled.error();
    return inputs;
  }
  inputs.settled = std::move(settled).value();
  InputSources sources = options.inputs;
  for (const auto& [dim, size] : inputs.settled.found) sources.plan.dims.emplace(dim, size);
  inputs.prepared = PrepareInputs(specs, &model, sources);
  if (options.avoid_nan_inputs) PreferPositiveInputs(session, specs, model, std::move(sources), inputs);
  return inputs;
}

SweepOptions ValidationSweepOptions(const ValidateOptions& options, const ValidationInputs* inputs) {
  SweepOptions sweep;
  sweep.axes = options.sweep_axes;
  sweep.tolerance = options.tolerance;
  sweep.batch_consistency = options.batch_check;
  sweep.base = options.inputs.plan;
  sweep.max_sizes = options.sweep_max_sizes;
  sweep.memory_limit_bytes = options.sweep_memory_bytes;
  if (inputs != nullptr) {
    sweep.base.positive_floats = sweep.base.positive_floats || inputs->positive_floats;
    sweep.search = inputs->settled.search;
  }
  return sweep;
}

Result<SweepReport> SweepForValidation(Session& session, const onnx::ModelProto& model,
                                       const std::vector<TensorSpec>& specs, const ValidateOptions& options,
                                       const ValidationInputs* inputs) {
  const SweepOptions sweep = ValidationSweepOptions(options, inputs);
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(sweep.base, NameUnnamedAxes(specs)));
  return RunSweep(session, model, sweep);
}

Diagnosis UnusableReference(const std::filesystem::path& reference, const Error& error) {
  Location where;
  where.file = reference.string();
  return Diagnose("validate.reference-input", error.message, where);
}

ValidateReport Validate(Runtime& runtime, Session& session, const onnx::ModelProto& model,
                        const ValidateOptions& options) {
  using Step = ValidateFailure::Step;
  ValidateReport report;
  report.reference_path = options.reference;
  if (!options.target_ort.empty()) {
    const OrtRelease* release = FindOrtRelease(options.target_ort);
    if (release == nullptr) {
      report.failure = ValidateFailure{
          Step::kTarget,
          MakeError(ErrorKind::kInvalidArgument,
                    fmt::format("--target-ort {}: ONNX Runtime '{}' is not in ortkit's table; it knows {}",
                                options.target_ort, options.target_ort, KnownOrtReleases()))};
      return report;
    }
    report.target = TargetRuntimeReport{std::string(release->version), CheckTargetRuntime(model, *release)};
  }
  auto inputs = DescribeInputs(session);
  auto outputs = DescribeOutputs(session);
  if (!inputs.ok() || !outputs.ok()) {
    report.failure = ValidateFailure{Step::kInputs, inputs.ok() ? outputs.error() : inputs.error()};
    return report;
  }
  const SessionSpecs specs{std::move(inputs).value(), std::move(outputs).value()};
  for (const auto& output : specs.outputs) {
    if (!output.is_tensor) report.not_compared.push_back(output.name);
  }
  if (!options.reference.empty()) {
    if (Status status = ValidateAgainstReference(session, model, specs, options, report); !status.ok()) {
      report.failure = ValidateFailure{Step::kReference, status.error()};
      return report;
    }
  }
  std::optional<ValidationInputs> made;  // the cross-check's, which the sweep starts from
  if (!options.compare.empty() && !RunCrossCheck(runtime, session, model, specs, options, report, made)) return report;
  if (options.localize && report.reference && !report.reference->Passed()) {
    report.localizations.push_back(
        Localized(LocalizeAgainstReference(runtime, ModelToLoad{options.model, {}}, options.session, options.reference,
                                           {}, LocalizeOptionsFor(options)),
                  model));
  }
  if (options.sweep) {
    auto sweep = SweepForValidation(session, model, specs.inputs, options, made ? &*made : nullptr);
    if (sweep.ok()) {
      report.sweep = std::move(sweep).value();
    } else {
      report.failure = ValidateFailure{Step::kSweep, sweep.error()};
    }
  }
  return report;
}

bool TargetRuntimeReport::Passed() const {
  return std::none_of(diagnoses.begin(), diagnoses.end(),
                      [](const Diagnosis& d) { return d.severity == Severity::kError; });
}

bool ValidateReport::Passed() const {
  return (!target || target->Passed()) && (!reference || reference->Passed()) && !cross_check_error &&
         (!cross_check || cross_check->Passed()) && (!sweep || sweep->Passed());
}

Diagnosis ValidateReport::CrossCheckRunDiagnosis(const Location& where) const {
  return TranslateRuntimeError(cross_check_error ? cross_check_error->message : "", where, /*during_run=*/true);
}

nlohmann::json ValidateReport::ToJson() const {
  nlohmann::json json = nlohmann::json::object();
  if (target)
    json["target"] = {{"release", target->release}, {"passed", target->Passed()}, {"diagnoses", target->diagnoses}};
  if (reference) {
    json["reference"] = reference->ToJson();
    json["reference"]["path"] = reference_path.string();
  }
  if (cross_check_error) {
    json["compare"] = {
        {"mode", compare_mode}, {"passed", false}, {"diagnoses", std::vector<Diagnosis>{CrossCheckRunDiagnosis()}}};
  }
  if (cross_check) {
    json["compare"] = cross_check->ToJson();
    json["compare"]["size_notes"] = size_notes;
  }
  if (!localizations.empty()) {
    const Localization& last = localizations.back();
    if (!last.report.ok()) {
      json["localize"] = {{"error", last.report.error().message}};
    } else {
      json["localize"] = last.report->ToJson();
      json["localize"]["diagnoses"] = last.diagnoses;
    }
  }
  if (sweep) json["sweep"] = sweep->ToJson();
  json["not_compared"] = not_compared;
  return json;
}

}  // namespace ortkit
