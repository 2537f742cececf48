#include "ortkit/serve/inference_core.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/cpus.h"
#include "ortkit/serve/option_range.h"
#include "ortkit/serve/served_model.h"

namespace ortkit::serve {
namespace {

// A byte count as the range check takes it: beyond INT64_MAX it is out of every range anyway.
std::int64_t Clamped(std::uint64_t bytes) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, INT64_MAX));
}

}  // namespace

Status RequestLimits::Validate() const {
  // gRPC's messages stop at 2 GiB.
  return CheckOptionRange("max_answer_bytes", "--max-answer-mb", Clamped(max_answer_bytes), 1, std::int64_t{2047} << 20,
                          "bytes");
}

Status CoreOptions::Validate() const {
  ORTKIT_RETURN_IF_ERROR(limits.Validate());
  if (max_inflight_bytes == 0) return OkStatus();  // no limit
  return CheckOptionRange("max_inflight_bytes", "--max-inflight-bytes", Clamped(max_inflight_bytes),
                          std::int64_t{1} << 20, std::int64_t{1} << 50, "bytes");
}

Result<std::unique_ptr<InferenceCore>> InferenceCore::Create(Runtime& runtime, std::vector<ModelSource> models,
                                                             const CoreOptions& options) {
  if (models.empty()) return MakeError(ErrorKind::kInvalidArgument, "no model to serve");
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  std::set<std::pair<std::string, std::int64_t>> names;
  for (const auto& m : models) {
    if (!names.insert({m.name, m.version}).second) {
      return MakeError(ErrorKind::kInvalidArgument,
                       m.version == 1 ? fmt::format("two models are named '{}'", m.name)
                                      : fmt::format("model '{}' has version {} twice", m.name, m.version));
    }
  }
  // By name, then version: a model's versions side by side, the highest last.
  std::sort(models.begin(), models.end(),
            [](const auto& a, const auto& b) { return std::tie(a.name, a.version) < std::tie(b.name, b.version); });
  std::unique_ptr<InferenceCore> core(new InferenceCore());
  core->runtime_ = &runtime;
  core->options_ = options;
  core->inflight_ = std::make_unique<ByteBudget>(options.max_inflight_bytes);
  for (auto& m : models) core->models_.push_back(std::make_unique<ServedModel>(std::move(m), options.limits));
  return core;
}

InferenceCore::~InferenceCore() { Shutdown(); }

Status InferenceCore::LoadModels() {
  const CpuBudget budget = UsableCpus();
  const int cores = options_.cores > 0 ? options_.cores : budget.cores;
  if (options_.cores <= 0 && budget.cores < budget.affinity) {
    notes_.push_back(fmt::format("sizing intra-op threads to {}", budget.Describe()));
  }
  int instances = 0;
  for (const auto& m : models_) instances += m->config().instances;
  // intra_op_threads 0: share the cores so that instances x threads fit them.
  const int intra = std::max(1, cores / std::max(1, instances));
  int threads = 0;
  for (const auto& m : models_) {
    const int per_instance = m->config().session.intra_op_threads == 0 ? intra : m->config().session.intra_op_threads;
    threads += per_instance * m->config().instances;
  }
  if (threads > cores) {
    notes_.push_back(
        fmt::format("{} instances use {} intra-op threads in all on {} cores: they will compete; lower "
                    "instances or session.intra_op_threads",
                    instances, threads, cores));
  }
  for (auto& m : models_) {
    Status loaded = m->Load(*runtime_, intra, &notes_);
    if (!loaded.ok()) {
      return MakeError(loaded.error().kind, fmt::format("model '{}': {}", m->name(), loaded.error().message));
    }
  }
  ready_ = true;
  return OkStatus();
}

std::vector<std::string> InferenceCore::notes() const { return notes_; }

Result<ServedModel*> InferenceCore::Find(const std::string& name, const std::string& version) const {
  ServedModel* highest = nullptr;
  std::vector<std::string> versions;
  for (const auto& m : models_) {
    if (m->name() != name) continue;
    if (m->version() == version) return m.get();
    highest = m.get();
    versions.push_back(m->version());
  }
  if (highest == nullptr) return MakeError(ErrorKind::kNotFound, fmt::format("unknown model '{}'", name));
  if (version.empty()) return highest;
  return MakeError(ErrorKind::kNotFound,
                   fmt::format("model '{}' has no version '{}' (it serves version{} {})", name, version,
                               versions.size() == 1 ? "" : "s", fmt::join(versions, ", ")));
}

void InferenceCore::Infer(InferRequest request, InferCallback done) {
  auto model = Find(request.model_name, request.model_version);
  if (!model.ok()) {
    done(model.error());
    return;
  }
  (*model)->Submit(std::move(request), std::move(done));
}

std::future<Result<InferResponse>> InferenceCore::Infer(InferRequest request) {
  auto promise = std::make_shared<std::promise<Result<InferResponse>>>();
  auto future = promise->get_future();
  Infer(std::move(request), [promise](Result<InferResponse> result) { promise->set_value(std::move(result)); });
  return future;
}

void InferenceCore::InferLater(InferRequest request, InferCallback done) {
  auto model = Find(request.model_name, request.model_version);
  if (!model.ok()) {
    done(model.error());
    return;
  }
  (*model)->Submit(std::move(request), std::move(done), Dispatch::kLater);
}

void InferenceCore::RunQueued() {
  for (auto& m : models_) m->RunQueued();
}

bool InferenceCore::IsReady() const {
  return ready_ && std::all_of(models_.begin(), models_.end(), [](const auto& m) { return m->ready(); });
}

Result<bool> InferenceCore::IsModelReady(const std::string& name, const std::string& version) const {
  ORTKIT_ASSIGN_OR_RETURN(ServedModel * model, Find(name, version));
  return model->ready();
}

Result<ModelMetadata> InferenceCore::Metadata(const std::string& name, const std::string& version) const {
  ORTKIT_ASSIGN_OR_RETURN(ServedModel * model, Find(name, version));
  if (!model->ready()) return MakeError(ErrorKind::kUnavailable, fmt::format("model '{}' is not ready", name));
  ModelMetadata metadata = model->metadata();
  metadata.versions.clear();
  for (const auto& m : models_) {
    if (m->name() == name) metadata.versions.push_back(m->version());
  }
  return metadata;
}

Result<ModelConfig> InferenceCore::Config(const std::string& name) const {
  ORTKIT_ASSIGN_OR_RETURN(ServedModel * model, Find(name, ""));
  if (!model->ready()) return MakeError(ErrorKind::kUnavailable, fmt::format("model '{}' is not ready", name));
  return model->config();
}

std::vector<std::string> InferenceCore::ModelNames() const {
  std::vector<std::string> names;
  for (const auto& m : models_) {
    if (names.empty() || names.back() != m->name()) names.push_back(m->name());
  }
  return names;
}

std::string InferenceCore::MetricsText() const {
  std::vector<MetricsSample> samples;
  for (const auto& m : models_) samples.push_back(m->Sample());
  return RenderPrometheus(samples) + inflight_->MetricsText();
}

void InferenceCore::Shutdown() {
  ready_ = false;
  for (auto& m : models_) m->Stop();
}

}  // namespace ortkit::serve
