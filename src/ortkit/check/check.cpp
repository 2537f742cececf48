#include "ortkit/check/check.h"

#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/check/lint.h"
#include "ortkit/check/onnx_checker.h"
#include "ortkit/check/target_runtime.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/capabilities.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit {
namespace {

LayerReport Finish(std::string name, std::vector<Diagnosis> diagnoses) {
  LayerReport layer;
  layer.name = std::move(name);
  layer.diagnoses = std::move(diagnoses);
  SortBySeverity(layer.diagnoses);
  layer.state =
      WorstSeverity(layer.diagnoses) == Severity::kError ? LayerReport::State::kFailed : LayerReport::State::kPassed;
  return layer;
}

LayerReport Skipped(std::string name, std::string reason, std::vector<Diagnosis> diagnoses = {}) {
  LayerReport layer = Finish(std::move(name), std::move(diagnoses));
  if (layer.state != LayerReport::State::kFailed) layer.state = LayerReport::State::kSkipped;
  layer.skipped_reason = std::move(reason);
  return layer;
}

LayerReport FromOutcome(std::string name, LayerOutcome outcome) {
  if (!outcome.ran) return Skipped(std::move(name), outcome.skipped_reason, std::move(outcome.diagnoses));
  return Finish(std::move(name), std::move(outcome.diagnoses));
}

void AddFile(std::vector<Diagnosis>& diagnoses, const std::string& file) {
  for (auto& d : diagnoses) {
    if (d.location.file.empty()) d.location.file = file;
  }
}

/// The check's failure when the provider cannot run on this machine: the runtime layer says why.
Error ProviderUnavailable(const std::string& provider) {
  return MakeError(ErrorKind::kUnavailable,
                   fmt::format("the {} execution provider cannot run on this machine, so the runtime layer was not "
                               "checked",
                               provider));
}

Result<std::unique_ptr<Session>> CreateSession(Runtime& runtime, const CheckOptions& options) {
  SessionConfig config;
  config.provider = options.provider;
  return Session::Create(runtime, options.model_path, config);
}

// The layers that follow a file layer that found no model: only the runtime can still speak.
void SkipAfterUnreadableFile(Runtime* runtime, const CheckOptions& options, bool io_error, CheckReport& report) {
  const std::string reason = "the file layer found no model to check";
  for (const char* name : {"external-data", "checker", "shape-inference", "rules"})
    report.layers.push_back(Skipped(name, reason));
  if (!io_error && options.load_runtime && runtime != nullptr) {
    // The runtime's own verdict on a broken file is still worth showing: it is what users see.
    auto session = CreateSession(*runtime, options);
    std::vector<Diagnosis> diagnoses;
    if (!session.ok()) {
      Location where;
      where.file = options.model_path.string();
      const bool unavailable = session.error().kind == ErrorKind::kUnavailable;
      if (unavailable) report.failure = ProviderUnavailable(options.provider);
      auto d = unavailable ? TranslateSessionError(session.error(), where)
                           : TranslateRuntimeError(session.error().message, where);
      diagnoses.push_back(std::move(d));
    }
    report.layers.push_back(Finish("runtime", std::move(diagnoses)));
  } else {
    report.layers.push_back(Skipped("runtime", io_error ? reason : "not requested"));
  }
  if (!options.target_ort.empty()) report.layers.push_back(Skipped("target", reason));
}

LayerReport ExternalDataLayer(const ModelFile& model, const std::string& file) {
  auto external = CheckExternalData(model);
  AddFile(external, file);
  const bool has_external = !ListExternalTensors(*model.proto).empty();
  return has_external || !external.empty() ? Finish("external-data", std::move(external))
                                           : Skipped("external-data", "the model stores all tensors inline");
}

// The runtime often refuses for a reason an earlier layer already explained in more detail (e.g.
// graph.opset-too-new): keep one finding per code. Returns the codes of the errors dropped.
std::string DropRepeatedFindings(std::vector<Diagnosis>& diagnoses, const std::vector<LayerReport>& earlier) {
  std::string repeated;
  std::erase_if(diagnoses, [&](const Diagnosis& d) {
    const bool seen = std::any_of(earlier.begin(), earlier.end(), [&](const LayerReport& layer) {
      return std::any_of(layer.diagnoses.begin(), layer.diagnoses.end(),
                         [&](const Diagnosis& e) { return e.code == d.code; });
    });
    if (seen && d.severity == Severity::kError) repeated += (repeated.empty() ? "" : ", ") + d.code;
    return seen;
  });
  return repeated;
}

// Whether ONNX Runtime creates a session for the file, its refusal said once across the layers.
LayerReport RuntimeLayer(Runtime& runtime, const CheckOptions& options, const std::vector<LayerReport>& earlier,
                         std::optional<Error>& failure) {
  auto session = CreateSession(runtime, options);
  std::vector<Diagnosis> diagnoses;
  if (!session.ok()) {
    Location where;
    where.file = options.model_path.string();
    if (session.error().kind == ErrorKind::kUnavailable) failure = ProviderUnavailable(options.provider);
    diagnoses.push_back(TranslateSessionError(session.error(), where));
  }
  const std::string repeated = DropRepeatedFindings(diagnoses, earlier);
  LayerReport layer = Finish("runtime", std::move(diagnoses));
  if (!repeated.empty()) {
    layer.state = LayerReport::State::kFailed;
    layer.note = "ONNX Runtime refuses the model for the reason reported above (" + repeated + ")";
  }
  return layer;
}

}  // namespace

