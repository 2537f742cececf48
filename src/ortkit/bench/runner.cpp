#include "ortkit/bench/runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "ortkit/core/numbers.h"
#include "ortkit/runtime/repeated_run.h"

namespace ortkit {
namespace {

using Clock = std::chrono::steady_clock;

double Milliseconds(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// One measuring thread's state. Owned by RunBenchmark; only its thread touches it while running.
struct Worker {
  RepeatedRun* run = nullptr;
  std::optional<RepeatedRun::Binding> binding;
  std::vector<double> samples_ms;
  std::optional<Error> failure;
  Clock::time_point started;
  Clock::time_point finished;
};

// The first run on a session (timed on its own) and the untimed warm-up after it.
Result<double> WarmUp(RepeatedRun& run, std::int64_t warmup) {
  const auto start = Clock::now();
  ORTKIT_RETURN_IF_ERROR(run.RunFirst());
  const double first_ms = Milliseconds(Clock::now() - start);
  for (std::int64_t i = 0; i < warmup; ++i) ORTKIT_RETURN_IF_ERROR(run.Run());
  return first_ms;
}

// The timed loop. `claimed` hands out run indices in count mode; in duration mode each thread
// measures for the duration from its own start. Any failure stops every thread.
void Measure(Worker& worker, const BenchOptions& options, std::int64_t total, std::atomic<std::int64_t>& claimed,
             std::atomic<bool>& stop) {
  const bool fixed_count = options.duration_s <= 0;
  worker.started = Clock::now();
  const auto deadline =
      worker.started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.duration_s));
  while (!stop.load(std::memory_order_relaxed)) {
    if (fixed_count && claimed.fetch_add(1, std::memory_order_relaxed) >= total) break;
    const auto start = Clock::now();
    const Status ran = worker.binding ? worker.binding->Run() : worker.run->Run();
    const auto end = Clock::now();
    if (!ran.ok()) {
      worker.failure = ran.error();
      stop.store(true);
      break;
    }
    worker.samples_ms.push_back(Milliseconds(end - start));
    if (!fixed_count && end >= deadline) break;
  }
  worker.finished = Clock::now();
}

Status CheckOptions(std::span<Session* const> sessions, const BenchOptions& options) {
  if (sessions.empty()) return MakeError(ErrorKind::kInvalidArgument, "benchmark: no session to run");
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  if (options.rows_per_run < 1) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("benchmark: {} rows per run", options.rows_per_run));
  }
  return OkStatus();
}

// A RepeatedRun per session, each after its first run and warm-up; the first session's first run
// is timed into `result`.
Result<std::vector<RepeatedRun>> PrepareAndWarmUp(std::span<Session* const> sessions,
                                                  const std::vector<NamedTensor>& inputs, const BenchOptions& options,
                                                  BenchResult* result) {
  std::vector<RepeatedRun> prepared;
  prepared.reserve(sessions.size());
  for (Session* session : sessions) {
    ORTKIT_ASSIGN_OR_RETURN(RepeatedRun run, RepeatedRun::Prepare(*session, inputs));
    prepared.push_back(std::move(run));
  }
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    ORTKIT_ASSIGN_OR_RETURN(double first_ms, WarmUp(prepared[i], options.warmup));
    if (i == 0) result->first_run_ms = first_ms;
  }
  return prepared;
}

// options.concurrency workers per prepared session, each with its own binding when asked for.
Result<std::vector<Worker>> MakeWorkers(std::vector<RepeatedRun>& prepared, const BenchOptions& options) {
  const std::size_t thread_count = prepared.size() * static_cast<std::size_t>(options.concurrency);
  std::vector<Worker> workers(thread_count);
  for (std::size_t i = 0; i < thread_count; ++i) {
    workers[i].run = &prepared[i % prepared.size()];
    if (options.io_binding) {
      ORTKIT_ASSIGN_OR_RETURN(auto binding, workers[i].run->Bind());
      workers[i].binding = std::move(binding);
    }
    if (options.duration_s <= 0) workers[i].samples_ms.reserve(static_cast<std::size_t>(options.iterations));
  }
  return workers;
}

