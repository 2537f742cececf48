#include "ortkit/serve/metrics.h"

#include <fmt/format.h>

namespace ortkit::serve {
namespace {

struct CounterFamily {
  const char* name;
  const char* help;
  std::atomic<std::uint64_t> ModelMetrics::*field;
};

constexpr CounterFamily kCounters[] = {
    {"ortkit_request_success_total", "Inference requests answered successfully", &ModelMetrics::request_success},
    {"ortkit_request_failure_total", "Inference requests answered with an error", &ModelMetrics::request_failure},
    {"ortkit_request_rejected_total", "Requests rejected at once because the queue was full or the server stopping",
     &ModelMetrics::rejected},
    {"ortkit_request_timeout_total", "Requests whose deadline passed while they were queued", &ModelMetrics::timed_out},
    {"ortkit_inference_count_total", "Rows inferred (a request of N rows counts N)", &ModelMetrics::inference_count},
    {"ortkit_execution_count_total", "Session runs; inference_count / execution_count is the average batch size",
     &ModelMetrics::execution_count},
    // Triton's names for the same counters, so that tools written for Triton read ours.
    {"nv_inference_request_success", "Same as ortkit_request_success_total", &ModelMetrics::request_success},
    {"nv_inference_request_failure", "Same as ortkit_request_failure_total", &ModelMetrics::request_failure},
    {"nv_inference_count", "Same as ortkit_inference_count_total", &ModelMetrics::inference_count},
    {"nv_inference_exec_count", "Same as ortkit_execution_count_total", &ModelMetrics::execution_count},
};

struct HistogramFamily {
  const char* name;
  const char* help;
  LatencyHistogram ModelMetrics::*field;
};

constexpr HistogramFamily kHistograms[] = {
    {"ortkit_queue_duration_us", "Microseconds from arrival to the start of the request's first run",
     &ModelMetrics::queue_us},
    {"ortkit_compute_duration_us", "Microseconds of one session run (per execution)", &ModelMetrics::compute_us},
    {"ortkit_request_duration_us", "Microseconds from arrival to the answer", &ModelMetrics::request_us},
};

std::string Labels(const MetricsSample& m) { return fmt::format("model=\"{}\",version=\"{}\"", m.model, m.version); }

}  // namespace

void LatencyHistogram::Observe(std::int64_t microseconds) {
  if (microseconds < 0) microseconds = 0;
  std::size_t i = 0;
  while (i < kBoundsUs.size() && microseconds > kBoundsUs[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(static_cast<std::uint64_t>(microseconds), std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void LatencyHistogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kBoundsUs.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    *out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, kBoundsUs[i], cumulative);
  }
  cumulative += buckets_.back().load(std::memory_order_relaxed);
  *out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, cumulative);
  *out += fmt::format("{}_sum{{{}}} {}\n", name, labels, sum_us_.load(std::memory_order_relaxed));
  *out += fmt::format("{}_count{{{}}} {}\n", name, labels, count_.load(std::memory_order_relaxed));
}

std::string RenderPrometheus(std::span<const MetricsSample> models) {
  std::string out;
  for (const auto& family : kCounters) {
    out += fmt::format("# HELP {} {}\n# TYPE {} counter\n", family.name, family.help, family.name);
    for (const auto& m : models) {
      out += fmt::format("{}{{{}}} {}\n", family.name, Labels(m),
                         (m.metrics->*family.field).load(std::memory_order_relaxed));
    }
  }
  out += "# HELP ortkit_queue_depth Requests waiting in the model's queue\n# TYPE ortkit_queue_depth gauge\n";
  for (const auto& m : models) out += fmt::format("ortkit_queue_depth{{{}}} {}\n", Labels(m), m.queue_depth);
  for (const auto& family : kHistograms) {
    out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", family.name, family.help, family.name);
    for (const auto& m : models) (m.metrics->*family.field).Render(family.name, Labels(m), &out);
  }
  return out;
}

}  // namespace ortkit::serve
