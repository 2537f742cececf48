#pragma once
// The tuner: sweeps session options (intra/inter-op threads, execution mode), batch size and
// instance count within a time budget, and picks the configuration with the highest throughput
// whose p99 latency stays within a latency budget. The choice is written as the serving
// configuration that `ortkit serve` reads.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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

/// Inputs for a batch size (the caller synthesises them for the model's other dimensions).
using InputsForBatch = std::function<Result<std::vector<NamedTensor>>(std::int64_t batch)>;

/// Runs the sweep on `model`. A candidate whose median exceeds the latency budget ends the larger
/// batches of its session configuration (they would only be slower per run); when the time
/// budget runs out, the rest are listed unmeasured. Fails when no candidate can be measured
/// at all (the model does not load, or inputs cannot be made).
Result<TuneReport> Tune(Runtime& runtime, const std::filesystem::path& model, const InputsForBatch& inputs_for_batch,
                        const TuneOptions& options);

/// The serving configuration (docs: serving config schema) for the report's best candidate,
/// with a "tuning" object explaining the choice. `name` is the model's name in the protocol;
/// `other_dims` the sizes of non-batch dimensions measured with (for the warm-up section).
nlohmann::json ServingConfigJson(const TuneReport& report, const TuneOptions& options, const std::string& name,
                                 const std::string& batch_dim, const std::map<std::string, std::int64_t>& other_dims);

}  // namespace ortkit
