#include "ortkit/perf/load_generator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "ortkit/core/cpus.h"
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

// Times (from the step's start) at which open-loop requests leave.
std::vector<double> Schedule(double rate, double total_s, bool poisson, std::uint64_t seed) {
  std::vector<double> times;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  for (double t = 0; t < total_s;) {
    times.push_back(t);
    t += poisson ? gap(rng) : 1.0 / rate;
  }
  return times;
}

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
  std::vector<double> schedule;
  int threads = event_loops ? std::min(concurrency, UsableCpus().cores) : concurrency;
  if (open_loop) {
    // The schedule runs a little past the window so that the window never sees the tail thin out.
    schedule = Schedule(rate, options.warmup_s + options.duration_s + 0.5, options.poisson, step_seed);
    threads = std::max(1, std::min<int>(options.max_outstanding, static_cast<int>(schedule.size())));
  }
  std::vector<ThreadLog> logs(static_cast<std::size_t>(threads));
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> next{0};
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
    for (std::size_t k = next++; k < schedule.size() && !stop.load(std::memory_order_relaxed); k = next++) {
      const auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(schedule[k]));
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

Result<std::vector<StepResult>> RunLoad(const LoadOptions& options, const ClientFactory& factory,
                                        const RequestSet& requests,
                                        const std::function<void(const StepResult&)>& on_step,
                                        const LoopFactory& loops) {
  if (requests.by_length.size() != requests.lengths.Values().size()) {
    return MakeError(ErrorKind::kInternal, "RunLoad: one encoded request per length is required");
  }
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
