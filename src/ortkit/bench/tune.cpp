#include "ortkit/bench/tune.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/bench/runner.h"

namespace ortkit {
namespace {

using Clock = std::chrono::steady_clock;

/// Each measurement gets at least this long, however many candidates share the budget: shorter
/// runs give a p99 of too few samples to decide on.
constexpr double kMinMeasureSeconds = 0.25;

std::vector<int> ThreadCounts(int cores) {
  std::vector<int> counts;
  for (int n = 1; n <= cores; n *= 2) counts.push_back(n);
  if (counts.back() != cores) counts.push_back(cores);
  return counts;
}

bool SameSessionConfig(const TuneCandidate& a, const TuneCandidate& b) {
  return a.intra_op_threads == b.intra_op_threads && a.inter_op_threads == b.inter_op_threads &&
         a.parallel == b.parallel && a.instances == b.instances;
}

std::string_view OptimizationLevelNumber(GraphOptimizationLevel level) {
  switch (level) {
    case ORT_DISABLE_ALL: return "0";
    case ORT_ENABLE_BASIC: return "1";
    case ORT_ENABLE_EXTENDED: return "2";
    default: return "99";
  }
}

}  // namespace

std::string TuneCandidate::Describe() const {
  return fmt::format("intra {}, inter {}, {}, {} instance{}, batch {}", intra_op_threads, inter_op_threads,
                     parallel ? "parallel" : "sequential", instances, instances == 1 ? "" : "s", batch);
}

std::vector<TuneCandidate> TuneCandidates(const TuneSpace& space) {
  std::vector<TuneCandidate> candidates;
  const int cores = std::max(1, space.cores);
  for (int intra : ThreadCounts(cores)) {
    for (bool parallel : {false, true}) {
      if (parallel && (!space.try_parallel || cores < 2)) continue;
      const int inter = parallel ? 2 : 1;
      for (int instances = 1; instances <= std::max(1, space.max_instances) && instances * intra * inter <= cores;
           ++instances) {
        for (std::int64_t batch : space.batches) {
          TuneCandidate c;
          c.intra_op_threads = intra;
          c.inter_op_threads = inter;
          c.parallel = parallel;
          c.instances = instances;
          c.batch = batch;
          candidates.push_back(c);
        }
      }
    }
  }
  return candidates;
}

std::optional<std::size_t> PickBest(const std::vector<TuneMeasurement>& measurements, double latency_budget_ms) {
  std::optional<std::size_t> best;
  auto threads = [](const TuneCandidate& c) { return c.instances * c.intra_op_threads * c.inter_op_threads; };
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const auto& m = measurements[i];
    if (!m.measured || m.latency.p99 > latency_budget_ms) continue;
    if (!best) {
      best = i;
      continue;
    }
    const auto& b = measurements[*best];
    const bool better = m.samples_per_s > b.samples_per_s ||
                        (m.samples_per_s == b.samples_per_s &&
                         (threads(m.candidate) < threads(b.candidate) ||
                          (threads(m.candidate) == threads(b.candidate) && m.candidate.batch < b.candidate.batch)));
    if (better) best = i;
  }
  return best;
}

Result<TuneReport> Tune(Runtime& runtime, const std::filesystem::path& model, const InputsForBatch& inputs_for_batch,
                        const TuneOptions& options) {
  if (options.latency_budget_ms <= 0 || options.time_budget_s <= 0) {
    return MakeError(ErrorKind::kInvalidArgument, "tuning needs a positive latency budget and time budget");
  }
  if (options.space.batches.empty())
    return MakeError(ErrorKind::kInvalidArgument, "tuning needs at least one batch size");
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  TuneReport report;
  report.latency_budget_ms = options.latency_budget_ms;
  for (const auto& c : TuneCandidates(options.space)) {
    TuneMeasurement m;
    m.candidate = c;
    report.measurements.push_back(std::move(m));
  }
  const std::size_t total = report.measurements.size();
  // What is left of the budget, shared among what is left to measure; session creation and
  // warm-up take some of it, so a fifth is kept back for them.
  std::size_t pruned = 0;
  auto per_measure_s = [&](std::size_t done) {
    const double remaining = static_cast<double>(std::max<std::size_t>(1, total - done - pruned));
    return std::max(kMinMeasureSeconds, (options.time_budget_s - elapsed()) * 0.8 / remaining);
  };

  std::map<std::int64_t, std::vector<NamedTensor>> inputs;
  for (std::int64_t batch : options.space.batches) {
    ORTKIT_ASSIGN_OR_RETURN(auto tensors, inputs_for_batch(batch));
    inputs[batch] = std::move(tensors);
  }

  bool any_measured = false;
  std::optional<Error> last_error;
  std::size_t i = 0;
  while (i < total) {
    // One session configuration: its sessions are created once for all its batch sizes.
    std::size_t end = i;
    while (end < total && SameSessionConfig(report.measurements[end].candidate, report.measurements[i].candidate))
      ++end;
    const TuneCandidate& shared = report.measurements[i].candidate;
    std::vector<std::unique_ptr<Session>> sessions;
    std::string skip;
    if (elapsed() + kMinMeasureSeconds > options.time_budget_s) skip = "not measured: the time budget is spent";
    if (skip.empty()) {
      SessionConfig config = options.base;
      config.intra_op_threads = shared.intra_op_threads;
      config.inter_op_threads = shared.inter_op_threads;
      config.sequential_execution = !shared.parallel;
      for (int s = 0; s < shared.instances && skip.empty(); ++s) {
        auto session = Session::Create(runtime, model, config);
        if (session.ok())
          sessions.push_back(std::move(session).value());
        else {
          skip = "session creation failed: " + session.error().message;
          last_error = session.error();
        }
      }
    }
    std::vector<Session*> pointers;
    for (auto& s : sessions) pointers.push_back(s.get());
    for (std::size_t k = i; k < end; ++k) {
      TuneMeasurement& m = report.measurements[k];
      if (skip.empty() && elapsed() + kMinMeasureSeconds > options.time_budget_s) {
        skip = "not measured: the time budget is spent";
      }
      if (!skip.empty()) {
        m.note = skip;
      } else {
        BenchOptions bench;
        bench.duration_s = per_measure_s(k);
        bench.warmup = options.warmup;
        bench.rows_per_run = m.candidate.batch;
        auto result = RunBenchmark(std::span<Session* const>(pointers), inputs[m.candidate.batch], bench);
        if (!result.ok()) {
          m.note = "failed: " + result.error().message;
          last_error = result.error();
        } else if (result->failure) {
          m.note = "failed: " + result->failure->message;
          last_error = *result->failure;
        } else {
          m.measured = true;
          any_measured = true;
          m.latency = result->latency;
          m.runs_per_s = result->runs_per_s;
          m.samples_per_s = result->samples_per_s;
          m.cpu_utilisation = result->usage.cpu_utilisation;
          // A median over the budget means larger batches only get slower per run; a p99 over it
          // may be one stall of a busy machine, so it prunes nothing.
          if (m.latency.p50 > options.latency_budget_ms) {
            skip = fmt::format("not measured: batch {} was already over the budget at p50", m.candidate.batch);
            pruned += end - k - 1;
          }
        }
      }
      if (options.progress) options.progress(k + 1, total);
    }
    i = end;
  }
  if (!any_measured && last_error) return *last_error;
  report.best = PickBest(report.measurements, options.latency_budget_ms);
  report.elapsed_s = elapsed();
  return report;
}

