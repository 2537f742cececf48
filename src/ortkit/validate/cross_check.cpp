#include "ortkit/validate/cross_check.h"

#include <algorithm>
#include <array>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/scratch_folder.h"
#include "ortkit/core/units.h"
#include "ortkit/runtime/profile.h"
#include "ortkit/runtime/run.h"
#include "ortkit/validate/purpose_judgement.h"

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

Result<CrossCheckPlan> ParseProviders(std::string_view mode, std::string_view value, const SessionConfig& base) {
  ORTKIT_ASSIGN_OR_RETURN(auto names, SplitPair(mode, value, "providers=cpu,cuda"));
  CrossCheckPlan plan;
  for (auto [name, side] : {std::pair{names.first, &plan.a}, std::pair{names.second, &plan.b}}) {
    if (Status available = CheckProviderAvailable(name); !available.ok())
      return MakeError(available.error().kind, fmt::format("cross-check '{}': {}", mode, available.error().message));
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

/// Nodes of a main graph whose placement a cross-check records (see CrossCheck).
constexpr std::size_t kMostProfiledNodes = 20'000;

SidePlacement UnknownPlacement(const std::string& reason) {
  SidePlacement placement;
  placement.note = "placement unknown: " + reason;
  return placement;
}

SidePlacement PlacementOf(const ProfileReport& profile) {
  SidePlacement placement;
  for (const auto& group : profile.providers) placement.providers.push_back({group.name, group.nodes});
  std::stable_sort(placement.providers.begin(), placement.providers.end(),
                   [](const auto& a, const auto& b) { return a.nodes > b.nodes; });
  placement.memory_copies = static_cast<std::int64_t>(profile.memory_copies.size());
  for (const auto& node : profile.cpu_fallbacks) placement.cpu_fallbacks.push_back({node.node, node.op_type});
  return placement;
}

/// Ends the profiler of a session created with profiling on and reads where its nodes ran.
SidePlacement CollectPlacement(Session& session) {
  auto profile = CollectProfile(session);
  if (!profile.ok()) return UnknownPlacement(profile.error().message);
  return PlacementOf(*profile);
}

struct SideRun {
  std::vector<NamedTensor> outputs;
  double run_ms = 0;
  SidePlacement placement;
};

/// The inputs of `inputs` that `session` declares.
Result<std::vector<NamedTensor>> DeclaredInputs(Session& session, std::span<const NamedTensor> inputs) {
  ORTKIT_ASSIGN_OR_RETURN(auto specs, DescribeInputs(session));
  std::vector<NamedTensor> declared;
  for (const auto& input : inputs) {
    if (std::any_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == input.name; }))
      declared.push_back(NamedTensor{input.name, input.tensor.Clone()});
  }
  return declared;
}

Result<SideRun> RunSide(Runtime& runtime, const ModelToLoad& shared, const CrossCheckSide& side,
                        std::span<const NamedTensor> inputs, const std::string& unprofiled) {
  const ModelToLoad& model = side.model.empty() ? shared : side.model;
  // Declared before the session, so that the session (whose runtime may still write its trace on
  // release) is gone before the folder is removed.
  auto scratch = unprofiled.empty() ? ScratchFolder::Create("cross-check") : Error{ErrorKind::kUnavailable, unprofiled};
  SessionConfig config = side.config;
  if (scratch.ok()) {
    config.enable_profiling = true;
    config.profile_prefix = (scratch->path() / "profile").string();
  }
  auto session = OpenModel(runtime, model, config);
  if (!session.ok()) return MakeError(session.error().kind, WithLabel(side.label, session.error().message));
  // A side with a model of its own (a fixed or converted copy) may have dropped inputs that no node
  // read: it is fed the inputs it declares.
  std::vector<NamedTensor> declared_inputs;
  if (!side.model.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(declared_inputs, DeclaredInputs(**session, inputs));
    inputs = declared_inputs;
  }
  SideRun run;
  const auto start = std::chrono::steady_clock::now();
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  run.run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outputs.ok()) return MakeError(outputs.error().kind, WithLabel(side.label, outputs.error().message));
  run.outputs = std::move(outputs).value();
  run.placement = scratch.ok() ? CollectPlacement(**session) : UnknownPlacement(scratch.error().message);
  return run;
}

}  // namespace

