#pragma once
// The tuner: sweeps session options (intra/inter-op threads, execution mode), batch size and
// instance count within a time budget, and picks the configuration with the highest throughput
// whose p99 latency stays within a latency budget. It recommends serving settings as data
// (ServingRecommendation); `ortkit bench --tune` turns them into the serving configuration that
// `ortkit serve` reads (serve sits above bench, so its types are not known here).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/bench/shape_sweep.h"
#include "ortkit/core/result.h"
#include "ortkit/core/sample_stats.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// One configuration to measure.
struct TuneCandidate {
  int intra_op_threads = 1;
  int inter_op_threads = 1;
  bool parallel = false;  ///< execution mode
  int instances = 1;      ///< sessions, each called by one thread
  std::int64_t batch = 1;

  /// "intra 2, inter 1, sequential, 1 instance, batch 8"
  std::string Describe() const;
};

/// What the sweep may vary.
struct TuneSpace {
  int cores = 1;                      ///< cores this process may use (UsableCpus), spread over instances × threads
  std::vector<std::int64_t> batches;  ///< ascending
  int max_instances = 4;
  bool try_parallel = true;  ///< parallel execution mode with 2 inter-op threads
};

/// The candidates for `space`: intra threads in powers of two up to the cores (and the core count
/// itself), sequential and (with try_parallel and at least two cores) parallel mode with two
/// inter-op threads, instances while instances × intra × inter threads fit the cores, and every
/// batch. Ordered session
/// configuration by configuration, batches ascending within each.
std::vector<TuneCandidate> TuneCandidates(const TuneSpace& space);

struct TuneMeasurement {
  TuneCandidate candidate;
  bool measured = false;
  LatencyStats latency;
  double runs_per_s = 0;
  double samples_per_s = 0;
  double cpu_utilisation = 0;
  std::string note;  ///< why it was not measured, or why it failed
};

/// The index of the measured candidate with the highest samples/s whose p99 is within
/// `latency_budget_ms` (ties: fewer threads, then smaller batch); nullopt when none is.
std::optional<std::size_t> PickBest(const std::vector<TuneMeasurement>& measurements, double latency_budget_ms);

struct TuneOptions {
  double latency_budget_ms = 50;
  double time_budget_s = 60;  ///< for the whole sweep, session creation included
  TuneSpace space;
  SessionConfig base;  ///< provider, optimisation level, memory options; threads and mode are swept
  std::int64_t warmup = 3;
  /// Called after each measurement with the number done and the total.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

struct TuneReport {
  std::vector<TuneMeasurement> measurements;  ///< in candidate order
  std::optional<std::size_t> best;            ///< index into measurements
  double latency_budget_ms = 0;
  double elapsed_s = 0;
};

/// The one workload the tuner measures at every batch size.
struct TuneWorkload {
  std::string batch_dim;                           ///< the inputs' batch symbol; "" when they have none
  std::vector<std::int64_t> batches;               ///< ascending, at least one
  ShapePoint first;                                ///< the smallest batch, as a shape point
  std::map<std::string, std::int64_t> other_dims;  ///< the sizes of the swept non-batch dimensions

  /// The workload at `batch`: other_dims, and the batch dimension (when there is one) at `batch`.
  ShapePoint AtBatch(std::int64_t batch) const;
};

/// The workload for inputs `named_inputs` (NameUnnamedAxes): `batches` sorted (by default 1, 2, 4,
/// 8, 16, 32 when the inputs have a batch dimension, else the model's own), and every --dim sweep
/// at its first size. Fails as ExpandShapePoints does.
Result<TuneWorkload> PlanTuneWorkload(const std::vector<TensorSpec>& named_inputs, std::vector<std::int64_t> batches,
                                      const std::vector<SweepAxis>& sweeps);

/// Inputs for a batch size (the caller synthesises them for the model's other dimensions).
using InputsForBatch = std::function<Result<std::vector<NamedTensor>>(std::int64_t batch)>;

/// Runs the sweep on `model`. A candidate whose median exceeds the latency budget ends the larger
/// batches of its session configuration (they would only be slower per run); when the time
/// budget runs out, the rest are listed unmeasured. Fails when no candidate can be measured
/// at all (the model does not load, or inputs cannot be made).
Result<TuneReport> Tune(Runtime& runtime, const std::filesystem::path& model, const InputsForBatch& inputs_for_batch,
                        const TuneOptions& options);

/// The serving settings recommended for a report's best candidate.
struct ServingRecommendation {
  TuneCandidate candidate;          ///< instances, threads and execution mode, and the batch size measured
  bool batching = false;            ///< whether to batch requests: the best batch is above 1
  std::int64_t max_batch_size = 0;  ///< the best batch when batching, else 0
  /// Half of the latency the budget leaves beyond the measured p99, so that a full batch still meets
  /// the budget; never less than 100 us, never more than 10 ms.
  std::int64_t max_queue_delay_us = 0;
  /// Ascending: half the batch when that is above 1, and the batch; empty when not batching.
  std::vector<std::int64_t> preferred_batch_sizes;
  /// Shapes to warm up: the batch dimension at 1 and the batch, the other dimensions as measured.
  std::map<std::string, std::vector<std::int64_t>> warmup_dims;
};

/// The recommendation for the report's best candidate; nullopt when nothing fit the budget.
/// `batch_dim` names the batch dimension in warmup_dims; `other_dims` are the sizes of the
/// non-batch dimensions the tuner measured with.
std::optional<ServingRecommendation> RecommendServing(const TuneReport& report, const std::string& batch_dim,
                                                      const std::map<std::string, std::int64_t>& other_dims);

/// Why the best candidate was chosen, with every candidate's figures: the "tuning" object written
/// beside the serving configuration for people (the server skips it). Empty object when nothing fit.
nlohmann::json TuningExplanationJson(const TuneReport& report, const TuneOptions& options);

/// The recommendation in the serving configuration's JSON keys with TuningExplanationJson as
/// "tuning"; empty object when nothing fit. For callers that do not link serve (bench's unit test);
/// `ortkit bench --tune` writes serve's own ModelConfig instead, and the two must stay in step.
nlohmann::json ServingConfigJson(const TuneReport& report, const TuneOptions& options, const std::string& name,
                                 const std::string& batch_dim, const std::map<std::string, std::int64_t>& other_dims);

}  // namespace ortkit
