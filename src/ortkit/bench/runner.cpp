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

#include "ortkit/runtime/run.h"

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

Error RunError(const Session& session, const std::exception& e, bool invalid_argument) {
  return MakeError(invalid_argument ? ErrorKind::kInvalidArgument : ErrorKind::kRuntime,
                   fmt::format("running the model on {}: {}", session.config().provider, e.what()));
}

// Everything a Run call needs, built once per session so that the timed loop only calls Run.
// The input values point into the caller's tensors (no copy).
struct PreparedSession {
  Session* session = nullptr;
  std::vector<const char*> input_names;
  std::vector<Ort::Value> input_values;
  std::vector<std::string> output_name_storage;
  std::vector<const char*> output_names;
  std::vector<Ort::Value> first_outputs;  ///< from the first run: shapes and types for IO binding
};

Result<PreparedSession> Prepare(Session& session, const std::vector<NamedTensor>& inputs) {
  ORTKIT_ASSIGN_OR_RETURN(auto input_specs, DescribeInputs(session));
  ORTKIT_RETURN_IF_ERROR(CheckInputs(inputs, input_specs));
  ORTKIT_ASSIGN_OR_RETURN(auto output_specs, DescribeOutputs(session));
  PreparedSession prepared;
  prepared.session = &session;
  try {
    const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::AllocatorWithDefaultOptions allocator;
    for (const auto& in : inputs) {
      prepared.input_values.push_back(ToOrtValue(in.tensor, memory, allocator));
      prepared.input_names.push_back(in.name.c_str());
    }
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kInvalidArgument, std::string("wrapping the inputs: ") + e.what());
  }
  for (auto& spec : output_specs) prepared.output_name_storage.push_back(std::move(spec.name));
  for (const auto& name : prepared.output_name_storage) prepared.output_names.push_back(name.c_str());
  return prepared;
}

// One measuring thread's state. Owned by RunBenchmark; only its thread touches it while running.
struct Worker {
  PreparedSession* prepared = nullptr;
  std::unique_ptr<Ort::IoBinding> binding;
  std::vector<Ort::Value> bound_outputs;
  std::vector<double> samples_ms;
  std::optional<Error> failure;
  Clock::time_point started;
  Clock::time_point finished;
};

Status BindOnce(Worker& worker) {
  PreparedSession& p = *worker.prepared;
  try {
    Ort::Session& session = p.session->ort();
    worker.binding = std::make_unique<Ort::IoBinding>(session);
    for (std::size_t i = 0; i < p.input_values.size(); ++i)
      worker.binding->BindInput(p.input_names[i], p.input_values[i]);
    const Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::AllocatorWithDefaultOptions allocator;
    for (std::size_t i = 0; i < p.output_names.size(); ++i) {
      const Ort::Value& first = p.first_outputs[i];
      if (!first.IsTensor()) {
        worker.binding->BindOutput(p.output_names[i], cpu);
        continue;
      }
      const auto info = first.GetTensorTypeAndShapeInfo();
      const std::vector<std::int64_t> shape = info.GetShape();
      worker.bound_outputs.push_back(
          Ort::Value::CreateTensor(allocator, shape.data(), shape.size(), info.GetElementType()));
      worker.binding->BindOutput(p.output_names[i], worker.bound_outputs.back());
    }
    return OkStatus();
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kRuntime, std::string("binding inputs and outputs: ") + e.what());
  }
}

// The first run on a session (timed on its own) and the untimed warm-up after it.
Result<double> WarmUp(PreparedSession& p, std::int64_t warmup) {
  Ort::Session& session = p.session->ort();
  const Ort::RunOptions run_options{nullptr};
  try {
    const auto start = Clock::now();
    p.first_outputs = session.Run(run_options, p.input_names.data(), p.input_values.data(), p.input_values.size(),
                                  p.output_names.data(), p.output_names.size());
    const double first_ms = Milliseconds(Clock::now() - start);
    for (std::int64_t i = 0; i < warmup; ++i) {
      session.Run(run_options, p.input_names.data(), p.input_values.data(), p.input_values.size(),
                  p.output_names.data(), p.output_names.size());
    }
    return first_ms;
  } catch (const Ort::Exception& e) {
    return RunError(*p.session, e, e.GetOrtErrorCode() == ORT_INVALID_ARGUMENT);
  } catch (const std::exception& e) {
    return RunError(*p.session, e, false);
  }
}

