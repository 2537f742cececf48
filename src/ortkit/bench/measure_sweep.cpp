#include "ortkit/bench/measure_sweep.h"

#include <fmt/format.h>

#include "ortkit/diagnose/runtime_messages.h"

namespace ortkit {
namespace {

SweepStop InputsStop(const ShapePoint& point, Error error) {
  SweepStop stop;
  stop.cause = SweepStopCause::kInputs;
  stop.point = &point;
  stop.reason = fmt::format("{}: cannot make inputs: {}", point.label, error.message);
  stop.error = std::move(error);
  return stop;
}

// A run that failed before measuring began: the session rejected the inputs, or the runtime failed.
SweepStop RunStop(const ShapePoint& point, Error error, const std::filesystem::path& model) {
  SweepStop stop;
  stop.point = &point;
  const bool input_problem = error.kind == ErrorKind::kInvalidArgument;
  stop.cause = input_problem ? SweepStopCause::kInvalidInput : SweepStopCause::kRuntime;
  Location where;
  where.file = model.string();
  stop.diagnosis = input_problem ? Diagnose("runtime.invalid-input", error.message, where)
                                 : TranslateRuntimeError(error.message, where, /*during_run=*/true);
  stop.reason = fmt::format("{}: {}", point.label, stop.diagnosis->message);
  stop.error = std::move(error);
  return stop;
}

SweepStop FailedRunStop(const ShapePoint& point, const BenchResult& result) {
  SweepStop stop;
  stop.cause = SweepStopCause::kRunFailed;
  stop.point = &point;
  stop.reason =
      fmt::format("{}: a run failed after {} measured runs: {}", point.label, result.runs, result.failure->message);
  stop.error = *result.failure;
  return stop;
}

}  // namespace

SweepOutcome MeasureSweep(std::span<Session* const> sessions, const std::vector<ShapePoint>& points,
                          const InputsForPoint& inputs_for_point, const MeasureSweepOptions& options) {
  SweepOutcome outcome;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ShapePoint& point = points[i];
    auto inputs = inputs_for_point(point);
    if (!inputs.ok()) {
      outcome.stop = InputsStop(point, inputs.error());
      break;
    }
    BenchOptions run = options.run;
    run.rows_per_run = point.batch;
    if (options.progress) run.progress = [&](double fraction) { options.progress(i, fraction); };
    auto result = RunBenchmark(sessions, inputs->tensors, run);
    if (options.point_done) options.point_done();
    if (!result.ok()) {
      outcome.stop = RunStop(point, result.error(), options.model);
      break;
    }
    if (result->failure) outcome.stop = FailedRunStop(point, *result);
    outcome.points.push_back({point, std::move(inputs->inputs), 0, std::move(result).value()});
    if (outcome.stop) break;
  }
  return outcome;
}

Result<ProfileReport> ProfileSweep(Runtime& runtime, const std::filesystem::path& model, SessionConfig config,
                                   const std::string& profile_prefix, const std::vector<ShapePoint>& points,
                                   const InputsForPoint& inputs_for_point, std::int64_t runs_per_point) {
  config.enable_profiling = true;
  config.profile_prefix = profile_prefix;
  ORTKIT_ASSIGN_OR_RETURN(auto session, Session::Create(runtime, model, config));
  for (const auto& point : points) {
    ORTKIT_ASSIGN_OR_RETURN(auto inputs, inputs_for_point(point));
    BenchOptions options;
    options.iterations = runs_per_point;
    options.warmup = 0;
    auto profiled = RunBenchmark(*session, inputs.tensors, options);
    if (!profiled.ok()) {
      (void)EndProfiling(*session);
      return profiled.error();
    }
  }
  ORTKIT_ASSIGN_OR_RETURN(auto trace, EndProfiling(*session));
  return ReadProfileTrace(trace, config.provider);
}

}  // namespace ortkit
