#include "ortkit/validate/validate.h"

#include <span>

#include <nlohmann/json.hpp>

#include "ortkit/diagnose/runtime_messages.h"

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

Status ValidateAgainstReference(Session& session, const SessionSpecs& specs, const ValidateOptions& options,
                                ValidateReport& report) {
  ORTKIT_ASSIGN_OR_RETURN(auto cases, ReadReference(options.reference, specs.inputs, specs.outputs));
  report.reference = ValidateAgainst(session, cases, options.tolerance);
  return OkStatus();
}

// The cross-check's inputs, made from the options' files and plan at sizes that run.
Result<std::vector<NamedTensor>> CrossCheckInputs(Session& session, const onnx::ModelProto& model,
                                                  const SessionSpecs& specs, const ValidateOptions& options,
                                                  ValidateReport& report) {
  ORTKIT_ASSIGN_OR_RETURN(SettledSizes settled, SettleSizes(session, specs.inputs, &model, options.inputs));
  InputSources sources = options.inputs;
  for (const auto& [dim, size] : settled.found) sources.plan.dims.emplace(dim, size);
  ORTKIT_ASSIGN_OR_RETURN(PreparedInputs prepared, PrepareInputs(specs.inputs, &model, sources));
  report.size_notes = std::move(settled.notes);
  return std::move(prepared.tensors);
}

// False when the step could not be carried out (report.failure says why).
bool RunCrossCheck(Runtime& runtime, Session& session, const onnx::ModelProto& model, const SessionSpecs& specs,
                   const ValidateOptions& options, ValidateReport& report) {
  using Step = ValidateFailure::Step;
  report.compare_mode = options.compare;
  auto plan = ParseCrossCheckMode(options.compare, options.session);
  if (!plan.ok()) {
    report.failure = ValidateFailure{Step::kCompareMode, plan.error()};
    return false;
  }
  std::vector<NamedTensor> prepared;
  if (options.given_inputs == nullptr) {
    auto made = CrossCheckInputs(session, model, specs, options, report);
    if (!made.ok()) {
      report.failure = ValidateFailure{Step::kInputs, made.error()};
      return false;
    }
    prepared = std::move(made).value();
  }
  const std::span<const NamedTensor> inputs = options.given_inputs != nullptr ? *options.given_inputs : prepared;
  const ModelToLoad source{options.model, {}};
  auto cross = CrossCheck(runtime, source, *plan, inputs, options.tolerance);
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
  if (options.localize && !report.cross_check->Passed()) {
    report.localizations.push_back(
        Localized(Localize(runtime, source, *plan, inputs, LocalizeOptionsFor(options)), model));
  }
  return true;
}

Status RunSweepStep(Session& session, const onnx::ModelProto& model, const SessionSpecs& specs,
                    const ValidateOptions& options, ValidateReport& report) {
  SweepOptions sweep;
  sweep.axes = options.sweep_axes;
  sweep.tolerance = options.tolerance;
  sweep.batch_consistency = options.batch_check;
  sweep.base = options.inputs.plan;
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(sweep.base, NameUnnamedAxes(specs.inputs)));
  ORTKIT_ASSIGN_OR_RETURN(report.sweep, RunSweep(session, model, sweep));
  return OkStatus();
}

}  // namespace

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
    if (Status status = ValidateAgainstReference(session, specs, options, report); !status.ok()) {
      report.failure = ValidateFailure{Step::kReference, status.error()};
      return report;
    }
  }
  if (!options.compare.empty() && !RunCrossCheck(runtime, session, model, specs, options, report)) return report;
  if (options.localize && report.reference && !report.reference->Passed()) {
    report.localizations.push_back(
        Localized(LocalizeAgainstReference(runtime, ModelToLoad{options.model, {}}, options.session, options.reference,
                                           {}, LocalizeOptionsFor(options)),
                  model));
  }
  if (options.sweep) {
    if (Status status = RunSweepStep(session, model, specs, options, report); !status.ok()) {
      report.failure = ValidateFailure{Step::kSweep, status.error()};
    }
  }
  return report;
}

bool ValidateReport::Passed() const {
  return (!reference || reference->Passed()) && !cross_check_error && (!cross_check || cross_check->Passed()) &&
         (!sweep || sweep->Passed());
}

Diagnosis ValidateReport::CrossCheckRunDiagnosis(const Location& where) const {
  return TranslateRuntimeError(cross_check_error ? cross_check_error->message : "", where, /*during_run=*/true);
}

nlohmann::json ValidateReport::ToJson() const {
  nlohmann::json json = nlohmann::json::object();
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