// The timed loop. `claimed` hands out run indices in count mode; in duration mode each thread
// measures for the duration from its own start. Any failure stops every thread.
void Measure(Worker& worker, const BenchOptions& options, std::int64_t total, std::atomic<std::int64_t>& claimed,
             std::atomic<bool>& stop) {
  PreparedSession& p = *worker.prepared;
  Ort::Session& session = p.session->ort();
  const Ort::RunOptions run_options{nullptr};
  const bool fixed_count = options.duration_s <= 0;
  worker.started = Clock::now();
  const auto deadline =
      worker.started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.duration_s));
  try {
    while (!stop.load(std::memory_order_relaxed)) {
      if (fixed_count && claimed.fetch_add(1, std::memory_order_relaxed) >= total) break;
      const auto start = Clock::now();
      if (worker.binding) {
        session.Run(run_options, *worker.binding);
      } else {
        auto outputs = session.Run(run_options, p.input_names.data(), p.input_values.data(), p.input_values.size(),
                                   p.output_names.data(), p.output_names.size());
      }
      const auto end = Clock::now();
      worker.samples_ms.push_back(Milliseconds(end - start));
      if (!fixed_count && end >= deadline) break;
    }
  } catch (const Ort::Exception& e) {
    worker.failure = RunError(*p.session, e, e.GetOrtErrorCode() == ORT_INVALID_ARGUMENT);
    stop.store(true);
  } catch (const std::exception& e) {
    worker.failure = RunError(*p.session, e, false);
    stop.store(true);
  }
  worker.finished = Clock::now();
}

Status CheckOptions(std::span<Session* const> sessions, const BenchOptions& options) {
  if (sessions.empty()) return MakeError(ErrorKind::kInvalidArgument, "benchmark: no session to run");
  if (options.duration_s < 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("benchmark: duration {} s is negative", options.duration_s));
  }
  if (options.duration_s == 0 && options.iterations < 1) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("benchmark: {} iterations; at least one run must be measured", options.iterations));
  }
  if (options.warmup < 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("benchmark: {} warm-up runs is negative", options.warmup));
  }
  if (options.concurrency < 1) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("benchmark: concurrency {}; at least one thread must call Run", options.concurrency));
  }
  if (options.rows_per_run < 1) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("benchmark: {} rows per run", options.rows_per_run));
  }
  return OkStatus();
}

}  // namespace

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

  std::vector<PreparedSession> prepared;
  prepared.reserve(sessions.size());
  for (Session* session : sessions) {
    ORTKIT_ASSIGN_OR_RETURN(PreparedSession p, Prepare(*session, inputs));
    prepared.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    ORTKIT_ASSIGN_OR_RETURN(double first_ms, WarmUp(prepared[i], options.warmup));
    if (i == 0) result.first_run_ms = first_ms;
  }

  const std::size_t thread_count = prepared.size() * static_cast<std::size_t>(options.concurrency);
  std::vector<Worker> workers(thread_count);
  for (std::size_t i = 0; i < thread_count; ++i) {
    workers[i].prepared = &prepared[i % prepared.size()];
    if (options.io_binding) ORTKIT_RETURN_IF_ERROR(BindOnce(workers[i]));
    if (options.duration_s <= 0) workers[i].samples_ms.reserve(static_cast<std::size_t>(options.iterations));
  }

  const std::int64_t total = options.iterations;
  std::atomic<std::int64_t> claimed{0};
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> running{thread_count};
  std::mutex mutex;
  std::condition_variable all_done;
  std::latch start_line(static_cast<std::ptrdiff_t>(thread_count) + 1);

  const double cpu_before = CpuSeconds();
  std::vector<std::thread> threads;
  threads.reserve(thread_count);
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
  const double cpu_after = CpuSeconds();
  if (options.progress) options.progress(1.0);

  Clock::time_point first_start = workers.front().started;
  Clock::time_point last_end = workers.front().finished;
  for (auto& worker : workers) {
    first_start = std::min(first_start, worker.started);
    last_end = std::max(last_end, worker.finished);
    result.samples_ms.insert(result.samples_ms.end(), worker.samples_ms.begin(), worker.samples_ms.end());
    if (worker.failure && !result.failure) result.failure = worker.failure;
  }
  if (result.samples_ms.empty() && result.failure) return *result.failure;
  result.wall_s = std::chrono::duration<double>(last_end - first_start).count();
  result.runs = static_cast<std::int64_t>(result.samples_ms.size());
  result.latency = Summarize(result.samples_ms);
  result.runs_per_s = result.wall_s > 0 ? static_cast<double>(result.runs) / result.wall_s : 0;
  result.samples_per_s = result.runs_per_s * static_cast<double>(options.rows_per_run);
  result.usage.cpu_seconds = cpu_after - cpu_before;
  result.usage.cpu_utilisation = result.wall_s > 0 ? result.usage.cpu_seconds / result.wall_s : 0;
  result.usage.peak_rss_bytes = PeakResidentBytes();
  return result;
}

}  // namespace ortkit
