#pragma once
// Latency percentiles from raw samples, computed after the run (samples are kept, never binned).

#include <vector>

namespace ortkit::perf {

struct LatencySummary {
  std::size_t count = 0;
  double mean_us = 0;
  double min_us = 0;
  double max_us = 0;
  double p50_us = 0;
  double p90_us = 0;
  double p95_us = 0;
  double p99_us = 0;
};

/// Percentiles by the nearest-rank method (p99 of 100 samples is the 99th smallest). All zero
/// when `samples_us` is empty. Takes the samples by value because it sorts them.
LatencySummary SummarizeLatencies(std::vector<double> samples_us);

}  // namespace ortkit::perf