nlohmann::json ServingConfigJson(const TuneReport& report, const TuneOptions& options, const std::string& name,
                                 const std::string& batch_dim, const std::map<std::string, std::int64_t>& other_dims) {
  if (!report.best) return nlohmann::json::object();
  const TuneMeasurement& best = report.measurements[*report.best];
  const TuneCandidate& c = best.candidate;
  // The queue may hold a request for half of the latency the budget leaves beyond the measured
  // p99, so that a full batch still meets the budget; never less than 100 us, never more than 10 ms.
  const double slack_us = (report.latency_budget_ms - best.latency.p99) * 1000 / 2;
  const auto max_queue_delay_us = static_cast<std::int64_t>(std::clamp(slack_us, 100.0, 10000.0));
  std::vector<std::int64_t> preferred;
  if (c.batch > 1) {
    if (c.batch / 2 > 1) preferred.push_back(c.batch / 2);
    preferred.push_back(c.batch);
  }
  nlohmann::json warmup_dims = {
      {batch_dim, c.batch > 1 ? std::vector<std::int64_t>{1, c.batch} : std::vector<std::int64_t>{1}}};
  for (const auto& [dim, value] : other_dims) warmup_dims[dim] = {value};

  nlohmann::json candidates = nlohmann::json::array();
  for (std::size_t i = 0; i < report.measurements.size(); ++i) {
    const auto& m = report.measurements[i];
    nlohmann::json row = {{"intra_op_threads", m.candidate.intra_op_threads},
                          {"inter_op_threads", m.candidate.inter_op_threads},
                          {"execution_mode", m.candidate.parallel ? "parallel" : "sequential"},
                          {"instances", m.candidate.instances},
                          {"batch", m.candidate.batch}};
    if (m.measured) {
      row["p50_ms"] = m.latency.p50;
      row["p99_ms"] = m.latency.p99;
      row["samples_per_s"] = m.samples_per_s;
      row["within_budget"] = m.latency.p99 <= report.latency_budget_ms;
    }
    if (!m.note.empty()) row["note"] = m.note;
    if (i == *report.best) row["chosen"] = true;
    candidates.push_back(std::move(row));
  }
  return {
      {"name", name},
      {"instances", c.instances},
      {"session",
       {{"provider", options.base.provider},
        {"intra_op_threads", c.intra_op_threads},
        {"inter_op_threads", c.inter_op_threads},
        {"execution_mode", c.parallel ? "parallel" : "sequential"},
        {"optimization_level", std::stoi(std::string(OptimizationLevelNumber(options.base.optimization_level)))}}},
      {"batching",
       {{"enabled", c.batch > 1},
        {"max_batch_size", c.batch > 1 ? c.batch : 0},
        {"max_queue_delay_us", max_queue_delay_us},
        {"preferred_batch_sizes", preferred},
        {"max_queue_size", 256},
        {"timeout_us", 0},
        {"priority_levels", 1}}},
      {"warmup", {{"dims", warmup_dims}}},
      {"tuning",
       {{"latency_budget_ms", report.latency_budget_ms},
        {"chosen", c.Describe()},
        {"p50_ms", best.latency.p50},
        {"p99_ms", best.latency.p99},
        {"samples_per_s", best.samples_per_s},
        {"reason", fmt::format("highest throughput ({:.1f} samples/s) among {} measured configurations whose p99 stays "
                               "within {} ms",
                               best.samples_per_s,
                               std::count_if(report.measurements.begin(), report.measurements.end(),
                                             [](const TuneMeasurement& m) { return m.measured; }),
                               report.latency_budget_ms)},
        {"cores", options.space.cores},
        {"elapsed_s", report.elapsed_s},
        {"candidates", candidates}}},
  };
}

}  // namespace ortkit
