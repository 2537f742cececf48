#include "ortkit/validate/cross_check.h"

#include <algorithm>
#include <array>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/units.h"
#include "ortkit/runtime/run.h"

namespace ortkit {
namespace {

struct OptimizationLevelName {
  std::string_view name;
  OptimizationLevel level;
};

constexpr std::array kOptimizationLevels = std::to_array<OptimizationLevelName>({
    {"off", OptimizationLevel::kOff},
    {"basic", OptimizationLevel::kBasic},
    {"extended", OptimizationLevel::kExtended},
    {"layout", OptimizationLevel::kLayout},
    {"all", OptimizationLevel::kAll},
});

const OptimizationLevelName* FindOptimizationLevel(std::string_view name) {
  auto it = std::find_if(kOptimizationLevels.begin(), kOptimizationLevels.end(),
                         [&](const OptimizationLevelName& l) { return l.name == name; });
  return it == kOptimizationLevels.end() ? nullptr : &*it;
}

std::vector<std::string_view> OptimizationLevelNames() {
  std::vector<std::string_view> names;
  names.reserve(kOptimizationLevels.size());
  for (const auto& l : kOptimizationLevels) names.push_back(l.name);
  return names;
}

/// "a,b" -> {"a", "b"}; anything but two non-empty names is an error naming `mode`.
Result<std::pair<std::string, std::string>> SplitPair(std::string_view mode, std::string_view list,
                                                      std::string_view example) {
  const auto comma = list.find(',');
  if (comma == std::string_view::npos || list.find(',', comma + 1) != std::string_view::npos || comma == 0 ||
      comma + 1 == list.size()) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("cross-check '{}' needs exactly two names separated by a comma, e.g. '{}'", mode, example));
  }
  std::pair<std::string, std::string> names{std::string(list.substr(0, comma)), std::string(list.substr(comma + 1))};
  if (names.first == names.second) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("cross-check '{}' names '{}' twice: both sides would be the same run", mode, names.first));
  }
  return names;
}

Result<CrossCheckPlan> ParseOptimizationLevels(std::string_view mode, std::string_view value,
                                               const SessionConfig& base) {
  std::pair<std::string, std::string> names{"off", "all"};
  if (!value.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(names, SplitPair(mode, value, "opt-levels=off,all"));
  }
  CrossCheckPlan plan;
  for (auto [name, side] : {std::pair{names.first, &plan.a}, std::pair{names.second, &plan.b}}) {
    const OptimizationLevelName* level = FindOptimizationLevel(name);
    if (level == nullptr) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("cross-check '{}': unknown optimisation level '{}'; levels: {}", mode, name,
                                   fmt::join(OptimizationLevelNames(), ", ")));
    }
    side->config = base;
    side->config.optimization_level = level->level;
    side->label = OptimizationLabel(level->level);
  }
  return plan;
}

/// Short names of the known providers this ONNX Runtime build offers.
std::vector<std::string> AvailableShortNames() {
  const auto available = Runtime::AvailableProviders();
  std::vector<std::string> names;
  for (auto short_name : KnownProviderNames()) {
    if (std::find(available.begin(), available.end(), FindProvider(short_name)->ort_name) != available.end()) {
      names.emplace_back(short_name);
    }
  }
  return names;
}

Result<CrossCheckPlan> ParseProviders(std::string_view mode, std::string_view value, const SessionConfig& base) {
  ORTKIT_ASSIGN_OR_RETURN(auto names, SplitPair(mode, value, "providers=cpu,cuda"));
  const auto available = AvailableShortNames();
  CrossCheckPlan plan;
  for (auto [name, side] : {std::pair{names.first, &plan.a}, std::pair{names.second, &plan.b}}) {
    if (FindProvider(name) == nullptr) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("cross-check '{}': unknown execution provider '{}'; known: {}", mode, name,
                                   fmt::join(KnownProviderNames(), ", ")));
    }
    if (std::find(available.begin(), available.end(), name) == available.end()) {
      return MakeError(
          ErrorKind::kUnavailable,
          fmt::format("cross-check '{}': execution provider '{}' is not available in this ONNX Runtime build "
                      "({}); available: {}",
                      mode, name, Runtime::Version(), fmt::join(available, ", ")));
    }
    side->config = base;
    side->config.provider = name;
    side->label = name;
  }
  return plan;
}

using ModeParser = Result<CrossCheckPlan> (*)(std::string_view mode, std::string_view value, const SessionConfig& base);

struct CrossCheckMode {
  std::string_view name;
  ModeParser parse;
  std::string_view example;
};

constexpr std::array kModes = std::to_array<CrossCheckMode>({
    {"opt-levels", ParseOptimizationLevels, "opt-levels"},
    {"providers", ParseProviders, "providers=cpu,cuda"},
});

std::string WithLabel(const std::string& label, const std::string& message) {
  return fmt::format("{}: {}", label, message);
}

