#include "ortkit/serve/inference_core.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/check/check.h"
#include "ortkit/core/cpus.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/serve/model_repository.h"
#include "ortkit/serve/option_range.h"
#include "ortkit/serve/served_model.h"

namespace ortkit::serve {
namespace {

// A byte count as the range check takes it: beyond INT64_MAX it is out of every range anyway.
std::int64_t Clamped(std::uint64_t bytes) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, INT64_MAX));
}

// What a failed load says in the index: ONNX Runtime's refusal as `ortkit check` diagnoses it (its
// code, cause and fix), ortkit's own refusals (bucketing, warm-up) as they are.
std::string DiagnosisOf(const Error& error, const std::filesystem::path& file) {
  if (error.kind != ErrorKind::kRuntime && error.kind != ErrorKind::kInvalidModel) return error.message;
  Location where;
  where.file = file.string();
  const Diagnosis d = TranslateSessionError(error, where);
  return fmt::format("{} [{}]; cause: {}; fix: {}", d.message, d.code, d.cause, d.fix);
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
  if (models.empty() && options.repository.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "no model to serve");
  }
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
  for (auto& m : models) core->models_.push_back(std::make_shared<ServedModel>(std::move(m), options.limits));
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
  intra_op_threads_ = intra;
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

Result<std::shared_ptr<ServedModel>> InferenceCore::Find(const std::string& name, const std::string& version) const {
  std::shared_lock lock(models_mutex_);
  std::shared_ptr<ServedModel> highest;
  std::vector<std::string> versions;
  for (const auto& m : models_) {
    if (m->name() != name) continue;
    if (m->version() == version) return m;
    highest = m;
    versions.push_back(m->version());
  }
  if (highest == nullptr) {
    auto control = control_.find(name);
    if (control != control_.end() && control->second.state == ControlState::kLoading) {
      return MakeError(ErrorKind::kUnavailable, fmt::format("model '{}' is loading", name));
    }
    if (control != control_.end() && control->second.state == ControlState::kFailed) {
      return MakeError(ErrorKind::kUnavailable, fmt::format("model '{}' is not available: its last load failed: {}",
                                                            name, control->second.reason));
    }
    return MakeError(ErrorKind::kNotFound, fmt::format("unknown model '{}'", name));
  }
  if (version.empty()) return highest;
  return MakeError(ErrorKind::kNotFound,
                   fmt::format("model '{}' has no version '{}' (it serves version{} {})", name, version,
                               versions.size() == 1 ? "" : "s", fmt::join(versions, ", ")));
}

std::vector<std::shared_ptr<ServedModel>> InferenceCore::Models() const {
  std::shared_lock lock(models_mutex_);
  return models_;
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
  for (auto& m : Models()) m->RunQueued();
}

bool InferenceCore::IsReady() const {
  const auto models = Models();
  return ready_ && std::all_of(models.begin(), models.end(), [](const auto& m) { return m->ready(); });
}

Result<bool> InferenceCore::IsModelReady(const std::string& name, const std::string& version) const {
  ORTKIT_ASSIGN_OR_RETURN(auto model, Find(name, version));
  return model->ready();
}

Result<ModelMetadata> InferenceCore::Metadata(const std::string& name, const std::string& version) const {
  ORTKIT_ASSIGN_OR_RETURN(auto model, Find(name, version));
  if (!model->ready()) return MakeError(ErrorKind::kUnavailable, fmt::format("model '{}' is not ready", name));
  ModelMetadata metadata = model->metadata();
  metadata.versions.clear();
  for (const auto& m : Models()) {
    if (m->name() == name) metadata.versions.push_back(m->version());
  }
  return metadata;
}

Result<ModelConfig> InferenceCore::Config(const std::string& name) const {
  ORTKIT_ASSIGN_OR_RETURN(auto model, Find(name, ""));
  if (!model->ready()) return MakeError(ErrorKind::kUnavailable, fmt::format("model '{}' is not ready", name));
  return model->config();
}

std::vector<std::string> InferenceCore::ModelNames() const {
  std::vector<std::string> names;
  for (const auto& m : Models()) {
    if (names.empty() || names.back() != m->name()) names.push_back(m->name());
  }
  return names;
}

std::string InferenceCore::MetricsText() const {
  std::vector<MetricsSample> samples;
  const auto models = Models();
  for (const auto& m : models) samples.push_back(m->Sample());
  return RenderPrometheus(samples) + inflight_->MetricsText();
}