const char* ToString(LayerReport::State state) {
  switch (state) {
    case LayerReport::State::kPassed: return "passed";
    case LayerReport::State::kFailed: return "failed";
    case LayerReport::State::kSkipped: return "skipped";
  }
  return "failed";
}

std::vector<Diagnosis> CheckReport::AllDiagnoses() const {
  std::vector<Diagnosis> all;
  for (const auto& layer : layers) all.insert(all.end(), layer.diagnoses.begin(), layer.diagnoses.end());
  SortBySeverity(all);
  return all;
}

int CheckReport::CountOf(Severity severity) const {
  int n = 0;
  for (const auto& layer : layers) {
    for (const auto& d : layer.diagnoses) n += d.severity == severity;
  }
  return n;
}

bool CheckReport::Passed() const {
  if ((failure && failure->kind == ErrorKind::kIo) || CountOf(Severity::kError) > 0) return false;
  return !strict || CountOf(Severity::kWarning) == 0;
}

CheckReport RunCheck(Runtime* runtime, const CheckOptions& options) {
  CheckReport report;
  report.model_path = options.model_path.string();
  report.provider = options.provider;
  report.strict = options.strict;

  ModelLoad load = LoadModelFile(options.model_path);
  const bool io_error = load.failure && load.failure->kind == ErrorKind::kIo;
  if (io_error) report.failure = load.failure;
  report.layers.push_back(Finish("file", std::move(load.diagnoses)));
  if (!load.model) {
    SkipAfterUnreadableFile(runtime, options, io_error, report);
    return report;
  }
  ModelFile& model = *load.model;
  report.layers.push_back(ExternalDataLayer(model, options.model_path.string()));
  report.layers.push_back(FromOutcome("checker", RunChecker(*model.proto)));

  LintOptions lint;
  if (runtime != nullptr) lint.max_supported_opset = ProbeMaxSupportedOpset(*runtime);
  std::vector<Diagnosis> rules = LintModel(*model.proto, lint);  // before inference: on the model as exported
  report.layers.push_back(FromOutcome("shape-inference", RunShapeInference(*model.proto)));
  report.layers.push_back(Finish("rules", std::move(rules)));
  std::optional<LayerReport> target;
  if (const OrtRelease* release = FindOrtRelease(options.target_ort)) {
    target = Finish("target", CheckTargetRuntime(*model.proto, *release));
  }
  // ONNX Runtime parses the file again into its own graph: free ortkit's copy of the weights
  // first, so that a check holds them once rather than twice (bench/large_model_memory.sh).
  load.model.reset();

  if (options.load_runtime && runtime != nullptr) {
    report.layers.push_back(RuntimeLayer(*runtime, options, report.layers, report.failure));
  } else {
    report.layers.push_back(Skipped("runtime", "not requested"));
  }
  if (target) report.layers.push_back(std::move(*target));
  return report;
}

void to_json(nlohmann::json& json, const LayerReport& layer) {
  json = {{"name", layer.name}, {"state", ToString(layer.state)}, {"diagnoses", layer.diagnoses}};
  if (!layer.skipped_reason.empty()) json["skipped_reason"] = layer.skipped_reason;
  if (!layer.note.empty()) json["note"] = layer.note;
}

void to_json(nlohmann::json& json, const CheckReport& report) {
  json = {{"model", report.model_path},
          {"provider", report.provider},
          {"strict", report.strict},
          {"verdict", report.Passed() ? "pass" : "fail"},
          {"provider_unavailable", report.failure && report.failure->kind == ErrorKind::kUnavailable},
          {"counts",
           {{"error", report.CountOf(Severity::kError)},
            {"warning", report.CountOf(Severity::kWarning)},
            {"info", report.CountOf(Severity::kInfo)}}},
          {"layers", report.layers}};
}

}  // namespace ortkit
