#pragma once
// Latency statistics computed after the run from the raw samples, and the noise of a median
// estimated from them (for comparing two runs).

#include <cstdint>
#include <span>
#include <vector>

namespace ortkit {

/// Summary of latency samples, in milliseconds. Percentiles interpolate linearly between the
/// two nearest order statistics (numpy's default), so they match a numpy.percentile of the same
/// samples.
struct LatencyStats {
  std::int64_t count = 0;
  double min = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;
  double stddev = 0;  ///< sample standard deviation (n - 1); 0 for fewer than two samples
};

/// All zeros for no samples.
LatencyStats Summarize(std::span<const double> samples_ms);

/// The `q`-th percentile (0..100) of `sorted` (ascending), linearly interpolated; 0 when empty.
double PercentileOfSorted(std::span<const double> sorted, double q);

/// Median absolute deviation scaled by 1.4826, so that it estimates the standard deviation of
/// normal samples while ignoring outliers.
double ScaledMad(std::span<const double> samples);

/// A statistic of a sample set that a comparison bootstraps.
enum class SampleStatistic { kMean, kP50, kP90, kP99 };

/// The statistic computed on `samples` (any order); 0 when empty.
double ComputeStatistic(std::span<const double> samples, SampleStatistic statistic);

/// A two-sided interval for the ratio statistic(b) / statistic(a), from `resamples` bootstrap
/// resamples of both sample sets. Deterministic for a given `seed`.
struct RatioInterval {
  double ratio = 1;  ///< statistic(b) / statistic(a) of the samples themselves
  double low = 1;
  double high = 1;
};
RatioInterval BootstrapRatio(std::span<const double> a, std::span<const double> b, SampleStatistic statistic,
                             double confidence = 0.95, int resamples = 1000, std::uint64_t seed = 1);

/// At most `limit` samples, evenly spaced over `samples` (every one when there are fewer, or
/// when `limit` is 0):
/// what a saved report keeps so that a later comparison can estimate the noise.
std::vector<double> Thin(std::span<const double> samples, std::size_t limit);

}  // namespace ortkit