void InferenceCore::Shutdown() {
  ready_ = false;
  {
    std::unique_lock lock(models_mutex_);
    shut_down_ = true;  // a load that ends after this stops its copy instead of serving it
  }
  for (auto& m : Models()) m->Stop();
}

void InferenceCore::SetControl(const std::string& name, std::optional<ModelControl> control) {
  std::unique_lock lock(models_mutex_);
  if (control)
    control_[name] = std::move(*control);
  else
    control_.erase(name);
}

Result<std::vector<std::shared_ptr<ServedModel>>> InferenceCore::LoadSources(std::vector<ModelSource> sources) {
  std::vector<std::shared_ptr<ServedModel>> loaded;
  for (auto& source : sources) {
    auto model = std::make_shared<ServedModel>(std::move(source), options_.limits);
    std::vector<std::string> notes;
    Status status = model->Load(*runtime_, intra_op_threads_, &notes);
    if (!status.ok()) {
      model->Stop();
      for (auto& m : loaded) m->Stop();
      return MakeError(status.error().kind, fmt::format("model '{}' version {}: {}", model->name(), model->version(),
                                                        DiagnosisOf(status.error(), model->path())));
    }
    loaded.push_back(std::move(model));
  }
  return loaded;
}

std::vector<std::shared_ptr<ServedModel>> InferenceCore::Swap(const std::string& name,
                                                              std::vector<std::shared_ptr<ServedModel>> loaded) {
  std::unique_lock lock(models_mutex_);
  if (shut_down_) return loaded;  // the caller retires them
  std::vector<std::shared_ptr<ServedModel>> old;
  std::vector<std::shared_ptr<ServedModel>> kept;
  for (auto& m : models_) (m->name() == name ? old : kept).push_back(std::move(m));
  for (auto& m : loaded) kept.push_back(std::move(m));
  // By name, then version (digits: the shorter the lower), as Create sorts them.
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(a->name(), a->version().size(), a->version()) <
           std::make_tuple(b->name(), b->version().size(), b->version());
  });
  models_ = std::move(kept);
  return old;
}

void InferenceCore::Retire(std::vector<std::shared_ptr<ServedModel>> old) {
  for (auto& m : old) {
    // A caller between Find() and Submit() holds a copy: its request must reach the queue before
    // the queue stops, so that the old copy answers it.
    while (m.use_count() > 1) std::this_thread::sleep_for(std::chrono::microseconds(200));
    m->Stop();
    m.reset();  // its sessions are freed here, before the next load needs the memory
  }
}

std::mutex& InferenceCore::LoadMutexOf(const std::string& name) {
  std::lock_guard lock(load_mutexes_mutex_);
  auto& mutex = load_mutexes_[name];
  if (!mutex) mutex = std::make_unique<std::mutex>();
  return *mutex;
}

Status CheckOverrideFiles(const std::map<std::string, std::string>& files) {
  constexpr std::size_t kMostFiles = 64;
  if (files.size() > kMostFiles) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{} file overrides: at most {} per load", files.size(), kMostFiles));
  }
  for (const auto& file : files) {
    const std::string& path = file.first;  // named, not a structured binding: a lambda captures it below
    const auto refuse = [&](std::string_view why) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("parameter \"file:{}\": {}", path, why));
    };
    if (path.empty() || path.front() == '/') return refuse("the path must be relative to the model's folder");
    int depth = 0;
    for (std::size_t start = 0; start <= path.size(); ++depth) {
      const std::size_t end = std::min(path.find('/', start), path.size());
      const std::string name = path.substr(start, end - start);
      if (name.empty() || name.front() == '.') {
        return refuse("no empty, '.', '..' or hidden component: the file must stay inside the model's folder");
      }
      if (!CheckModelName(name).ok()) return refuse("use letters, digits, '_', '-' and '.' in each component");
      start = end + 1;
    }
    if (depth > 4) return refuse("at most 4 components (VERSION/FILE, VERSION/FOLDER/FILE, ...)");
  }
  return OkStatus();
}

std::string UnknownLoadParameter(const std::string& key) {
  return fmt::format(
      "parameter \"{}\" is not one a load takes: \"config\" (a config.json text) and \"file:PATH\" "
      "(a file of the model's folder, \"file:1/model.onnx\")",
      key.substr(0, 200));
}

