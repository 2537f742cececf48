#pragma once
// Comparing two benchmark runs: the ratio of each figure with a noise band bootstrapped from the
// saved latency samples, and a verdict that a CI gate can act on.

#include <string>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit {

/// One measured shape of a saved report, as comparison needs it.
struct ComparablePoint {
  std::string label;               ///< matches points between the two runs ("batch=8 seq_len=64")
  std::vector<double> samples_ms;  ///< the raw (possibly thinned) latency samples
  double runs_per_s = 0;
};

enum class ChangeVerdict { kFaster, kSlower, kWithinNoise };
const char* ToString(ChangeVerdict verdict);  ///< "faster", "slower", "within noise"

struct FigureComparison {
  std::string figure;  ///< "p50 latency", "p90 latency", "p99 latency", "mean latency", "throughput"
  double base = 0;
  double candidate = 0;
  double ratio = 1;  ///< candidate / base
  double low = 1;    ///< the noise band: a 95% bootstrap interval of the ratio
  double high = 1;
  bool gates = false;  ///< whether this figure decides the point's verdict
  ChangeVerdict verdict = ChangeVerdict::kWithinNoise;
};

struct PointComparison {
  std::string label;
  std::vector<FigureComparison> figures;
  /// Slower if a gating figure is slower; else faster if one is faster; else within noise.
  ChangeVerdict verdict = ChangeVerdict::kWithinNoise;
};

struct CompareOptions {
  /// Changes smaller than this fraction are within noise even when the band excludes 1: on a
  /// shared machine a real 1% effect is not worth failing a build for.
  double min_change = 0.02;
  int resamples = 1000;
};

struct RunComparison {
  std::vector<PointComparison> points;
  std::vector<std::string> unmatched;                   ///< labels present in only one of the runs
  ChangeVerdict verdict = ChangeVerdict::kWithinNoise;  ///< slower if any point is; else faster if any is
};

/// Compares `candidate` with `base` point by point (matched by label). The median latency and
/// throughput gate the verdict; p90/p99 are reported with their bands but tail percentiles of
/// short runs are too noisy to fail a build on. Throughput's band is the mean latency's, inverted.
/// Fails with kInvalidArgument when no label matches or a point has no samples.
Result<RunComparison> CompareRuns(const std::vector<ComparablePoint>& base,
                                  const std::vector<ComparablePoint>& candidate, const CompareOptions& options);

}  // namespace ortkit
