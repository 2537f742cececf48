#pragma once
// The transport-neutral inference API: front ends (HTTP, gRPC) translate their wire format into
// an InferRequest and the answer back, and reach models only through InferenceCore.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/core/scratch_folder.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/serve/byte_budget.h"
#include "ortkit/serve/model_config.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit::serve {

/// The bytes a front end's answer takes for one output named `name`, of `type` and `shape`, as the
/// front end writes it: the values' own bytes (gRPC, binary tensor data) or text of up to several
/// times that (JSON). Saturates rather than wraps. Called on any thread, before the request runs
/// and once its outputs are known.
using AnswerCost =
    std::function<std::uint64_t(std::string_view name, DataType type, std::span<const std::int64_t> shape)>;

struct InferRequest {
  std::string model_name;
  std::string model_version;  ///< empty or "1"
  std::string id;             ///< echoed in the response
  std::vector<NamedTensor> inputs;
  std::vector<std::string> outputs;  ///< empty: every output, in the model's order
  /// 1 is the most urgent .. priority_levels; 0: the lowest level. Wide, so that the front ends
  /// pass any integer on and the core refuses it with one message for HTTP and gRPC alike.
  std::int64_t priority = 0;
  std::int64_t timeout_us = 0;  ///< queue deadline, >= 0; 0: the model's batching.timeout_us
  /// What each output costs the front end to write; null: its values' bytes (see RequestLimits).
  AnswerCost answer_cost;
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<NamedTensor> outputs;
};

/// Called exactly once per request, from whichever thread finishes it (never under a core lock).
using InferCallback = std::function<void(Result<InferResponse>)>;

/// An input or output as the protocol describes it: shape with -1 for dynamic dimensions.
struct TensorMetadata {
  std::string name;
  DataType type = DataType::kUndefined;
  std::vector<std::int64_t> shape;
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions = {"1"};
  std::string platform = "onnxruntime_onnx";
  std::vector<TensorMetadata> inputs;
  std::vector<TensorMetadata> outputs;
};

/// A model to serve: its protocol name and version, its file and its configuration.
struct ModelSource {
  std::string name;
  std::filesystem::path path;
  ModelConfig config;
  std::int64_t version = 1;
};

/// Who runs the batch of a queued request (see InferenceCore's Infer and InferLater).
enum class Dispatch { kWorker, kLater };

/// What one request may ask of the server, whatever its model (docs/commands/serve.md, Limits).
struct RequestLimits {
  /// The most bytes one answer may take as its front end writes it (InferRequest::answer_cost),
  /// checked before the request runs where the model's output shapes follow from its inputs, and
  /// on the outputs before they are answered.
  std::uint64_t max_answer_bytes = std::uint64_t{64} << 20;

  /// kInvalidArgument naming the field, its flag and the range.
  Status Validate() const;
};

enum class ReloadPolicy { kBeside, kUnloadFirst };

struct CoreOptions {
  CoreOptions(int cores = 0) : cores(cores) {}  // NOLINT: CoreOptions{2} reads as "two cores"
  int cores = 0;  ///< cores to share among instances when intra_op_threads is 0; 0: the machine's
  RequestLimits limits;
  /// The bytes of request bodies, inputs and answers the front ends may hold at once (inflight());
  /// 0: no limit. `ortkit serve` derives it from the memory (DefaultInflightBytes).
  std::uint64_t max_inflight_bytes = 0;
  /// The repository folder that LoadModel() reads models from by name (ScanRepositoryModel), with
  /// `overrides` applied to each configuration; empty: models are not loaded by name.
  std::filesystem::path repository;
  ConfigOverrides overrides;
  /// Whether the front ends answer the repository extension's load and unload (--repository-api);
  /// off, they refuse them (HTTP 403, gRPC PERMISSION_DENIED).
  bool repository_api = false;
  /// With repository_api, the key every repository call (index, load, unload) must carry, as Triton's
  /// --http-restricted-api: an HTTP header (gRPC: metadata, its name in lower case) and its value.
  /// Empty name: none.
  std::string repository_key_name;
  std::string repository_key_value;
  /// How a reload makes room for the new copy (--reload-policy): kBeside loads it beside the served one and
  /// swaps it in (no request refused, twice the memory for the while); kUnloadFirst unloads the served copy
  /// first (requests are refused as loading until the new one is ready), for a machine that cannot hold two.
  ReloadPolicy reload_policy = ReloadPolicy::kBeside;
  /// Whether LoadModel() runs `ortkit check`'s layers on the new files (file, external data, the ONNX
  /// checker) before it creates a session, and refuses them on an error there (--no-check-on-load: off).
  bool check_on_load = true;
  /// --model-control poll: the repository's files decide what is served, and the API's load and unload are
  /// refused as Triton refuses them in that mode.
  bool polled = false;

  /// kInvalidArgument naming the field, its flag and the range.
  Status Validate() const;
};