Result<RepositoryModel> InferenceCore::ModelToLoad(const std::string& name, const LoadRequest& load,
                                                   std::shared_ptr<ScratchFolder>* scratch) const {
  std::vector<std::string> notes;
  std::filesystem::path repository = options_.repository;
  if (!load.files.empty()) {
    ORTKIT_RETURN_IF_ERROR(CheckOverrideFiles(load.files));
    if (!load.config) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "file overrides need the \"config\" parameter too (the model's configuration, \"{}\" "
                       "for the defaults), as Triton's load does");
    }
    ORTKIT_ASSIGN_OR_RETURN(auto folder, ScratchFolder::Create("load"));
    *scratch = std::make_shared<ScratchFolder>(std::move(folder));
    repository = (*scratch)->path();
    for (const auto& [path, bytes] : load.files) {
      const auto file = repository / name / path;
      std::error_code ec;
      std::filesystem::create_directories(file.parent_path(), ec);
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (ec || !out.flush()) {
        return MakeError(ErrorKind::kIo, fmt::format("cannot write the override file:{} into {}: {}", path,
                                                     repository.string(), ec ? ec.message() : "write failed"));
      }
    }
  }
  auto model = ScanRepositoryModel(repository, name, &notes);
  if (!model.ok() && !load.files.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("the file overrides hold no model.onnx for '{}': name them \"file:1/model.onnx\" "
                                 "(VERSION/model.onnx) or \"file:model.onnx\"",
                                 name));
  }
  if (!model.ok()) return model.error();
  if (load.config) {
    auto config = ParseModelConfig(*load.config, "the load request's config");
    if (!config.ok()) return MakeError(ErrorKind::kInvalidArgument, config.error().message);
    config->name = name;
    model->config = std::move(config).value();
  }
  return model;
}

// `ortkit check`'s file, external-data and checker layers on the new files: what would stop ONNX
// Runtime or make it read the wrong bytes, said with its code, cause and fix before a session is made.
Status CheckBeforeLoad(const ModelSource& source) {
  CheckOptions options;
  options.model_path = source.path;
  options.load_runtime = false;
  const CheckReport report = RunCheck(nullptr, options);
  for (const auto& layer : report.layers) {
    if (layer.name != "file" && layer.name != "external-data" && layer.name != "checker") continue;
    for (const auto& d : layer.diagnoses) {
      if (d.severity != Severity::kError) continue;
      return MakeError(ErrorKind::kInvalidModel,
                       fmt::format("model '{}' version {}: ortkit check's {} layer: {} [{}]; cause: {}; fix: {}",
                                   source.name, source.version, layer.name, d.message, d.code, d.cause, d.fix));
    }
    if (layer.state == LayerReport::State::kFailed && !layer.note.empty()) {
      return MakeError(ErrorKind::kInvalidModel, fmt::format("model '{}' version {}: ortkit check's {} layer: {}",
                                                             source.name, source.version, layer.name, layer.note));
    }
  }
  return OkStatus();
}

Status InferenceCore::LoadModel(const std::string& name, const LoadRequest& load) {
  if (options_.polled) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("cannot load model '{}': with --model-control poll the repository's files decide what "
                                 "is served (use --model-control explicit for the load and unload API)",
                                 name));
  }
  return Load(name, load);
}

