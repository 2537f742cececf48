#include "ortkit/core/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace ortkit {
namespace {

double Median(std::vector<double>& values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

// Quantiles by selection rather than a full sort: the bootstrap computes thousands of them.
double QuantileInPlace(std::vector<double>& values, double q) {
  const double position = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  std::nth_element(values.begin(), values.begin() + below, values.end());
  const double low = values[below];
  if (below + 1 >= values.size()) return low;
  const double high = *std::min_element(values.begin() + below + 1, values.end());
  return low + (high - low) * (position - static_cast<double>(below));
}

double StatisticInPlace(std::vector<double>& values, SampleStatistic statistic) {
  if (values.empty()) return 0;
  switch (statistic) {
    case SampleStatistic::kMean:
      return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    case SampleStatistic::kP50: return QuantileInPlace(values, 50);
    case SampleStatistic::kP90: return QuantileInPlace(values, 90);
    case SampleStatistic::kP99: return QuantileInPlace(values, 99);
  }
  return 0;
}

}  // namespace

double PercentileOfSorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

LatencyStats Summarize(std::span<const double> samples_ms) {
  LatencyStats stats;
  if (samples_ms.empty()) return stats;
  std::vector<double> sorted(samples_ms.begin(), samples_ms.end());
  std::sort(sorted.begin(), sorted.end());
  stats.count = static_cast<std::int64_t>(sorted.size());
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double squares = 0;
    for (double v : sorted) squares += (v - stats.mean) * (v - stats.mean);
    stats.stddev = std::sqrt(squares / static_cast<double>(sorted.size() - 1));
  }
  stats.p50 = PercentileOfSorted(sorted, 50);
  stats.p90 = PercentileOfSorted(sorted, 90);
  stats.p95 = PercentileOfSorted(sorted, 95);
  stats.p99 = PercentileOfSorted(sorted, 99);
  stats.p999 = PercentileOfSorted(sorted, 99.9);
  return stats;
}

double ScaledMad(std::span<const double> samples) {
  if (samples.empty()) return 0;
  std::vector<double> values(samples.begin(), samples.end());
  const double median = Median(values);
  for (double& v : values) v = std::abs(v - median);
  return 1.4826 * Median(values);
}

double ComputeStatistic(std::span<const double> samples, SampleStatistic statistic) {
  if (samples.empty()) return 0;
  std::vector<double> values(samples.begin(), samples.end());
  return StatisticInPlace(values, statistic);
}

RatioInterval BootstrapRatio(std::span<const double> a, std::span<const double> b, SampleStatistic statistic,
                             double confidence, int resamples, std::uint64_t seed) {
  RatioInterval interval;
  if (a.empty() || b.empty()) return interval;
  std::vector<double> scratch_a(a.begin(), a.end());
  std::vector<double> scratch_b(b.begin(), b.end());
  const double value_a = StatisticInPlace(scratch_a, statistic);
  const double value_b = StatisticInPlace(scratch_b, statistic);
  if (value_a <= 0) return interval;
  interval.ratio = value_b / value_a;
  interval.low = interval.high = interval.ratio;

  std::mt19937_64 random(seed);
  auto resampled = [&](std::span<const double> source, std::vector<double>& scratch) {
    std::uniform_int_distribution<std::size_t> pick(0, source.size() - 1);
    for (double& v : scratch) v = source[pick(random)];
    return StatisticInPlace(scratch, statistic);
  };
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(std::max(resamples, 1)));
  for (int i = 0; i < resamples; ++i) {
    const double ra = resampled(a, scratch_a);
    const double rb = resampled(b, scratch_b);
    if (ra > 0) ratios.push_back(rb / ra);
  }
  if (ratios.empty()) return interval;
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2 * 100;
  interval.low = PercentileOfSorted(ratios, tail);
  interval.high = PercentileOfSorted(ratios, 100 - tail);
  return interval;
}

std::vector<double> Thin(std::span<const double> samples, std::size_t limit) {
  if (samples.size() <= limit || limit == 0) return {samples.begin(), samples.end()};
  std::vector<double> kept;
  kept.reserve(limit);
  const double step = static_cast<double>(samples.size()) / static_cast<double>(limit);
  for (std::size_t i = 0; i < limit; ++i)
    kept.push_back(samples[static_cast<std::size_t>(static_cast<double>(i) * step)]);
  return kept;
}

}  // namespace ortkit