// Runs every worker on its own thread, all released at once, and reports progress from the
// calling thread until they are done.
void MeasureOnThreads(std::vector<Worker>& workers, const BenchOptions& options) {
  const std::int64_t total = options.iterations;
  std::atomic<std::int64_t> claimed{0};
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> running{workers.size()};
  std::mutex mutex;
  std::condition_variable all_done;
  std::latch start_line(static_cast<std::ptrdiff_t>(workers.size()) + 1);

  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  for (auto& worker : workers) {
    threads.emplace_back([&, w = &worker] {
      start_line.arrive_and_wait();
      Measure(*w, options, total, claimed, stop);
      if (running.fetch_sub(1) == 1) {
        std::lock_guard lock(mutex);
        all_done.notify_all();
      }
    });
  }
  const auto begin = Clock::now();
  start_line.arrive_and_wait();
  {
    std::unique_lock lock(mutex);
    while (!all_done.wait_for(lock, std::chrono::milliseconds(100), [&] { return running.load() == 0; })) {
      if (!options.progress) continue;
      const double fraction = options.duration_s > 0
                                  ? std::chrono::duration<double>(Clock::now() - begin).count() / options.duration_s
                                  : static_cast<double>(std::min(claimed.load(), total)) / static_cast<double>(total);
      lock.unlock();
      options.progress(std::clamp(fraction, 0.0, 1.0));
      lock.lock();
    }
  }
  for (auto& t : threads) t.join();
}

// Every worker's samples in `result`, the wall time from the first start to the last end, and
// the first failure; an error when no run completed before it.
Status CollectSamples(const std::vector<Worker>& workers, BenchResult* result) {
  Clock::time_point first_start = workers.front().started;
  Clock::time_point last_end = workers.front().finished;
  for (const auto& worker : workers) {
    first_start = std::min(first_start, worker.started);
    last_end = std::max(last_end, worker.finished);
    result->samples_ms.insert(result->samples_ms.end(), worker.samples_ms.begin(), worker.samples_ms.end());
    if (worker.failure && !result->failure) result->failure = worker.failure;
  }
  if (result->samples_ms.empty() && result->failure) return *result->failure;
  result->wall_s = std::chrono::duration<double>(last_end - first_start).count();
  result->runs = static_cast<std::int64_t>(result->samples_ms.size());
  result->latency = Summarize(result->samples_ms);
  return OkStatus();
}

}  // namespace

Status BenchOptions::Validate() const {
  ORTKIT_RETURN_IF_ERROR(CheckRange("benchmark: duration", duration_s, {0, 86400, "s"}));
  if (duration_s == 0) ORTKIT_RETURN_IF_ERROR(CheckRange("benchmark: iterations", iterations, {1, kMostIterations}));
  ORTKIT_RETURN_IF_ERROR(CheckRange("benchmark: warm-up runs", warmup, {0, kMostWarmup}));
  ORTKIT_RETURN_IF_ERROR(
      CheckRange("benchmark: threads per session (concurrency)", std::int64_t{concurrency}, {1, 1024}));
  return CheckRange("benchmark: rows per run", rows_per_run, {1, std::int64_t{1} << 40});
}

std::int64_t PeakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

Result<BenchResult> RunBenchmark(Session& session, const std::vector<NamedTensor>& inputs,
                                 const BenchOptions& options) {
  Session* one[] = {&session};
  return RunBenchmark(std::span<Session* const>(one), inputs, options);
}

Result<BenchResult> RunBenchmark(std::span<Session* const> sessions, const std::vector<NamedTensor>& inputs,
                                 const BenchOptions& options) {
  ORTKIT_RETURN_IF_ERROR(CheckOptions(sessions, options));
  BenchResult result;
  result.sessions = static_cast<int>(sessions.size());
  result.concurrency = options.concurrency;
  ORTKIT_ASSIGN_OR_RETURN(std::vector<RepeatedRun> prepared, PrepareAndWarmUp(sessions, inputs, options, &result));
  ORTKIT_ASSIGN_OR_RETURN(std::vector<Worker> workers, MakeWorkers(prepared, options));
  // CPU time over the wall time of the same window: the runs' own span (wall_s) leaves out the threads'
  // start and ONNX Runtime's spinning pool threads, and divided by it a short measurement read 1400%.
  const auto window_start = Clock::now();
  const double cpu_before = CpuSeconds();
  MeasureOnThreads(workers, options);
  const double cpu_after = CpuSeconds();
  const double window_s = std::chrono::duration<double>(Clock::now() - window_start).count();
  if (options.progress) options.progress(1.0);
  ORTKIT_RETURN_IF_ERROR(CollectSamples(workers, &result));
  result.runs_per_s = result.wall_s > 0 ? static_cast<double>(result.runs) / result.wall_s : 0;
  result.samples_per_s = result.runs_per_s * static_cast<double>(options.rows_per_run);
  result.usage.cpu_seconds = cpu_after - cpu_before;
  result.usage.cpu_utilisation = window_s > 0 ? result.usage.cpu_seconds / window_s : 0;
  result.usage.peak_rss_bytes = PeakResidentBytes();
  return result;
}

}  // namespace ortkit