/// One row of the repository index, as Triton's extension writes it: a model that was never
/// loaded has its name only; state is READY, UNAVAILABLE, LOADING or UNLOADING.
struct ModelIndexEntry {
  std::string name;
  std::string version;
  std::string state;
  std::string reason;
};

class ServedModel;
struct RepositoryModel;

/// What a load request brings besides the model's name (the repository extension's parameters).
struct LoadRequest {
  std::optional<std::string> config;  ///< a config.json text used instead of NAME/config.json
  /// "file:PATH" overrides, PATH relative to the model's folder ("1/model.onnx") -> its bytes. When there is
  /// one, the model is loaded from these files alone (Triton's contract), written to a private scratch
  /// folder, and `config` must be given.
  std::map<std::string, std::string> files;
};

/// Checks the PATH of each `files` entry of a load: relative, inside the model's folder ("1/model.onnx",
/// "config.json"), components of letters, digits, '_', '-' and '.', not hidden, at most 4 deep; at most
/// 64 files. kInvalidArgument naming the parameter and the rule.
Status CheckOverrideFiles(const std::map<std::string, std::string>& files);

/// The refusal of a load parameter that is neither "config" nor "file:PATH" (a file override missing its
/// prefix would otherwise be dropped in silence), naming it.
std::string UnknownLoadParameter(const std::string& key);

/// Serves a set of models that LoadModel() and UnloadModel() change while requests run.
/// Thread-safe; every method may be called from any thread.
///
/// A reload loads and warms up the new copy beside the old one, then swaps it in under the models'
/// lock; requests already handed to the old copy (queued or running) are answered by it before it
/// stops, and it stops only once no caller still holds it (Infer between its look-up and its
/// Submit), so that no request is refused by a swap.
class InferenceCore {
 public:
  /// Checks the sources (unique names) without loading anything: the server can answer liveness
  /// probes while LoadModels() runs. `runtime` must outlive the core. No source is an error unless
  /// options.repository names a folder to load models from later.
  static Result<std::unique_ptr<InferenceCore>> Create(Runtime& runtime, std::vector<ModelSource> models,
                                                       const CoreOptions& options);
  ~InferenceCore();  ///< Shutdown()
  InferenceCore(const InferenceCore&) = delete;
  InferenceCore& operator=(const InferenceCore&) = delete;

  /// Creates each model's sessions, verifies bucketing, warms every instance up on the configured
  /// shapes and starts its workers. The server is ready once this succeeds. The first failure is
  /// returned with the model's name. Call once.
  Status LoadModels();
  /// What loading decided that a person should know (batching turned off for a model, ...).
  std::vector<std::string> notes() const;

  /// Loads every version that NAME's configuration selects from options.repository, with
  /// `config_json` (a config.json text, docs/serving.md) instead of NAME/config.json when given;
  /// warms them up, then swaps them in for the versions served now, which finish what they hold.
  /// While it runs the index says LOADING; a failure leaves the served versions serving and puts
  /// the error in the index's reason. Loads run one at a time. kNotFound: no such model in the
  /// repository (or no repository); kInvalidArgument: the config does not parse or validate; a
  /// failed load's own error (kInvalidModel, kRuntime, ...) with the model and version named.
  ///
  /// With `load.files` the model is loaded from those files alone (see LoadRequest), kept in a scratch folder
  /// while that copy serves. Loads of different models run side by side: one that hangs or fails does not
  /// hold another back. With CoreOptions::polled, kInvalidArgument (the files decide, as in Triton's poll mode).
  Status LoadModel(const std::string& name, const LoadRequest& load);
  Status LoadModel(const std::string& name, const std::optional<std::string>& config_json = std::nullopt) {
    return LoadModel(name, LoadRequest{config_json, {}});
  }
  /// LoadModel() as the repository poller calls it: not refused in poll mode.
  Status ReloadFromRepository(const std::string& name) { return Load(name, LoadRequest{}); }
  /// Stops serving every version of NAME once what it holds is answered (UNLOADING, then
  /// UNAVAILABLE "unloaded"). kNotFound when NAME is neither served nor in the repository; a model
  /// of the repository that is not served unloads as a no-op (Triton's contract).
  Status UnloadModel(const std::string& name);
  /// UnloadModel() as the repository poller calls it: not refused in poll mode.
  Status UnloadFromRepository(const std::string& name) { return Unload(name); }
  /// Every model of the repository and every served one, by name then version; `ready_only`: the
  /// READY rows only.
  std::vector<ModelIndexEntry> RepositoryIndex(bool ready_only) const;
  bool repository_api() const { return options_.repository_api; }
  const std::string& repository_key_name() const { return options_.repository_key_name; }
  /// Whether a repository call carrying `value` for repository_key_name() (none: nullptr) may go on.
  bool RepositoryKeyAccepts(const std::string* value) const {
    return options_.repository_key_name.empty() || (value != nullptr && *value == options_.repository_key_value);
  }

