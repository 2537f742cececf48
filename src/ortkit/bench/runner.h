#pragma once
// The benchmark runner: times Session::Run the way perftest does. Inputs are wrapped once,
// outside the timed region; warm-up runs are separate; every measured run's latency is kept and
// percentiles are computed afterwards. Fixed-count or fixed-duration; K threads per session.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/core/sample_stats.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

struct BenchOptions {
  static constexpr std::int64_t kMostIterations = 10'000'000;
  static constexpr std::int64_t kMostWarmup = 1'000'000;

  /// Measured runs in total, over all threads and sessions. Used when duration_s is 0.
  std::int64_t iterations = 100;
  /// > 0: measure for this many seconds instead of a count (each thread from its own start).
  double duration_s = 0;
  /// Untimed runs on each session before measuring, after its first run (which is always made,
  /// and on the first session timed as first_run_ms).
  std::int64_t warmup = 5;
  /// Threads calling Run on each session at the same time, the way a server would.
  int concurrency = 1;
  /// Bind inputs and outputs once (Ort::IoBinding) and run the binding; outputs are preallocated
  /// with the shapes of the first run.
  bool io_binding = false;
  /// Rows each Run processes (the batch size): turns runs/s into samples/s.
  std::int64_t rows_per_run = 1;
  /// Called from the calling thread while measuring, with the fraction done (0..1), about ten
  /// times a second. Must not block for long: measuring threads keep running meanwhile.
  std::function<void(double fraction)> progress;

  /// Each field in its range (kInvalidArgument naming it): at most 10^7 runs (their times are kept, 8
  /// bytes each), a day of measuring, 10^6 warm-up runs, 1024 threads.
  Status Validate() const;
};

/// Process resources over the measuring phase (getrusage).
struct ResourceUsage {
  std::int64_t peak_rss_bytes = 0;  ///< the process's peak resident set so far (ru_maxrss)
  double cpu_seconds = 0;           ///< user + system CPU time spent while measuring
  double cpu_utilisation = 0;       ///< cpu_seconds / wall seconds: 1.0 is one core busy throughout
};

struct BenchResult {
  /// Every measured Run in milliseconds, thread after thread, each in completion order.
  std::vector<double> samples_ms;
  LatencyStats latency;      ///< Summarize(samples_ms)
  double first_run_ms = 0;   ///< the first Run on the first session (warm-up; includes lazy initialisation)
  double wall_s = 0;         ///< measuring phase, first thread start to last thread end
  std::int64_t runs = 0;     ///< samples_ms.size()
  double runs_per_s = 0;     ///< runs / wall_s: all threads together
  double samples_per_s = 0;  ///< runs_per_s * rows_per_run
  int sessions = 1;
  int concurrency = 1;
  ResourceUsage usage;
  /// Set when a Run failed after measuring had begun: the figures above cover the runs that
  /// completed before it, and this says why the run stopped.
  std::optional<Error> failure;
};

/// Benchmarks `session` on `inputs` (checked against the session's inputs first). The inputs
/// must outlive the call; the runtime reads them in place. Fails with kInvalidArgument for bad
/// options or inputs the session rejects, with kRuntime when the first run fails; a failure
/// after measuring began is reported in BenchResult::failure instead. Thread-safe as
/// Session::Run is: several benchmarks may share a session, though they then measure each other.
Result<BenchResult> RunBenchmark(Session& session, const std::vector<NamedTensor>& inputs, const BenchOptions& options);

/// The same over several sessions of one model (serving instances): options.concurrency threads
/// on each session, all measured together.
Result<BenchResult> RunBenchmark(std::span<Session* const> sessions, const std::vector<NamedTensor>& inputs,
                                 const BenchOptions& options);

/// Peak resident set of this process so far, in bytes (getrusage ru_maxrss).
std::int64_t PeakResidentBytes();

}  // namespace ortkit
