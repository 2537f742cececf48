#include "ortkit/perf/load_generator.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "ortkit/core/cpus.h"
#include "ortkit/core/numbers.h"
#include "ortkit/perf/prometheus.h"

namespace ortkit::perf {
namespace {

using Clock = std::chrono::steady_clock;

struct Record {
  Clock::time_point start;  ///< when it was sent (closed loop) or scheduled (open loop)
  Clock::time_point end;
  int error = -1;  ///< index into the thread's error kinds; -1: success
  std::int64_t rows = 1;
};

// What one thread saw; merged after the step so that the hot path takes no lock.
struct ThreadLog {
  std::vector<Record> records;
  std::vector<std::string> error_kinds;
  std::vector<std::string> error_details;  ///< the first message of each kind
  std::string failure;                     ///< the client could not be created
  std::size_t late = 0;

  int KindIndex(const std::string& kind, const std::string& detail) {
    auto it = std::find(error_kinds.begin(), error_kinds.end(), kind);
    if (it != error_kinds.end()) return static_cast<int>(it - error_kinds.begin());
    error_kinds.push_back(kind);
    error_details.push_back(detail);
    return static_cast<int>(error_kinds.size() - 1);
  }
};

struct Scrape {
  std::optional<BatchCounters> counters;
  std::string error;
};

Scrape ScrapeCounters(const LoadOptions& options) {
  if (options.metrics_url.empty()) return {};
  auto text = HttpGetText(options.metrics_url, 5000);
  if (!text.ok()) return {std::nullopt, text.error().message};
  auto counters = ReadBatchCounters(ParsePrometheusText(*text), options.model);
  if (!counters)
    return {std::nullopt,
            fmt::format("{} has no inference/execution counters for model '{}'", options.metrics_url, options.model)};
  return {counters, ""};
}

const EncodedRequest& Pick(const RequestSet& requests, std::mt19937_64& rng) {
  const std::int64_t length = requests.lengths.Draw(rng);
  return requests.by_length[static_cast<std::size_t>(length - requests.lengths.min)];
}

void Log(const InferOutcome& outcome, Clock::time_point start, std::int64_t rows, ThreadLog& log) {
  Record record{start, Clock::now(), -1, rows};
  if (!outcome.ok()) record.error = log.KindIndex(outcome.error, outcome.detail);
  log.records.push_back(record);
}

void Send(InferClient& client, const EncodedRequest& request, Clock::time_point start, ThreadLog& log) {
  Log(client.Infer(request), start, request.rows, log);
}

// A closed loop over `connections` connections from this thread. Once `stop` is raised no request
// starts, and the ones in flight are waited for, as a thread per connection waits for its last.
void LoopClosed(InferLoop& loop, std::size_t connections, const RequestSet& requests, std::mt19937_64& rng,
                const std::atomic<bool>& stop, ThreadLog& log) {
  struct Sent {
    Clock::time_point start;
    std::int64_t rows = 1;
  };
  std::vector<Sent> sent(connections);
  auto send = [&](std::size_t connection) {
    const EncodedRequest& request = Pick(requests, rng);
    sent[connection] = {Clock::now(), request.rows};
    loop.Send(connection, request);
  };
  for (std::size_t c = 0; c < connections; ++c) send(c);
  while (loop.in_flight() > 0) {
    loop.Wait(10, [&](std::size_t connection, const InferOutcome& outcome) {
      Log(outcome, sent[connection].start, sent[connection].rows, log);
      if (!stop.load(std::memory_order_relaxed)) send(connection);
    });
  }
}

// Times (from the step's start) at which open-loop requests leave, drawn as they are taken: memory
// stays flat whatever the rate and the window.
class Schedule {
 public:
  Schedule(double rate, double total_s, bool poisson, std::uint64_t seed)
      : rate_(rate), total_s_(total_s), poisson_(poisson), rng_(seed), gap_(rate) {}