  /// Queues `request`; `done` receives the outputs or the error: kNotFound (unknown model or
  /// version), kInvalidArgument (inputs do not fit the model), kUnavailable (not ready, queue
  /// full, shutting down, deadline passed), kRuntime (the session failed). Never blocks on a run.
  void Infer(InferRequest request, InferCallback done);
  std::future<Result<InferResponse>> Infer(InferRequest request);
  /// For an event loop that reads many requests per wake-up: queues without waking a worker; the
  /// caller then calls RunQueued(), which runs what is due on its thread. Under load a whole
  /// round of requests then becomes one batch and nobody switches threads.
  void InferLater(InferRequest request, InferCallback done);
  /// Runs, on the calling thread, the due batches of each model while it has an idle instance
  /// (their `done` callbacks run here too); what must wait for its delay is left to a worker, and
  /// so are batches larger than the model has run within 2 ms before and whatever is due after
  /// 2 ms of this call: an event loop calling it stays responsive whatever a request asks.
  void RunQueued();

  bool IsLive() const { return true; }
  bool IsReady() const;
  /// kNotFound for an unknown model or version.
  Result<bool> IsModelReady(const std::string& name, const std::string& version) const;
  /// kNotFound for an unknown model or version; kUnavailable before the model is loaded.
  Result<ModelMetadata> Metadata(const std::string& name, const std::string& version) const;
  /// The configuration in effect (after what loading decided), kNotFound for an unknown model.
  Result<ModelConfig> Config(const std::string& name) const;
  std::vector<std::string> ModelNames() const;

  /// Prometheus text exposition of every model's metrics, and of inflight().
  std::string MetricsText() const;

  /// What the front ends hold of CoreOptions::max_inflight_bytes: each request reserves its body,
  /// then its inputs, then its answer, until the answer is sent.
  ByteBudget& inflight() { return *inflight_; }

  /// Stops accepting requests, answers every queued one, and joins the workers. Idempotent.
  void Shutdown();

 private:
  // What a model's last load or unload left, for the index; absent: READY when served, else
  // never loaded.
  enum class ControlState { kLoading, kUnloading, kFailed, kUnloaded };
  struct ModelControl {
    ControlState state = ControlState::kLoading;
    std::string reason;
  };

  InferenceCore() = default;
  Result<std::shared_ptr<ServedModel>> Find(const std::string& name, const std::string& version) const;
  std::vector<std::shared_ptr<ServedModel>> Models() const;  // a copy, under the lock
  void SetControl(const std::string& name, std::optional<ModelControl> control);
  // Loads `sources` into new models; the first failure (the ones built so far stopped).
  Result<std::vector<std::shared_ptr<ServedModel>>> LoadSources(std::vector<ModelSource> sources);
  // Replaces NAME's served versions with `loaded` (none: unload), and returns the old ones; after
  // Shutdown() it changes nothing and returns `loaded`.
  std::vector<std::shared_ptr<ServedModel>> Swap(const std::string& name,
                                                 std::vector<std::shared_ptr<ServedModel>> loaded);
  // Waits until no caller holds each of `old` but this one, then stops it (its queue answered).
  static void Retire(std::vector<std::shared_ptr<ServedModel>> old);
  bool ShutDown() const;  // Shutdown() was called
  Status Load(const std::string& name, const LoadRequest& load);
  Status Unload(const std::string& name);
  std::mutex& LoadMutexOf(const std::string& name);  // one load or unload of a model at a time
  // NAME's model as LoadModel reads it: from the repository, or from `load.files` written to a scratch folder
  // (stored in `scratch`).
  Result<RepositoryModel> ModelToLoad(const std::string& name, const LoadRequest& load,
                                      std::shared_ptr<ScratchFolder>* scratch) const;

  Runtime* runtime_ = nullptr;
  CoreOptions options_;
  int intra_op_threads_ = 1;  // per instance where a config says 0, decided by LoadModels
  mutable std::shared_mutex models_mutex_;
  std::vector<std::shared_ptr<ServedModel>> models_;  // by name, then version; guarded by models_mutex_
  std::map<std::string, ModelControl> control_;       // guarded by models_mutex_
  bool shut_down_ = false;                            // guarded by models_mutex_
  std::mutex load_mutexes_mutex_;
  std::map<std::string, std::unique_ptr<std::mutex>> load_mutexes_;  // by model; guarded by load_mutexes_mutex_
  // The scratch folders of the served copies loaded from file overrides, by model; guarded by models_mutex_.
  std::map<std::string, std::shared_ptr<ScratchFolder>> override_folders_;
  std::unique_ptr<ByteBudget> inflight_;
  std::vector<std::string> notes_;  // written by LoadModels only
  std::atomic<bool> ready_{false};
};

}  // namespace ortkit::serve