std::string ModelToLoad::Describe() const {
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

Result<std::unique_ptr<Session>> OpenModel(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config) {
  if (!model.bytes.empty()) return Session::CreateFromBytes(runtime, model.bytes, config);
  if (model.path.empty()) return MakeError(ErrorKind::kInvalidArgument, "no model given: neither a path nor bytes");
  return Session::Create(runtime, model.path, config);
}

Result<CrossCheckReport> CrossCheck(Runtime& runtime, const ModelToLoad& model, const CrossCheckPlan& plan,
                                    std::span<const NamedTensor> inputs, const ToleranceRules& tolerance,
                                    const onnx::ModelProto* purpose_model) {
  CrossCheckReport report;
  report.label_a = plan.a.label;
  report.label_b = plan.b.label;
  // The profiler holds an event per node and run in memory (about 8 KB each, measured on a chain of
  // 100,000 nodes): past kMostProfiledNodes the placement is not recorded rather than paid for in gigabytes.
  std::string unprofiled;
  if (purpose_model != nullptr) {
    if (const std::size_t nodes = static_cast<std::size_t>(purpose_model->graph().node_size());
        nodes > kMostProfiledNodes) {
      unprofiled = fmt::format(
          "not recorded for a graph of {} nodes (the profiler would hold an event for each in "
          "memory; ortkit records it up to {})",
          nodes, kMostProfiledNodes);
    }
  }
  ORTKIT_ASSIGN_OR_RETURN(SideRun expected, RunSide(runtime, model, plan.a, inputs, unprofiled));
  ORTKIT_ASSIGN_OR_RETURN(SideRun actual, RunSide(runtime, model, plan.b, inputs, unprofiled));
  report.run_ms_a = expected.run_ms;
  report.run_ms_b = actual.run_ms;
  report.placement_a = std::move(expected.placement);
  report.placement_b = std::move(actual.placement);
  report.comparison = CompareOutputs(expected.outputs, actual.outputs, tolerance);
  // Two runs that both give NaN at the same places agree on nothing: on made-up inputs a NaN is a
  // finding (an unstable op, or inputs the model cannot take), never a pass.
  for (auto& o : report.comparison.outputs) {
    if (o.nan_both == 0) continue;
    o.passed = false;
    const std::string both = fmt::format("{} of {} elements are NaN on both sides", o.nan_both, o.elements);
    o.problem = o.problem.empty() ? both : o.problem + "; " + both;
  }
  if (purpose_model != nullptr) {
    report.quantization = SummarizeQuantization(*purpose_model);
    JudgeByPurpose(report.comparison, expected.outputs, actual.outputs, *purpose_model, report.quantization);
  }
  return report;
}

Result<CrossCheckReport> CrossCheck(Runtime& runtime, const ModelToLoad& model, const SessionConfig& a,
                                    const SessionConfig& b, std::span<const NamedTensor> inputs,
                                    const ToleranceRules& tolerance) {
  auto [label_a, label_b] = LabelSides(a, b);
  return CrossCheck(runtime, model, CrossCheckPlan{{label_a, a, {}}, {label_b, b, {}}}, inputs, tolerance);
}

nlohmann::json SidePlacement::ToJson() const {
  nlohmann::json providers_json = nlohmann::json::array();
  for (const auto& p : providers) providers_json.push_back({{"name", p.name}, {"nodes", p.nodes}});
  nlohmann::json fallbacks_json = nlohmann::json::array();
  for (const auto& f : cpu_fallbacks) fallbacks_json.push_back({{"node", f.node}, {"op_type", f.op_type}});
  nlohmann::json j = {{"providers", std::move(providers_json)},
                      {"memory_copies", memory_copies},
                      {"cpu_fallbacks", std::move(fallbacks_json)}};
  if (!known()) j["note"] = note;
  return j;
}

nlohmann::json CrossCheckReport::ToJson() const {
  nlohmann::json j = comparison.ToJson();
  j["reference"] = {{"label", label_a}, {"run_ms", run_ms_a}};
  j["checked"] = {{"label", label_b}, {"run_ms", run_ms_b}};
  j["placement"] = {{"a", placement_a.ToJson()}, {"b", placement_b.ToJson()}};
  if (quantization.quantized()) j["quantization"] = quantization.ToJson();
  return j;
}

}  // namespace ortkit
