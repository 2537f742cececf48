#pragma once
// Per-model counters and latency histograms, rendered in the Prometheus text format. Updated
// lock-free from the request and instance threads.

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>

namespace ortkit::serve {

/// A cumulative histogram of durations in microseconds, with fixed bucket bounds.
class LatencyHistogram {
 public:
  static constexpr std::array<std::int64_t, 16> kBoundsUs = {
      50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 10000000};
  void Observe(std::int64_t microseconds);
  /// Appends the _bucket/_sum/_count lines of `name` with the label text `labels` ("model=\"encoder\"").
  void Render(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::array<std::atomic<std::uint64_t>, kBoundsUs.size() + 1> buckets_{};  // the last is +Inf
  std::atomic<std::uint64_t> sum_us_{0};
  std::atomic<std::uint64_t> count_{0};
};

struct ModelMetrics {
  std::atomic<std::uint64_t> request_success{0};
  std::atomic<std::uint64_t> request_failure{0};
  std::atomic<std::uint64_t> rejected{0};         ///< of the failures: queue full or shutting down
  std::atomic<std::uint64_t> timed_out{0};        ///< of the failures: deadline passed in the queue
  std::atomic<std::uint64_t> inference_count{0};  ///< rows inferred
  std::atomic<std::uint64_t> execution_count{0};  ///< session runs; inference/execution = average batch size
  LatencyHistogram queue_us;                      ///< enqueue to the start of its first run
  LatencyHistogram compute_us;                    ///< one session run (per execution)
  LatencyHistogram request_us;                    ///< enqueue to answer
};

/// One model's metrics and its queue depth, sampled by the caller.
struct MetricsSample {
  std::string model;
  std::string version;
  const ModelMetrics* metrics = nullptr;
  std::size_t queue_depth = 0;
};

/// The Prometheus text exposition (version 0.0.4) of every model: each family's HELP and TYPE
/// once, then one series per model (labels model and version).
std::string RenderPrometheus(std::span<const MetricsSample> models);

}  // namespace ortkit::serve