  /// The next request's time, or nothing once the schedule has passed its end.
  std::optional<double> Next() {
    std::lock_guard lock(mutex_);
    if (poisson_) {
      const double t = time_;
      time_ += gap_(rng_);
      return t < total_s_ ? std::optional<double>(t) : std::nullopt;
    }
    const double t = static_cast<double>(taken_++) / rate_;
    return t < total_s_ ? std::optional<double>(t) : std::nullopt;
  }

  /// How many requests it holds (expected, for Poisson): the threads needed to send them.
  double Expected() const { return rate_ * total_s_; }

 private:
  double rate_;
  double total_s_;
  bool poisson_;
  std::mutex mutex_;
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_;
  double time_ = 0;
  std::uint64_t taken_ = 0;
};

StepResult Summarize(std::vector<ThreadLog>& logs, Clock::time_point begin, Clock::time_point end) {
  StepResult step;
  step.window_s = std::chrono::duration<double>(end - begin).count();
  std::vector<double> latencies;
  double rows = 0;
  for (auto& log : logs) {
    step.late += log.late;
    for (const auto& r : log.records) {
      if (r.end < begin || r.end > end) continue;
      ++step.completed;
      if (r.error >= 0) {
        const auto kind = static_cast<std::size_t>(r.error);
        ++step.errors[log.error_kinds[kind]];
        step.error_examples.emplace(log.error_kinds[kind], log.error_details[kind]);
        continue;
      }
      ++step.succeeded;
      rows += static_cast<double>(r.rows);
      latencies.push_back(std::chrono::duration<double, std::milli>(r.end - r.start).count());
    }
  }
  step.latency = ortkit::Summarize(latencies);
  step.throughput = step.window_s > 0 ? static_cast<double>(step.succeeded) / step.window_s : 0;
  step.rows_per_second = step.window_s > 0 ? rows / step.window_s : 0;
  return step;
}

// Sleeps through warm-up, scrapes, measures, scrapes, then raises `stop`.
void Coordinate(const LoadOptions& options, Clock::time_point start, std::atomic<bool>& stop, Clock::time_point* begin,
                Clock::time_point* end, Scrape* before, Scrape* after) {
  std::this_thread::sleep_until(start + std::chrono::duration<double>(options.warmup_s));
  *before = ScrapeCounters(options);
  *begin = Clock::now();
  std::this_thread::sleep_until(*begin + std::chrono::duration<double>(options.duration_s));
  *end = Clock::now();
  *after = ScrapeCounters(options);
  stop.store(true);
}

StepResult RunStep(const LoadOptions& options, const ClientFactory& factory, const LoopFactory& loops,
                   const RequestSet& requests, int concurrency, double rate, std::uint64_t step_seed) {
  const bool open_loop = rate > 0;
  const bool event_loops = !open_loop && loops;
  // The schedule runs a little past the window so that the window never sees the tail thin out.
  Schedule schedule(open_loop ? rate : 1, options.warmup_s + options.duration_s + 0.5, options.poisson, step_seed);
  int threads = event_loops ? std::min(concurrency, UsableCpus().cores) : concurrency;
  if (open_loop) {
    threads =
        static_cast<int>(std::clamp(std::ceil(schedule.Expected()), 1.0, static_cast<double>(options.max_outstanding)));
  }
  std::vector<ThreadLog> logs(static_cast<std::size_t>(threads));
  std::atomic<bool> stop{false};
  const Clock::time_point start = Clock::now();

  auto worker = [&](std::size_t index) {
    ThreadLog& log = logs[index];
    std::mt19937_64 rng(step_seed * 7919 + index);
    if (event_loops) {  // thread `index` takes connections index, index + threads, ...
      const auto share = static_cast<std::size_t>((concurrency - static_cast<int>(index) + threads - 1) / threads);
      auto loop = loops(share);
      if (!loop.ok()) {
        log.failure = loop.error().message;
        return;
      }
      LoopClosed(**loop, share, requests, rng, stop, log);
      return;
    }
    auto client = factory();
    if (!client.ok()) {
      log.failure = client.error().message;
      return;
    }
    if (!open_loop) {
      while (!stop.load(std::memory_order_relaxed)) Send(**client, Pick(requests, rng), Clock::now(), log);
      return;
    }
    while (!stop.load(std::memory_order_relaxed)) {
      const std::optional<double> at = schedule.Next();
      if (!at) break;
      const auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*at));
      std::this_thread::sleep_until(due);
      if (Clock::now() - due > std::chrono::milliseconds(1)) ++log.late;
      Send(**client, Pick(requests, rng), due, log);
    }
  };

  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker, static_cast<std::size_t>(i));
  Clock::time_point begin, end;
  Scrape before, after;
  Coordinate(options, start, stop, &begin, &end, &before, &after);
  for (auto& t : pool) t.join();

  StepResult step = Summarize(logs, begin, end);
  step.concurrency = open_loop ? 0 : concurrency;
  step.request_rate = rate;
  for (const auto& log : logs) {
    if (!log.failure.empty()) ++step.errors["client: " + log.failure];
  }
  if (before.counters && after.counters) {
    const double executions = after.counters->executions - before.counters->executions;
    if (executions > 0)
      step.server_batch_size = (after.counters->inferences - before.counters->inferences) / executions;
  } else {
    step.metrics_error = !before.error.empty() ? before.error : after.error;
  }
  return step;
}

}  // namespace

