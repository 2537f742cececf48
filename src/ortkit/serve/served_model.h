#pragma once
// One model being served: its instance pool (N sessions and N worker threads; a batch runs on
// whichever instance is idle, on a worker or, without a thread handoff, on the thread of the
// request that found the instance idle), request validation, batch assembly
// (rows of several requests copied once into batched inputs, outputs copied back by rows) and
// its metrics. Used by InferenceCore only.

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ortkit/runtime/repeated_run.h"
#include "ortkit/runtime/run.h"
#include "ortkit/serve/bucketing.h"
#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/metrics.h"
#include "ortkit/serve/scheduler.h"

namespace ortkit::serve {

struct PendingRequest;
struct BatchRows;
struct BatchInputs;
struct BatchOutputs;

class ServedModel {
 public:
  ServedModel(ModelSource source, RequestLimits limits)
      : source_(std::move(source)), version_(std::to_string(source_.version)), limits_(limits) {}
  ~ServedModel();  ///< Stop()
  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;

  /// Creates the sessions (each with `intra_op_threads` when the config says 0), decides
  /// batching and bucketing, warms up and starts the workers. Appends notes for people.
  Status Load(Runtime& runtime, int intra_op_threads, std::vector<std::string>* notes);

  /// Validates and queues; `done` is called exactly once (possibly before Submit returns), see
  /// InferenceCore's Infer and InferLater for the `dispatch` modes.
  void Submit(InferRequest request, InferCallback done, Dispatch dispatch = Dispatch::kWorker);
  /// Runs the due batches on the calling thread while an instance is idle (InferenceCore::RunQueued).
  void RunQueued();

  /// No new requests; the workers answer the queued ones and exit. Joins them. Idempotent.
  void Stop();

  const std::string& name() const { return source_.name; }
  const std::string& version() const { return version_; }  ///< source.version as the protocol writes it
  const std::filesystem::path& path() const { return source_.path; }
  bool ready() const { return ready_.load(); }
  const ModelMetadata& metadata() const { return metadata_; }   ///< valid once ready()
  const ModelConfig& config() const { return source_.config; }  ///< what Load() settled on
  MetricsSample Sample() const;

 private:
  using Queue = BatchQueue<std::shared_ptr<PendingRequest>>;

  // Load's steps, in order.
  Status CreateInstances(Runtime& runtime, int intra_op_threads);
  Status DescribeTensors();  // inputs_, outputs_, their names, symbol_uses_ and metadata_
  Status DecideBatching(const std::map<std::string, ValueHint>& hints, std::vector<std::string>* notes);
  Status DecideBucketing(const std::map<std::string, ValueHint>& hints, std::vector<std::string>* notes);
  void FindTies(const std::map<std::string, ValueHint>& hints, std::vector<std::string>* notes);  // tied_uses_
  Status WarmUp(const std::map<std::string, ValueHint>& hints);
  void StartWorkers();

  // Validate's steps, in order: each fills in more of `pending` from the request.
  Status Validate(const InferRequest& request, PendingRequest* pending) const;
  Status MatchInputs(const InferRequest& request, PendingRequest* pending) const;
  Status CheckSymbolSizes(const PendingRequest& pending) const;
  Status CountRows(PendingRequest* pending) const;  // batchable models only
  Status MatchOutputs(const InferRequest& request, PendingRequest* pending) const;
  Status CheckScheduling(const InferRequest& request) const;  // priority and timeout
  // The answer's size from the output shapes the inputs imply, where the model's dims say them.
  Status CheckPlannedAnswer(const PendingRequest& pending) const;
  // `shapes`: per wanted output (pending.wanted's order), its shape in the answer.
  Status CheckAnswerSize(const PendingRequest& pending, const std::vector<std::vector<std::int64_t>>& shapes) const;
  void PlanBatchShapes(PendingRequest* pending) const;

  void Work();
  void Execute(Queue::Batch& batch);  // expired requests and the batch's rows on its instance
  // Learns from a run of `bytes` of inputs that took `took` which batches the requesting threads
  // may run themselves (io_run_bytes_).
  void NoteRunTime(std::uint64_t bytes, std::chrono::steady_clock::duration took);

  // RunBatch's steps: the rows run as one, then each slice's rows are answered from the outputs.
  void RunBatch(Session& session, std::vector<Queue::Slice>& slices);
  BatchRows TakeRows(const std::vector<Queue::Slice>& slices, TimePoint start);
  Result<InPlaceOutputs> RunRows(Session& session, const std::vector<Queue::Slice>& slices,
                                 const BatchRows& rows) const;
  Status AssembleInputs(const std::vector<Queue::Slice>& slices, const BatchRows& rows, BatchInputs* inputs) const;
  Result<BatchOutputs> CollectOutputs(InPlaceOutputs outputs, const BatchRows& rows) const;
  void AnswerSlice(const Queue::Slice& slice, std::int64_t at, const BatchOutputs& batch);
  // Under the request's lock: its outputs get the slice's rows; true once every row is in (the
  // caller answers), false while rows are missing or when it was answered already.
  Result<bool> WriteSlice(PendingRequest& pending, const Queue::Slice& slice, std::int64_t at,
                          const BatchOutputs& batch) const;
  Status AllocateAnswer(PendingRequest& pending, const Queue::Slice& slice, std::int64_t at,
                        const BatchOutputs& batch) const;  // views of `batch` where they can be
  void Fail(PendingRequest& pending, const Error& error);

  ModelSource source_;
  std::string version_;
  const RequestLimits limits_;
  std::vector<TensorSpec> inputs_;
  std::vector<TensorSpec> outputs_;
  std::vector<const char*> input_names_;   // point into inputs_
  std::vector<const char*> output_names_;  // point into outputs_
  struct DimUse {
    std::size_t input, axis;
  };
  std::vector<std::vector<DimUse>> symbol_uses_;  // per symbolic dimension, where the inputs use it
  // Axes of different names (or none) that the model runs only at equal sizes, found by running at load.
  std::vector<std::vector<DimUse>> tied_uses_;
  // An output dimension as the inputs imply it: fixed, equal to the symbolic dimension `symbol`
  // (an index in symbol_uses_), or neither (-1 both: known only once the model has run).
  struct OutputDim {
    std::int64_t fixed = -1;
    std::ptrdiff_t symbol = -1;
  };
  std::vector<std::vector<OutputDim>> output_dims_;  // per output
  ModelMetadata metadata_;
  bool batchable_ = false;  // rows along axis 0 of every input and output
  bool bucketing_ = false;
  BucketPlan bucket_plan_;
  std::unique_ptr<Queue> queue_;
  std::vector<std::unique_ptr<Session>> instances_;
  std::vector<std::thread> workers_;
  ModelMetrics metrics_;
  // The largest batch (bytes of inputs) that ran within kQuickRun: RunQueued runs at most that much
  // on the requesting thread (an event loop that also answers health probes), the rest on workers.
  std::atomic<std::uint64_t> io_run_bytes_{0};
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace ortkit::serve
