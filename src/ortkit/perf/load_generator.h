#pragma once
// The load generator behind `ortkit perf`, in the style of perf_analyzer: steps of fixed
// concurrency (closed loop: each of N connections sends its next request when the last one is
// answered) or of fixed request rate (open loop: requests leave on a schedule, evenly spaced or
// Poisson, whether or not earlier ones were answered). Requests are encoded before the timed
// region; raw latencies are kept and summarised afterwards.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/core/sample_stats.h"
#include "ortkit/perf/infer_client.h"
#include "ortkit/perf/lengths.h"

namespace ortkit::perf {

struct LoadOptions {
  /// Connections one step may open: each is a socket (and, over gRPC, a thread).
  static constexpr int kMostConnections = 4096;
  /// Requests per second one perf process can schedule; past it, run several.
  static constexpr double kMostRate = 100'000;
  /// Seconds a step may measure: every answer's time is kept, so that its percentiles are exact.
  static constexpr double kMostDuration = 600;

  std::vector<int> concurrency = {1};  ///< closed-loop steps, used when request_rates is empty
  std::vector<double> request_rates;   ///< open-loop steps in requests per second
  bool poisson = false;                ///< open loop: exponential gaps instead of even spacing
  double duration_s = 5;               ///< measured window per step
  double warmup_s = 1;                 ///< per step, before the window; connections open here
  int max_outstanding = 256;           ///< open loop: sending threads, so at most this many in flight
  std::string metrics_url;             ///< scraped at the window's edges; empty: no batch size
  std::string model;                   ///< the "model" label to read metrics for
  std::uint64_t seed = 0;              ///< which prepared request each send picks

  /// Each field in its range (kInvalidArgument naming the flag that sets it): connections up to
  /// kMostConnections and the files this process may open, rates up to kMostRate, a step's window up
  /// to kMostDuration; NaN and infinities nowhere; Poisson arrivals only with request rates.
  Status Validate() const;
};

/// The requests to send: one per size of the varied dimension (index = size - lengths.min).
struct RequestSet {
  LengthDistribution lengths;
  std::vector<EncodedRequest> by_length;
};

struct StepResult {
  int concurrency = 0;      ///< closed loop; 0 for open-loop steps
  double request_rate = 0;  ///< open loop; 0 for closed-loop steps
  double window_s = 0;
  std::size_t completed = 0;  ///< answered within the window, successes and errors
  std::size_t succeeded = 0;
  std::map<std::string, std::size_t> errors;          ///< by kind ("HTTP 503": 12)
  std::map<std::string, std::string> error_examples;  ///< kind -> the first message seen for it
  double throughput = 0;                              ///< successes per second
  double rows_per_second = 0;                         ///< successes times rows per request, per second
  /// Successful requests only: an error answered in microseconds would flatter the percentiles.
  /// Open loop measures from each request's scheduled time, so a lagging client shows as latency.
  LatencyStats latency;                     ///< milliseconds, the percentiles `ortkit bench` reports
  std::size_t late = 0;                     ///< open loop: sent more than 1 ms after their scheduled time
  std::optional<double> server_batch_size;  ///< inference count / execution count deltas
  std::string metrics_error;                ///< why server_batch_size is missing, when a scrape failed
};

/// Runs every step in order with clients from `factory` (one per thread, created per step) and
/// calls `on_step` after each. With a `loops` factory, closed-loop steps run one event loop per
/// core this process may use instead of a thread per connection, the concurrency split among them.
/// Fails only when no client can be created; failed requests are counted in the step, not returned
/// as errors.
Result<std::vector<StepResult>> RunLoad(const LoadOptions& options, const ClientFactory& factory,
                                        const RequestSet& requests,
                                        const std::function<void(const StepResult&)>& on_step,
                                        const LoopFactory& loops = {});

}  // namespace ortkit::perf
