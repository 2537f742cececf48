// `ortkit bench MODEL`: latency and throughput over a sweep of shapes in one set of sessions, with
// --profile in a separate profiled session and --plot. Measuring is bench/measure_sweep's; this
// file opens the model, reports what stopped the sweep, and picks the exit code.
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "bench_command.h"
#include "bench_render.h"
#include "commands.h"
#include "failure.h"
#include "ortkit/core/cpus.h"
#include "ortkit/model/speed_opportunity.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// The sessions of the model: the one OpenModel made and --sessions - 1 more.
struct SweepSessions {
  std::vector<std::unique_ptr<Session>> extra;
  std::vector<Session*> all;
};

Result<SweepSessions> CreateSessions(OpenedModel& opened, const BenchFlags& flags, const SessionConfig& config) {
  SweepSessions sessions;
  sessions.all.push_back(opened.session.get());
  for (int i = 1; i < flags.sessions; ++i) {
    auto session = Session::Create(*opened.runtime, flags.model, config);
    if (!session.ok()) {
      return MakeError(session.error().kind,
                       fmt::format("creating session {} of {}: {}", i + 1, flags.sessions, session.error().message));
    }
    sessions.all.push_back(session->get());
    sessions.extra.push_back(std::move(session).value());
  }
  return sessions;
}

BenchSettings SettingsFor(const BenchFlags& flags, const SessionConfig& config) {
  BenchSettings s;
  s.model = flags.model.string();
  s.onnxruntime = Runtime::Version();
  s.provider = flags.provider;
  s.intra_op_threads = config.intra_op_threads;
  s.inter_op_threads = config.inter_op_threads;
  s.execution_mode = flags.execution_mode;
  s.optimization_level = flags.opt_level;
  s.memory_pattern = config.enable_memory_pattern;
  s.cpu_arena = config.enable_cpu_arena;
  s.io_binding = flags.io_binding;
  s.concurrency = flags.concurrency;
  s.sessions = flags.sessions;
  s.warmup = flags.warmup;
  s.hardware_threads = std::thread::hardware_concurrency();
  s.cores = UsableCpus().cores;
  if (flags.duration.empty())
    s.iterations = flags.iterations;
  else
    s.duration = flags.duration;
  return s;
}

MeasureSweepOptions MeasuringOptions(const BenchFlags& flags, const BenchPlan& plan) {
  MeasureSweepOptions options;
  options.run.iterations = flags.iterations;
  options.run.duration_s = plan.duration_s.value_or(0);
  options.run.warmup = flags.warmup;
  options.run.concurrency = flags.concurrency;
  options.run.io_binding = flags.io_binding;
  options.model = flags.model;
  return options;
}

/// Bad inputs are the user's to fix (exit 2); a model that fails to run is a finding (exit 1).
int StopExitCode(SweepStopCause cause) {
  return cause == SweepStopCause::kInputs || cause == SweepStopCause::kInvalidInput ? kExitUsage : kExitFindings;
}

/// A sweep that measured nothing has no report: its failure is reported instead.
int ReportNothingMeasured(const SweepStop& stop, Format format) {
  if (stop.cause == SweepStopCause::kInputs) return FailBench(stop.error.message, format, kExitUsage);
  ReportFailure("bench", {*stop.diagnosis}, fmt::format("the model does not run at {}", stop.point->label), format);
  return StopExitCode(stop.cause);
}

}  // namespace

int RunBenchSweep(const BenchFlags& flags, Format format, const BenchPlan& plan) {
  int exit_code = kExitOk;
  const auto create_start = Clock::now();
  auto opened = OpenModel(flags.model, plan.config, format, "bench", &exit_code);
  if (!opened.ok()) return exit_code;
  BenchReport report;
  report.settings = SettingsFor(flags, plan.config);
  report.session_create_ms = std::chrono::duration<double, std::milli>(Clock::now() - create_start).count();
  auto sessions = CreateSessions(*opened, flags, plan.config);
  if (!sessions.ok()) return FailBench(sessions.error().message, format, kExitFindings);

  // Unnamed dimensions are INPUT:AXIS, and sizes no flag sets are found by running (SettleSizes).
  const std::vector<TensorSpec> named = NameUnnamedAxes(opened->inputs);
  auto points = ExpandShapePoints(named, plan.batches, plan.sweeps);
  if (!points.ok()) return FailBench(points.error().message, format, kExitUsage);
  const std::string batch_dim = FindBatchSymbol(named);
  BenchFlags settled = flags;
  auto notes = SettleBenchSizes(*opened, points->front(), settled);
  if (!notes.ok()) return FailBench(notes.error().message, format, kExitUsage);
  report.size_notes = std::move(notes).value();

  ProgressBar progress;
  MeasureSweepOptions options = MeasuringOptions(flags, plan);
  options.progress = [&](std::size_t i, double fraction) {
    progress.Show(fmt::format("{} ({}/{})", (*points)[i].label, i + 1, points->size()), fraction);
  };
  options.point_done = [&] { progress.Clear(); };
  const InputsForPoint inputs = PointInputMaker(*opened, settled);
  SweepOutcome outcome = MeasureSweep(sessions->all, *points, inputs, options);
  int stop_exit_code = kExitOk;
  if (outcome.stop) {
    if (outcome.points.empty()) return ReportNothingMeasured(*outcome.stop, format);
    report.stopped = outcome.stop->reason;
    stop_exit_code = StopExitCode(outcome.stop->cause);
  }
  report.points = std::move(outcome.points);
  SetThroughputVsBatchOne(report.points, batch_dim);

  if (flags.profile && !report.points.empty()) {
    std::vector<ShapePoint> measured;
    for (const auto& p : report.points) measured.push_back(p.point);
    auto profile = ProfileSweep(*opened->runtime, flags.model, plan.config, flags.profile_prefix, measured, inputs,
                                flags.profile_runs);
    if (!profile.ok()) {
      report.stopped = "profiling failed: " + profile.error().message;
      stop_exit_code = kExitFindings;
    } else {
      report.profile = std::move(profile).value();
      std::vector<OpTimeShare> shares;
      for (const auto& g : report.profile->op_types) shares.push_back({g.name, g.share});
      report.next_step = NextStepFromProfile(shares, flags.model.string());
    }
  }
  if (!flags.plot.empty()) {
    auto written = WriteTextFile(flags.plot,
                                 RenderBenchPlot(report, batch_dim, "ortkit bench " + flags.model.filename().string()));
    if (!written.ok()) return FailBench(written.error().message, format, kExitUsage);
  }
  report.peak_rss_bytes = PeakResidentBytes();
  PrintText(stdout, RenderBenchReport(flags, report, format, Style::ForStream(stdout)));
  if (report.stopped && format != Format::kText && format != Format::kJson)
    PrintNote("bench", "stopped early: " + *report.stopped);
  return stop_exit_code;
}

}  // namespace ortkit::cli
