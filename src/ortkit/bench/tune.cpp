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

/// One run of the tuner: the candidates' measurements, filled in one session configuration at a
/// time within the time budget.
class TuneRun {
 public:
  TuneRun(Runtime& runtime, const std::filesystem::path& model, const TuneOptions& options,
          std::map<std::int64_t, std::vector<NamedTensor>> inputs, Clock::time_point start)
      : runtime_(runtime), model_(model), options_(options), inputs_(std::move(inputs)), start_(start) {
    report_.latency_budget_ms = options.latency_budget_ms;
    for (const auto& c : TuneCandidates(options.space)) {
      TuneMeasurement m;
      m.candidate = c;
      report_.measurements.push_back(std::move(m));
    }
  }

  /// Measures every candidate the budget allows; fails when none could be measured.
  Result<TuneReport> Sweep() {
    const std::size_t total = report_.measurements.size();
    for (std::size_t begin = 0; begin < total;) {
      // One session configuration: its sessions are created once for all its batch sizes.
      std::size_t end = begin;
      while (end < total &&
             SameSessionConfig(report_.measurements[end].candidate, report_.measurements[begin].candidate))
        ++end;
      MeasureSessionConfig(begin, end);
      begin = end;
    }
    if (!any_measured_ && last_error_) return *last_error_;
    report_.best = PickBest(report_.measurements, options_.latency_budget_ms);
    report_.elapsed_s = Elapsed();
    return std::move(report_);
  }

 private:
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool BudgetSpent() const { return Elapsed() + kMinMeasureSeconds > options_.time_budget_s; }

  // What is left of the budget, shared among what is left to measure; session creation and
  // warm-up take some of it, so a fifth is kept back for them.
  double PerMeasureSeconds(std::size_t done) const {
    const std::size_t total = report_.measurements.size();
    const double remaining = static_cast<double>(std::max<std::size_t>(1, total - done - pruned_));
    return std::max(kMinMeasureSeconds, (options_.time_budget_s - Elapsed()) * 0.8 / remaining);
  }

  // The instances of `shared`'s session configuration; on failure, why its candidates are skipped.
  std::string CreateSessions(const TuneCandidate& shared, std::vector<std::unique_ptr<Session>>* sessions) {
    if (BudgetSpent()) return kBudgetSpent;
    SessionConfig config = options_.base;
    config.intra_op_threads = shared.intra_op_threads;
    config.inter_op_threads = shared.inter_op_threads;
    config.sequential_execution = !shared.parallel;
    for (int s = 0; s < shared.instances; ++s) {
      auto session = Session::Create(runtime_, model_, config);
      if (!session.ok()) {
        last_error_ = session.error();
        return "session creation failed: " + session.error().message;
      }
      sessions->push_back(std::move(session).value());
    }
    return "";
  }

  // Measures candidates [begin, end), which share one session configuration.
  void MeasureSessionConfig(std::size_t begin, std::size_t end) {
    std::vector<std::unique_ptr<Session>> sessions;
    std::string skip = CreateSessions(report_.measurements[begin].candidate, &sessions);
    std::vector<Session*> pointers;
    pointers.reserve(sessions.size());
    for (auto& s : sessions) pointers.push_back(s.get());
    for (std::size_t k = begin; k < end; ++k) {
      TuneMeasurement& m = report_.measurements[k];
      if (skip.empty() && BudgetSpent()) skip = kBudgetSpent;
      if (!skip.empty()) {
        m.note = skip;
      } else if (Measure(pointers, k, m) && m.latency.p50 > options_.latency_budget_ms) {
        // A median over the budget means larger batches only get slower per run; a p99 over it
        // may be one stall of a busy machine, so it prunes nothing.
        skip = fmt::format("not measured: batch {} was already over the budget at p50", m.candidate.batch);
        pruned_ += end - k - 1;
      }
      if (options_.progress) options_.progress(k + 1, report_.measurements.size());
    }
  }

  // Measures one candidate, the `index`th; false when it failed (m.note says why).
  bool Measure(const std::vector<Session*>& sessions, std::size_t index, TuneMeasurement& m) {
    BenchOptions bench;
    bench.duration_s = PerMeasureSeconds(index);
    bench.warmup = options_.warmup;
    bench.rows_per_run = m.candidate.batch;
    auto result = RunBenchmark(std::span<Session* const>(sessions), inputs_[m.candidate.batch], bench);
    if (!result.ok() || result->failure) {
      last_error_ = result.ok() ? *result->failure : result.error();
      m.note = "failed: " + last_error_->message;
      return false;
    }
    m.measured = true;
    any_measured_ = true;
    m.latency = result->latency;
    m.runs_per_s = result->runs_per_s;
    m.samples_per_s = result->samples_per_s;
    m.cpu_utilisation = result->usage.cpu_utilisation;
    return true;
  }

  static constexpr const char* kBudgetSpent = "not measured: the time budget is spent";

  Runtime& runtime_;
  const std::filesystem::path& model_;
  const TuneOptions& options_;
  std::map<std::int64_t, std::vector<NamedTensor>> inputs_;
  const Clock::time_point start_;
  TuneReport report_;
  std::size_t pruned_ = 0;  ///< candidates skipped because a smaller batch was already over the budget
  bool any_measured_ = false;
  std::optional<Error> last_error_;
};

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

ShapePoint TuneWorkload::AtBatch(std::int64_t batch) const {
  ShapePoint point;
  point.dims = other_dims;
  if (!batch_dim.empty()) point.dims[batch_dim] = batch;
  return point;
}

