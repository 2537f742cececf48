#include "ortkit/perf/latency.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ortkit::perf {
namespace {

double NearestRank(const std::vector<double>& sorted, double percentile) {
  const auto rank = static_cast<std::size_t>(std::ceil(percentile / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

LatencySummary SummarizeLatencies(std::vector<double> samples_us) {
  LatencySummary summary;
  if (samples_us.empty()) return summary;
  std::sort(samples_us.begin(), samples_us.end());
  summary.count = samples_us.size();
  summary.mean_us = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / static_cast<double>(summary.count);
  summary.min_us = samples_us.front();
  summary.max_us = samples_us.back();
  summary.p50_us = NearestRank(samples_us, 50);
  summary.p90_us = NearestRank(samples_us, 90);
  summary.p95_us = NearestRank(samples_us, 95);
  summary.p99_us = NearestRank(samples_us, 99);
  return summary;
}

}  // namespace ortkit::perf