Status LoadOptions::Validate() const {
  // Each connection holds a socket: the files this process may open bound them too, less a margin for
  // its own files.
  rlimit files{};
  std::int64_t most = kMostConnections;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
    most = std::min<std::int64_t>(most, static_cast<std::int64_t>(files.rlim_cur) - 64);
  for (int c : concurrency) {
    if (c < 1 || c > most) {
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("--concurrency {}: expected 1 to {} (each connection is a socket; ortkit perf opens at "
                      "most {}, and this process may open {} files)",
                      c, std::max<std::int64_t>(most, 1), kMostConnections,
                      files.rlim_cur == RLIM_INFINITY ? std::string("unlimited") : std::to_string(files.rlim_cur)));
    }
  }
  for (double r : request_rates) {
    ORTKIT_RETURN_IF_ERROR(CheckRange("--request-rate", r,
                                      {1e-3, kMostRate,
                                       "requests/s (one perf process cannot "
                                       "schedule more; run several)"}));
  }
  if (poisson && request_rates.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "--poisson needs --request-rate (it shapes the open-loop schedule)");
  }
  ORTKIT_RETURN_IF_ERROR(CheckRange("--duration", duration_s, {1e-3, kMostDuration, "s"}));
  ORTKIT_RETURN_IF_ERROR(CheckRange("--warmup", warmup_s, {0, 3600, "s"}));
  return CheckRange("--max-outstanding", std::int64_t{max_outstanding}, {1, kMostConnections});
}

Result<std::vector<StepResult>> RunLoad(const LoadOptions& options, const ClientFactory& factory,
                                        const RequestSet& requests,
                                        const std::function<void(const StepResult&)>& on_step,
                                        const LoopFactory& loops) {
  if (requests.by_length.size() != requests.lengths.Values().size()) {
    return MakeError(ErrorKind::kInternal, "RunLoad: one encoded request per length is required");
  }
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  ORTKIT_ASSIGN_OR_RETURN(auto probe, factory());
  (void)probe;
  std::vector<StepResult> steps;
  std::uint64_t step_seed = options.seed;
  auto run = [&](int concurrency, double rate) {
    steps.push_back(RunStep(options, factory, loops, requests, concurrency, rate, ++step_seed));
    if (on_step) on_step(steps.back());
  };
  if (options.request_rates.empty()) {
    for (int c : options.concurrency) run(c, 0);
  } else {
    for (double r : options.request_rates) run(0, r);
  }
  return steps;
}

}  // namespace ortkit::perf
