#include "ortkit/convert/model_conversion.h"

#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/check/onnx_checker.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit {
namespace {

void Append(std::vector<Diagnosis>& to, const std::vector<Diagnosis>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

/// The checker's findings on the converted model, and those of the target release when there is one.
void CheckConverted(const onnx::ModelProto& converted, const OrtRelease* target, ModelConversionReport& report) {
  {
    onnx::ModelProto copy = converted;
    Append(report.diagnoses, RunChecker(copy).diagnoses);
  }
  if (target != nullptr) Append(report.diagnoses, CheckTargetRuntime(converted, *target));
}

/// Runs both models on the same inputs: the proof joins the report, with findings when the outputs
/// differ or are NaN on both sides; a proof that cannot be made is convert.not-validated.
Status Prove(const ModelConversionOptions& options, const onnx::ModelProto& original, const onnx::ModelProto& converted,
             ModelConversionReport& report) {
  Location file;
  file.file = report.model;
  auto runtime = Runtime::Create();
  if (!runtime.ok()) return runtime.error();
  std::string bytes;
  if (!converted.SerializeToString(&bytes)) {
    return MakeError(ErrorKind::kInternal, "the converted model could not be serialised");
  }
  auto proof = CheckEquivalence(**runtime, ModelToLoad{options.model, {}}, bytes, original, options.proof);
  if (!proof.ok()) {
    report.diagnoses.push_back(Diagnose("convert.not-validated", proof.error().message, file));
    return OkStatus();
  }
  report.proof = std::move(proof).value();
  if (report.proof->NanBoth() > 0) {
    report.diagnoses.push_back(
        Diagnose("convert.nan-both",
                 fmt::format("{} output elements are NaN in both models on the synthesised inputs: they match, "
                             "but prove nothing about the conversion",
                             report.proof->NanBoth()),
                 file));
  }
  if (!report.proof->Passed()) {
    report.diagnoses.push_back(
        Diagnose("convert.outputs-differ",
                 fmt::format("the converted model's outputs differ from the original's (largest absolute error {:.3g})",
                             report.proof->MaxAbsError()),
                 file));
  }
  return OkStatus();
}

/// Checks, proves and writes the converted model, each step only while nothing has failed.
Status FinishConverted(const ModelConversionOptions& options, const onnx::ModelProto& original,
                       ModelConversionReport& report) {
  const onnx::ModelProto& converted = *report.conversion.model;
  CheckConverted(converted, options.target, report);
  if (!report.Failed() && options.prove) ORTKIT_RETURN_IF_ERROR(Prove(options, original, converted, report));
  if (report.Failed()) return OkStatus();
  ORTKIT_RETURN_IF_ERROR(WriteModel(converted, options.out, report.external_data));
  report.written = true;
  std::error_code ec;
  report.external_data = std::filesystem::exists(options.out.string() + ".data", ec);
  return OkStatus();
}

}  // namespace

bool ModelConversionReport::Failed() const { return WorstSeverity(diagnoses) == Severity::kError; }

Result<ConversionOptions> ResolveConversionTarget(int opset, int ir_version, const OrtRelease* target) {
  ConversionOptions options;
  options.opset = opset;
  options.ir_version = ir_version;
  if (target == nullptr) {
    if (opset == 0) return MakeError(ErrorKind::kInvalidArgument, "give --opset N or --target-ort X.Y");
    return options;
  }
  if (options.opset == 0) options.opset = target->max_opset;
  if (options.opset > target->max_opset) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--opset {} is newer than ONNX Runtime {} loads (opset {} at most)", options.opset,
                                 target->version, target->max_opset));
  }
  return options;
}

Result<ModelConversionReport> ConvertModelFile(const ModelConversionOptions& options) {
  ModelConversionReport report;
  report.model = options.model.string();
  report.out = options.out.string();
  ModelLoad load = LoadModelFile(options.model);
  if (load.model == nullptr) {
    report.diagnoses = std::move(load.diagnoses);
    if (load.failure && load.failure->kind == ErrorKind::kIo) report.failure = load.failure;
    return report;
  }
  const onnx::ModelProto& original = *load.model->proto;
  report.external_data = !ListExternalTensors(original).empty();
  onnx::ModelProto inlined = original;
  ORTKIT_RETURN_IF_ERROR(InlineExternalData(inlined, load.model->BaseDirectory(), kMaxInlinedBytes,
                                            "convert holds the weights in memory to convert and prove the model",
                                            "models this large are not converted here"));
  report.conversion = ConvertOpset(inlined, options.conversion);
  report.diagnoses = report.conversion.diagnoses;
  if (report.conversion.model) ORTKIT_RETURN_IF_ERROR(FinishConverted(options, original, report));
  SortBySeverity(report.diagnoses);
  return report;
}

void to_json(nlohmann::json& json, const ModelConversionReport& report) {
  const auto& c = report.conversion;
  nlohmann::json rewrites = nlohmann::json::array();
  for (const auto& r : c.rewrites) rewrites.push_back({{"node", r.node}, {"op_type", r.op_type}, {"change", r.change}});
  json = {{"model", report.model},      {"out", report.out},      {"written", report.written},
          {"from_opset", c.from_opset}, {"to_opset", c.to_opset}, {"from_ir_version", c.from_ir},
          {"to_ir_version", c.to_ir},   {"rewrites", rewrites},   {"diagnoses", report.diagnoses}};
  if (report.proof) json["proof"] = report.proof->ToJson();
}

}  // namespace ortkit