Status InferenceCore::Load(const std::string& name, const LoadRequest& load) {
  ORTKIT_RETURN_IF_ERROR(CheckModelName(name));
  if (options_.repository.empty() && load.files.empty()) {
    return MakeError(ErrorKind::kNotFound,
                     fmt::format("cannot load model '{}': the server has no --model-repository to load it from", name));
  }
  std::lock_guard control(LoadMutexOf(name));
  if (ShutDown()) return MakeError(ErrorKind::kUnavailable, "the server is shutting down");
  std::shared_ptr<ScratchFolder> scratch;
  ORTKIT_ASSIGN_OR_RETURN(RepositoryModel model, ModelToLoad(name, load, &scratch));
  auto sources = SourcesOfModel(model, options_.overrides);
  if (!sources.ok()) return sources.error();
  const auto fail = [&](const Error& error) {
    SetControl(name, ModelControl{ControlState::kFailed, error.message});
    return error;
  };
  if (options_.check_on_load) {
    for (const auto& source : *sources) {
      if (Status checked = CheckBeforeLoad(source); !checked.ok()) return fail(checked.error());
    }
  }
  SetControl(name, ModelControl{ControlState::kLoading, ""});
  if (options_.reload_policy == ReloadPolicy::kUnloadFirst) {
    Retire(Swap(name, {}));  // requests meanwhile: "model is loading" (503)
    std::unique_lock lock(models_mutex_);
    override_folders_.erase(name);
  }
  auto loaded = LoadSources(std::move(sources).value());
  if (!loaded.ok()) {
    const bool gone = options_.reload_policy == ReloadPolicy::kUnloadFirst;
    return fail(gone ? Error{loaded.error().kind, loaded.error().message +
                                                      " (--reload-policy unload-first: the copy served before "
                                                      "was unloaded first)"}
                     : loaded.error());
  }
  auto old = Swap(name, std::move(loaded).value());
  Retire(std::move(old));
  if (ShutDown()) return MakeError(ErrorKind::kUnavailable, "the server is shutting down");
  {
    std::unique_lock lock(models_mutex_);
    if (scratch)
      override_folders_[name] = std::move(scratch);
    else
      override_folders_.erase(name);
  }
  SetControl(name, std::nullopt);
  return OkStatus();
}

bool InferenceCore::ShutDown() const {
  std::shared_lock lock(models_mutex_);
  return shut_down_;
}

Status InferenceCore::UnloadModel(const std::string& name) {
  if (options_.polled) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("cannot unload model '{}': with --model-control poll the repository's files decide "
                                 "what is served (remove NAME's folder, or use --model-control explicit)",
                                 name));
  }
  return Unload(name);
}

Status InferenceCore::Unload(const std::string& name) {
  std::lock_guard control(LoadMutexOf(name));
  bool served = false;
  for (const auto& m : Models()) served = served || m->name() == name;
  if (!served) {
    std::vector<std::string> notes;
    if (options_.repository.empty() || !ScanRepositoryModel(options_.repository, name, &notes).ok()) {
      return MakeError(ErrorKind::kNotFound, fmt::format("unknown model '{}'", name));
    }
    return OkStatus();
  }
  SetControl(name, ModelControl{ControlState::kUnloading, ""});
  auto old = Swap(name, {});
  Retire(std::move(old));
  {
    std::unique_lock lock(models_mutex_);
    override_folders_.erase(name);
  }
  SetControl(name, ModelControl{ControlState::kUnloaded, "unloaded"});
  return OkStatus();
}

}  // namespace ortkit::serve

namespace ortkit::serve {

std::vector<ModelIndexEntry> InferenceCore::RepositoryIndex(bool ready_only) const {
  std::set<std::string> names;
  if (!options_.repository.empty()) {
    if (auto scan = ScanModelRepository(options_.repository); scan.ok()) {
      for (const auto& m : scan->models) names.insert(m.name);
    }
  }
  std::shared_lock lock(models_mutex_);
  for (const auto& m : models_) names.insert(m->name());
  for (const auto& [name, control] : control_) names.insert(name);
  std::vector<ModelIndexEntry> index;
  for (const auto& name : names) {
    auto found = control_.find(name);
    const ModelControl* control = found == control_.end() ? nullptr : &found->second;
    bool served = false;
    for (const auto& m : models_) {
      if (m->name() != name) continue;
      served = true;
      std::string reason;
      if (control && control->state == ControlState::kFailed) {
        reason = "this copy serves on; the last load failed: " + control->reason;
      } else if (control && control->state == ControlState::kLoading) {
        reason = "this copy serves on while a new one loads";
      }
      index.push_back({name, m->version(), m->ready() ? "READY" : "UNAVAILABLE", std::move(reason)});
    }
    if (served || ready_only) continue;
    if (control == nullptr) {
      index.push_back({name, "", "", ""});  // in the repository, never loaded
      continue;
    }
    constexpr const char* kStates[] = {"LOADING", "UNLOADING", "UNAVAILABLE", "UNAVAILABLE"};
    index.push_back({name, "", kStates[static_cast<int>(control->state)], control->reason});
  }
  if (ready_only) {
    std::erase_if(index, [](const ModelIndexEntry& e) { return e.state != "READY"; });
  }
  return index;
}

}  // namespace ortkit::serve