Result<std::vector<NamedTensor>> RunSide(Runtime& runtime, const ModelSource& shared, const CrossCheckSide& side,
                                         std::span<const NamedTensor> inputs, double& run_ms) {
  const ModelSource& model = side.model.empty() ? shared : side.model;
  auto session = OpenModel(runtime, model, side.config);
  if (!session.ok()) return MakeError(session.error().kind, WithLabel(side.label, session.error().message));
  // A side with a model of its own (a fixed or converted copy) may have dropped inputs that no node
  // read: it is fed the inputs it declares.
  std::vector<NamedTensor> declared_inputs;
  if (!side.model.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(auto specs, DescribeInputs(**session));
    for (const auto& input : inputs) {
      if (std::any_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == input.name; }))
        declared_inputs.push_back(NamedTensor{input.name, input.tensor.Clone()});
    }
    inputs = declared_inputs;
  }
  const auto start = std::chrono::steady_clock::now();
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outputs.ok()) return MakeError(outputs.error().kind, WithLabel(side.label, outputs.error().message));
  return outputs;
}

}  // namespace

std::string ModelSource::Describe() const {
  if (!bytes.empty()) return fmt::format("the model in memory ({})", HumanBytes(bytes.size()));
  return fmt::format("'{}'", path.string());
}

std::string OptimizationLabel(OptimizationLevel level) {
  auto it = std::find_if(kOptimizationLevels.begin(), kOptimizationLevels.end(),
                         [&](const OptimizationLevelName& l) { return l.level == level; });
  if (it == kOptimizationLevels.end()) return fmt::format("optimisations level {}", OptimizationLevelNumber(level));
  return fmt::format("optimisations {}", it->name);
}

Result<CrossCheckPlan> ParseCrossCheckMode(std::string_view mode, const SessionConfig& base) {
  const auto equals = mode.find('=');
  const std::string_view name = mode.substr(0, equals);
  const std::string_view value = equals == std::string_view::npos ? std::string_view() : mode.substr(equals + 1);
  auto it = std::find_if(kModes.begin(), kModes.end(), [&](const CrossCheckMode& m) { return m.name == name; });
  if (it == kModes.end()) {
    std::vector<std::string_view> examples;
    examples.reserve(kModes.size());
    for (const auto& m : kModes) examples.push_back(m.example);
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("unknown cross-check '{}'; use one of: {}", mode, fmt::join(examples, ", ")));
  }
  return it->parse(mode, value, base);
}

std::pair<std::string, std::string> LabelSides(const SessionConfig& a, const SessionConfig& b) {
  if (a.provider != b.provider) return {a.provider, b.provider};
  if (a.optimization_level != b.optimization_level) {
    return {OptimizationLabel(a.optimization_level), OptimizationLabel(b.optimization_level)};
  }
  return {"first run", "second run"};
}

Result<std::unique_ptr<Session>> OpenModel(Runtime& runtime, const ModelSource& model, const SessionConfig& config) {
  if (!model.bytes.empty()) return Session::CreateFromBytes(runtime, model.bytes, config);
  if (model.path.empty()) return MakeError(ErrorKind::kInvalidArgument, "no model given: neither a path nor bytes");
  return Session::Create(runtime, model.path, config);
}

Result<CrossCheckReport> CrossCheck(Runtime& runtime, const ModelSource& model, const CrossCheckPlan& plan,
                                    std::span<const NamedTensor> inputs, const ToleranceRules& tolerance) {
  CrossCheckReport report;
  report.label_a = plan.a.label;
  report.label_b = plan.b.label;
  ORTKIT_ASSIGN_OR_RETURN(auto expected, RunSide(runtime, model, plan.a, inputs, report.run_ms_a));
  ORTKIT_ASSIGN_OR_RETURN(auto actual, RunSide(runtime, model, plan.b, inputs, report.run_ms_b));
  report.comparison = CompareOutputs(expected, actual, tolerance);
  // Two runs that both give NaN at the same places agree on nothing: on made-up inputs a NaN is a
  // finding (an unstable op, or inputs the model cannot take), never a pass.
  for (auto& o : report.comparison.outputs) {
    if (o.nan_both == 0) continue;
    o.passed = false;
    const std::string both = fmt::format("{} of {} elements are NaN on both sides", o.nan_both, o.elements);
    o.problem = o.problem.empty() ? both : o.problem + "; " + both;
  }
  return report;
}

Result<CrossCheckReport> CrossCheck(Runtime& runtime, const ModelSource& model, const SessionConfig& a,
                                    const SessionConfig& b, std::span<const NamedTensor> inputs,
                                    const ToleranceRules& tolerance) {
  auto [label_a, label_b] = LabelSides(a, b);
  return CrossCheck(runtime, model, CrossCheckPlan{{label_a, a, {}}, {label_b, b, {}}}, inputs, tolerance);
}

nlohmann::json CrossCheckReport::ToJson() const {
  nlohmann::json j = comparison.ToJson();
  j["reference"] = {{"label", label_a}, {"run_ms", run_ms_a}};
  j["checked"] = {{"label", label_b}, {"run_ms", run_ms_b}};
  return j;
}

}  // namespace ortkit
