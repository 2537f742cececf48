#pragma once
// The saved report of `ortkit bench --format json`: what was measured, with which settings, and the
// raw samples. `bench --compare BASE.json NEW.json` reads two of them back, so this JSON is a
// contract between ortkit versions and with scripts that post-process it: keys are only added.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/bench/run_comparison.h"
#include "ortkit/bench/runner.h"
#include "ortkit/bench/shape_sweep.h"
#include "ortkit/core/result.h"
#include "ortkit/core/sample_stats.h"
#include "ortkit/runtime/profile.h"

namespace ortkit {

/// Samples a saved report keeps per shape: enough for --compare to bootstrap a noise band.
inline constexpr std::size_t kSavedSamples = 10000;

/// The session and measuring settings a report was made with ("config" in the JSON).
struct BenchSettings {
  std::string model;        ///< the model's path as given
  std::string onnxruntime;  ///< Runtime::Version()
  std::string provider = "cpu";
  int intra_op_threads = 0;  ///< 0: the runtime's default
  int inter_op_threads = 0;
  std::string execution_mode = "sequential";
  int optimization_level = 99;
  bool memory_pattern = true;
  bool cpu_arena = true;
  bool io_binding = false;
  int concurrency = 1;
  int sessions = 1;
  std::int64_t warmup = 5;
  unsigned hardware_threads = 0;  ///< the machine's
  int cores = 0;                  ///< the ones this process may use (UsableCpus)
  /// How much each shape was measured: a run count, or a duration as given ("10s"); one of the two.
  std::optional<std::int64_t> iterations;
  std::optional<std::string> duration;
};

/// One input a shape point ran on.
struct PointInput {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string source;  ///< "file x.npy", "synthesised: normal(0, 1)"
};

/// One measured shape point.
struct MeasuredPoint {
  ShapePoint point;
  std::vector<PointInput> inputs;
  /// samples/s relative to the batch-1 point with the other dimensions equal; 0 when there is none
  /// (SetThroughputVsBatchOne).
  double throughput_vs_batch1 = 0;
  BenchResult result;  ///< from a saved report: samples_ms thinned to kSavedSamples, usage without time
};

struct BenchReport {
  BenchSettings settings;
  double session_create_ms = 0;
  std::int64_t peak_rss_bytes = 0;      ///< the process's peak resident set when the report was made
  std::vector<MeasuredPoint> points;    ///< in sweep order
  std::optional<std::string> stopped;   ///< why the sweep ended early
  std::vector<std::string> size_notes;  ///< sizes found by running the model, for people
  /// With --profile. From a saved report, `nodes` holds the 20 top nodes only.
  std::optional<ProfileReport> profile;
  /// With --profile: the `ortkit optimize` command when float products take most of the time
  /// (NextStepFromProfile); else empty.
  std::string next_step;

  /// The JSON that `bench --format json` prints: samples thinned to kSavedSamples per point.
  nlohmann::json ToJson() const;

  /// Reads a saved report back. Only "results" with each result's "label", "samples_ms" and
  /// "runs_per_s" is required (what --compare needs); other keys are read when present and must
  /// then have the type ToJson writes. Errors are kInvalidArgument and say what is missing or wrong
  /// ("a result lacks label, samples_ms or runs_per_s: ..."); the caller prefixes the file name.
  static Result<BenchReport> FromJson(const nlohmann::json& json);
};

/// Sets each point's throughput_vs_batch1. `batch_dim` is the inputs' batch symbol ("" when none):
/// the other dimensions must be equal for a point to be compared with a batch-1 point.
void SetThroughputVsBatchOne(std::vector<MeasuredPoint>& points, const std::string& batch_dim);

/// The points as --compare compares them.
std::vector<ComparablePoint> ComparablePoints(const BenchReport& report);

/// Latency statistics as the reports write them ("p99_9" for the 99.9th percentile).
nlohmann::json LatencyStatsJson(const LatencyStats& stats);

}  // namespace ortkit
