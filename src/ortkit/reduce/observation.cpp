#include "ortkit/reduce/observation.h"

#include <fmt/format.h>

#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/reduce/fed_values.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/tensor_stats.h"

namespace ortkit {
namespace {

Observation Passed(std::string why) {
  Observation o;
  o.message = std::move(why);
  return o;
}

Observation Failure(FailureKind kind, const Diagnosis& diagnosis, const std::string& message) {
  Observation o;
  o.seen = kind;
  o.code = diagnosis.code;
  o.node = diagnosis.location.node;
  o.message = message;
  return o;
}

/// The first output holding NaN or Inf, described; nullopt when none does.
std::optional<std::string> NonFiniteOutput(std::span<const NamedTensor> outputs) {
  for (const auto& out : outputs) {
    if (!HoldsNonFinite(out.tensor)) continue;
    const TensorStats stats = ComputeStats(out.tensor);
    return fmt::format("output '{}' holds {} NaN and {} Inf of {} elements", out.name, stats.nan, stats.inf,
                       stats.count);
  }
  return std::nullopt;
}

Observation ObserveDivergence(Runtime& runtime, const ProbeSettings& settings, std::string_view bytes,
                              std::span<const NamedTensor> inputs) {
  if (!settings.plan) return Passed("no cross-check plan");
  auto report = CrossCheck(runtime, ModelToLoad{{}, bytes}, *settings.plan, inputs, settings.tolerance);
  if (!report.ok()) return Passed(report.error().message);
  if (report->Passed()) return Passed("the outputs agree within tolerance");
  Observation o;
  o.seen = FailureKind::kDiverge;
  for (const auto& c : report->comparison.outputs) {
    if (c.passed) continue;
    o.message = fmt::format("output '{}' differs between {} and {}: {}; max abs error {:.3g}", c.name, report->label_a,
                            report->label_b, c.problem, c.max_abs_error);
    break;
  }
  if (o.message.empty()) {
    o.message = fmt::format("the outputs of {} and {} differ in names", report->label_a, report->label_b);
  }
  o.comparison = std::move(report).value();
  return o;
}

Observation ObserveCommand(const ProbeSettings& settings, std::string_view bytes, std::span<const NamedTensor> inputs) {
  if (!settings.command) return Passed("no check command");
  auto result = RunCommandCheck(*settings.command, bytes, inputs);
  if (!result.ok()) return Passed(result.error().message);
  if (!result->failed) return Passed(std::move(result->summary));
  Observation o;
  o.seen = FailureKind::kCommand;
  o.message = std::move(result->summary);
  return o;
}

}  // namespace

Observation Observe(Runtime& runtime, const ProbeSettings& settings, std::string_view model_bytes,
                    std::span<const NamedTensor> inputs) {
  if (settings.kind == FailureKind::kDiverge) return ObserveDivergence(runtime, settings, model_bytes, inputs);
  if (settings.kind == FailureKind::kCommand) return ObserveCommand(settings, model_bytes, inputs);
  auto session = Session::CreateFromBytes(runtime, model_bytes, settings.session);
  if (!session.ok()) {
    if (settings.kind != FailureKind::kLoad && settings.kind != FailureKind::kAuto)
      return Passed("it does not load: " + session.error().message);
    return Failure(FailureKind::kLoad, TranslateSessionError(session.error()), session.error().message);
  }
  if (settings.kind == FailureKind::kLoad) return Passed("ONNX Runtime loads it");
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  if (!outputs.ok()) {
    if (settings.kind == FailureKind::kNan) return Passed("its run fails: " + outputs.error().message);
    const Diagnosis d = TranslateRuntimeError(outputs.error().message, {}, /*during_run=*/true);
    return Failure(FailureKind::kRun, d, outputs.error().message);
  }
  if (settings.kind == FailureKind::kRun) return Passed("it runs");
  for (const auto& in : inputs) {
    if (HoldsNonFinite(in.tensor)) return Passed(fmt::format("input '{}' holds NaN or Inf already", in.name));
  }
  if (auto found = NonFiniteOutput(*outputs)) {
    Observation o;
    o.seen = FailureKind::kNan;
    o.message = std::move(*found);
    return o;
  }
  return Passed("it runs and every output is finite");
}

}  // namespace ortkit
