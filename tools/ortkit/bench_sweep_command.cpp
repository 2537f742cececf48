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

BenchSettings SettingsFor(const BenchFlags& flags, const BenchPlan& plan) {
  BenchSettings s;
  s.model = flags.model.string();
  s.onnxruntime = Runtime::Version();
  s.provider = plan.config.provider;
  s.intra_op_threads = plan.config.intra_op_threads;
  s.inter_op_threads = plan.config.inter_op_threads;
  s.execution_mode = flags.ExecutionMode();
  s.optimization_level = flags.opt_level;
  s.memory_pattern = plan.config.enable_memory_pattern;
  s.cpu_arena = plan.config.enable_cpu_arena;
  s.io_binding = plan.run.io_binding;
  s.concurrency = plan.run.concurrency;
  s.sessions = flags.sessions;
  s.warmup = plan.run.warmup;
  s.hardware_threads = std::thread::hardware_concurrency();
  s.cores = UsableCpus().cores;
  if (flags.duration.empty())
    s.iterations = plan.run.iterations;
  else
    s.duration = flags.duration;
  return s;
}

/// Bad inputs are the user's to fix (exit 2); a model that fails to run is a finding (exit 1).
ErrorKind StopKind(SweepStopCause cause) {
  return cause == SweepStopCause::kInputs || cause == SweepStopCause::kInvalidInput ? ErrorKind::kInvalidArgument
                                                                                    : ErrorKind::kRuntime;
}

/// A sweep that measured nothing has no report: its failure is reported instead.
int ReportNothingMeasured(const SweepStop& stop, Format format) {
  if (stop.cause == SweepStopCause::kInputs) return Fail("bench", AsUsageError(stop.error), format);
  return Fail("bench", MakeError(StopKind(stop.cause), fmt::format("the model does not run at {}", stop.point->label)),
              format, {*stop.diagnosis});
}

/// The sweep's shapes: unnamed dimensions are INPUT:AXIS, and sizes no flag sets are found by running
/// (SettleBenchSizes) into `inputs`; their notes go into `report`.
Result<std::vector<ShapePoint>> PlanPoints(OpenedModel& opened, const BenchFlags& flags, const BenchPlan& plan,
                                           BenchInputSources& inputs, BenchReport& report) {
  const std::vector<TensorSpec> named = NameUnnamedAxes(opened.inputs);
  ORTKIT_ASSIGN_OR_RETURN(auto points, ExpandShapePoints(named, plan.batches, plan.sweeps));
  ORTKIT_ASSIGN_OR_RETURN(inputs, ParseBenchInputs(flags));
  ORTKIT_ASSIGN_OR_RETURN(report.size_notes, SettleBenchSizes(opened, points.front(), inputs));
  return points;
}

/// --profile: every measured point again in a profiled session. A failure stops nothing measured.
void Profile(OpenedModel& opened, const BenchFlags& flags, const BenchPlan& plan, const InputsForPoint& inputs,
             BenchReport& report, int& exit_code) {
  std::vector<ShapePoint> measured;
  for (const auto& p : report.points) measured.push_back(p.point);
  auto profile = ProfileSweep(*opened.runtime, flags.model, plan.config, flags.profile_prefix, measured, inputs,
                              flags.profile_runs);
  if (!profile.ok()) {
    report.stopped = "profiling failed: " + profile.error().message;
    exit_code = kExitFindings;
  } else {
    report.profile = std::move(profile).value();
    std::vector<OpTimeShare> shares;
    for (const auto& g : report.profile->op_types) shares.push_back({g.name, g.share});
    report.next_step = NextStepFromProfile(shares, flags.model.string());
  }
}

}  // namespace

int RunBenchSweep(const BenchFlags& flags, const BenchPlan& plan) {
  const Format format = flags.format;
  int exit_code = kExitOk;
  const auto create_start = Clock::now();
  auto opened = OpenModel(flags.model, plan.config, format, "bench", &exit_code);
  if (!opened.ok()) return exit_code;
  BenchReport report;
  report.settings = SettingsFor(flags, plan);
  report.session_create_ms = std::chrono::duration<double, std::milli>(Clock::now() - create_start).count();
  auto sessions = CreateSessions(*opened, flags, plan.config);
  // A session the runtime does not create is the model's (exit 1), as the first one's would be.
  if (!sessions.ok()) return Fail("bench", MakeError(ErrorKind::kRuntime, sessions.error().message), format);
  BenchInputSources sources;
  auto points = PlanPoints(*opened, flags, plan, sources, report);
  if (!points.ok()) return Fail("bench", AsUsageError(points.error()), format);

  ProgressBar progress;
  MeasureSweepOptions options;
  options.run = plan.run;
  options.model = flags.model;
  options.progress = [&](std::size_t i, double fraction) {
    progress.Show(fmt::format("{} ({}/{})", (*points)[i].label, i + 1, points->size()), fraction);
  };
  options.point_done = [&] { progress.Clear(); };
  const InputsForPoint inputs = PointInputMaker(*opened, sources);
  SweepOutcome outcome = MeasureSweep(sessions->all, *points, inputs, options);
  if (outcome.stop) {
    if (outcome.points.empty()) return ReportNothingMeasured(*outcome.stop, format);
    report.stopped = outcome.stop->reason;
    exit_code = ExitCodeFor(StopKind(outcome.stop->cause));
  }
  report.points = std::move(outcome.points);
  const std::string batch_dim = FindBatchSymbol(NameUnnamedAxes(opened->inputs));
  SetThroughputVsBatchOne(report.points, batch_dim);
  if (flags.profile && !report.points.empty()) Profile(*opened, flags, plan, inputs, report, exit_code);
  if (!flags.plot.empty()) {
    auto written = WriteTextFile(flags.plot,
                                 RenderBenchPlot(report, batch_dim, "ortkit bench " + flags.model.filename().string()));
    if (!written.ok()) return Fail("bench", AsUsageError(written.error()), format);
  }
  report.peak_rss_bytes = PeakResidentBytes();
  if (!flags.report_page.empty()) {
    if (auto written = WriteBenchPage(flags, report); !written.ok())
      return Fail("bench", AsUsageError(written.error()), format);
  }
  PrintText(stdout, RenderBenchReport(flags, report, format, Style::ForStream(stdout)));
  if (report.stopped && format != Format::kText && format != Format::kJson)
    PrintNote("bench", "stopped early: " + *report.stopped);
  return exit_code;
}

}  // namespace ortkit::cli