Result<TuneWorkload> PlanTuneWorkload(const std::vector<TensorSpec>& named_inputs, std::vector<std::int64_t> batches,
                                      const std::vector<SweepAxis>& sweeps) {
  TuneWorkload workload;
  workload.batch_dim = FindBatchSymbol(named_inputs);
  if (batches.empty() && !workload.batch_dim.empty()) batches = {1, 2, 4, 8, 16, 32};
  std::sort(batches.begin(), batches.end());
  // Other dimensions: the first size of each sweep, so that the tuner measures one workload.
  std::vector<SweepAxis> fixed_dims;
  fixed_dims.reserve(sweeps.size());
  for (const auto& s : sweeps) fixed_dims.push_back({s.dim, {s.values.front()}});
  ORTKIT_ASSIGN_OR_RETURN(auto points, ExpandShapePoints(named_inputs, batches, fixed_dims));
  workload.first = points.front();
  if (batches.empty()) batches.push_back(workload.first.batch);
  workload.batches = std::move(batches);
  for (const auto& [name, value] : workload.first.dims) {
    if (name != workload.batch_dim) workload.other_dims[name] = value;
  }
  return workload;
}

Result<TuneReport> Tune(Runtime& runtime, const std::filesystem::path& model, const InputsForBatch& inputs_for_batch,
                        const TuneOptions& options) {
  if (options.latency_budget_ms <= 0 || options.time_budget_s <= 0) {
    return MakeError(ErrorKind::kInvalidArgument, "tuning needs a positive latency budget and time budget");
  }
  if (options.space.batches.empty())
    return MakeError(ErrorKind::kInvalidArgument, "tuning needs at least one batch size");
  const auto start = Clock::now();  // the time budget covers making the inputs
  std::map<std::int64_t, std::vector<NamedTensor>> inputs;
  for (std::int64_t batch : options.space.batches) {
    ORTKIT_ASSIGN_OR_RETURN(auto tensors, inputs_for_batch(batch));
    inputs[batch] = std::move(tensors);
  }
  TuneRun run(runtime, model, options, std::move(inputs), start);
  return run.Sweep();
}

std::optional<ServingRecommendation> RecommendServing(const TuneReport& report, const std::string& batch_dim,
                                                      const std::map<std::string, std::int64_t>& other_dims) {
  if (!report.best) return std::nullopt;
  const TuneMeasurement& best = report.measurements[*report.best];
  ServingRecommendation r;
  r.candidate = best.candidate;
  const std::int64_t batch = r.candidate.batch;
  r.batching = batch > 1;
  r.max_batch_size = batch > 1 ? batch : 0;
  const double slack_us = (report.latency_budget_ms - best.latency.p99) * 1000 / 2;
  r.max_queue_delay_us = static_cast<std::int64_t>(std::clamp(slack_us, 100.0, 10000.0));
  if (batch > 1) {
    if (batch / 2 > 1) r.preferred_batch_sizes.push_back(batch / 2);
    r.preferred_batch_sizes.push_back(batch);
  }
  r.warmup_dims[batch_dim] = batch > 1 ? std::vector<std::int64_t>{1, batch} : std::vector<std::int64_t>{1};
  for (const auto& [dim, value] : other_dims) r.warmup_dims[dim] = {value};
  return r;
}

nlohmann::json TuningExplanationJson(const TuneReport& report, const TuneOptions& options) {
  if (!report.best) return nlohmann::json::object();
  const TuneMeasurement& best = report.measurements[*report.best];
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
  const auto measured = std::count_if(report.measurements.begin(), report.measurements.end(),
                                      [](const TuneMeasurement& m) { return m.measured; });
  return {{"latency_budget_ms", report.latency_budget_ms},
          {"chosen", best.candidate.Describe()},
          {"p50_ms", best.latency.p50},
          {"p99_ms", best.latency.p99},
          {"samples_per_s", best.samples_per_s},
          {"reason", fmt::format("highest throughput ({:.1f} samples/s) among {} measured configurations whose p99 "
                                 "stays within {} ms",
                                 best.samples_per_s, measured, report.latency_budget_ms)},
          {"cores", options.space.cores},
          {"elapsed_s", report.elapsed_s},
          {"candidates", candidates}};
}

nlohmann::json ServingConfigJson(const TuneReport& report, const TuneOptions& options, const std::string& name,
                                 const std::string& batch_dim, const std::map<std::string, std::int64_t>& other_dims) {
  const auto r = RecommendServing(report, batch_dim, other_dims);
  if (!r) return nlohmann::json::object();
  const TuneCandidate& c = r->candidate;
  return {
      {"name", name},
      {"instances", c.instances},
      {"session",
       {{"provider", options.base.provider},
        {"intra_op_threads", c.intra_op_threads},
        {"inter_op_threads", c.inter_op_threads},
        {"execution_mode", c.parallel ? "parallel" : "sequential"},
        {"optimization_level", OptimizationLevelNumber(options.base.optimization_level)}}},
      {"batching",
       {{"enabled", r->batching},
        {"max_batch_size", r->max_batch_size},
        {"max_queue_delay_us", r->max_queue_delay_us},
        {"preferred_batch_sizes", r->preferred_batch_sizes},
        {"max_queue_size", 256},
        {"timeout_us", 0},
        {"priority_levels", 1}}},
      {"warmup", {{"dims", r->warmup_dims}}},
      {"tuning", TuningExplanationJson(report, options)},
  };
}

}  // namespace ortkit
