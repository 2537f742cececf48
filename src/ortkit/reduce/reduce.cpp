#include "ortkit/reduce/reduce.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/check/onnx_checker.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/graph_walk.h"
#include "ortkit/model/model_file.h"
#include "ortkit/reduce/command_check.h"
#include "ortkit/reduce/fed_values.h"
#include "ortkit/reduce/graph_slice.h"
#include "ortkit/reduce/observation.h"
#include "ortkit/validate/cross_check.h"

namespace ortkit {
namespace {

using Clock = std::chrono::steady_clock;

/// How the original fails, which every candidate must match.
struct Expectation {
  FailureKind kind = FailureKind::kAuto;
  std::string code;                          ///< load, run
  std::string node;                          ///< load, run: named by the original's message
  std::optional<std::size_t> node_position;  ///< that node's position, when it is a node of the graph
  std::string message;                       ///< --message
};

bool Matches(const Expectation& expected, const Observation& seen) {
  if (seen.seen != expected.kind) return false;
  const bool runtime_error = expected.kind == FailureKind::kLoad || expected.kind == FailureKind::kRun;
  if (runtime_error && seen.code != expected.code) return false;
  if (expected.node_position && !seen.node.empty() && seen.node != expected.node) return false;
  return expected.message.empty() || seen.message.find(expected.message) != std::string::npos;
}

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// The search over node subsets, with what it has found so far.
class Search {
 public:
  Search(Runtime& runtime, const GraphSlicer& slicer, FedValues& values, const ProbeSettings& probe,
         const Expectation& expected, const ReduceOptions& options, Clock::time_point start)
      : runtime_(runtime),
        slicer_(slicer),
        values_(values),
        probe_(probe),
        expected_(expected),
        options_(options),
        start_(start) {}

  /// Runs the three phases; false when even the whole graph, cut out, does not fail as the original.
  bool Run();

  NodeSubset best;
  Observation best_observation;
  std::size_t candidates = 0;
  bool out_of_time = false;

 private:
  bool Try(const NodeSubset& subset);
  bool Evaluate(const NodeSubset& subset, Observation& seen);
  std::size_t ShortestPrefix();
  std::size_t LatestStart(std::size_t last);
  void PrefetchInside(const NodeSubset& subset);
  void RemoveNodes(NodeSubset subset);

  Runtime& runtime_;
  const GraphSlicer& slicer_;
  FedValues& values_;
  const ProbeSettings& probe_;
  const Expectation& expected_;
  const ReduceOptions& options_;
  const Clock::time_point start_;  ///< of the whole reduction: the budget counts from there
  std::string phase_ = "whole";
  std::map<NodeSubset, bool> tried_;
};

bool Search::Try(const NodeSubset& subset) {
  if (subset.empty()) return false;
  if (auto it = tried_.find(subset); it != tried_.end()) return it->second;
  if (expected_.node_position && !std::binary_search(subset.begin(), subset.end(), *expected_.node_position))
    return false;
  if (options_.time_budget.count() > 0 && Clock::now() - start_ >= options_.time_budget) {
    out_of_time = true;
    return false;
  }
  ++candidates;
  Observation seen;
  const bool fails = Evaluate(subset, seen);
  tried_.emplace(subset, fails);
  if (fails && (best_observation.seen == FailureKind::kAuto || subset.size() < best.size())) {
    best = subset;
    best_observation = std::move(seen);
  }
  if (options_.on_progress) options_.on_progress({phase_, candidates, best.size(), SecondsSince(start_)});
  return fails;
}

bool Search::Evaluate(const NodeSubset& subset, Observation& seen) {
  const SliceBoundary boundary = slicer_.BoundaryOf(subset);
  if (!values_.Provide(boundary.inputs)) return false;
  auto model = slicer_.Build(subset, [&](const std::string& name) { return values_.TypeOf(name); });
  if (!model.ok()) return false;
  const std::string bytes = model->SerializeAsString();
  std::vector<NamedTensor> feeds;
  if (expected_.kind != FailureKind::kLoad) {
    auto made = values_.Feeds(boundary.inputs);
    if (!made.ok()) return false;
    feeds = std::move(made).value();
  }
  seen = Observe(runtime_, probe_, bytes, feeds);
  return Matches(expected_, seen);
}

std::size_t Search::ShortestPrefix() {
  phase_ = "prefix";
  const std::size_t n = slicer_.size();
  // [0, lo] is taken not to fail, [0, hi] fails; lo = -1 is the empty prefix.
  std::ptrdiff_t lo = expected_.node_position ? static_cast<std::ptrdiff_t>(*expected_.node_position) - 1 : -1;
  std::ptrdiff_t hi = static_cast<std::ptrdiff_t>(n) - 1;
  while (hi - lo > 1 && !out_of_time) {
    const std::ptrdiff_t mid = lo + (hi - lo) / 2;
    if (Try(GraphSlicer::Range(0, static_cast<std::size_t>(mid)))) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return static_cast<std::size_t>(hi);
}

std::size_t Search::LatestStart(std::size_t last) {
  phase_ = "start";
  // [lo, last] fails, [hi, last] is taken not to.
  std::size_t lo = 0;
  std::size_t hi = last + 1;
  if (expected_.node_position) hi = std::min(hi, *expected_.node_position + 1);
  while (hi - lo > 1 && !out_of_time) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (Try(GraphSlicer::Range(mid, last))) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// Computes, in as few runs as it can, the values produced and read inside `subset`: the graph inputs
/// that removing a node of it makes.
void Search::PrefetchInside(const NodeSubset& subset) {
  if (!values_.computes()) return;
  const SliceBoundary boundary = slicer_.BoundaryOf(subset);
  std::vector<std::string> inside;
  for (std::size_t p : subset) {
    for (const auto& read : slicer_.Reads(p)) {
      auto producer = slicer_.ProducerOf(read);
      if (producer && std::binary_search(subset.begin(), subset.end(), *producer)) inside.push_back(read);
    }
  }
  (void)values_.Provide(inside, /*split=*/true);
}

/// ddmin: remove chunks of the subset, halving them while nothing can go, down to single nodes.
void Search::RemoveNodes(NodeSubset subset) {
  phase_ = "nodes";
  std::size_t chunks = 2;
  while (subset.size() >= 2 && !out_of_time) {
    chunks = std::min(chunks, subset.size());
    bool removed = false;
    for (std::size_t c = 0; c < chunks && !out_of_time; ++c) {
      const std::size_t begin = subset.size() * c / chunks;
      const std::size_t end = subset.size() * (c + 1) / chunks;
      NodeSubset rest(subset.begin(), subset.begin() + static_cast<std::ptrdiff_t>(begin));
      rest.insert(rest.end(), subset.begin() + static_cast<std::ptrdiff_t>(end), subset.end());
      if (Try(rest)) {
        subset = std::move(rest);
        chunks = std::max<std::size_t>(chunks - 1, 2);
        removed = true;
        break;
      }
    }
    if (removed) continue;
    if (chunks >= subset.size()) break;
    chunks = std::min(chunks * 2, subset.size());
  }
}

bool Search::Run() {
  const std::size_t n = slicer_.size();
  if (n == 0 || !Try(GraphSlicer::Range(0, n - 1))) return false;
  const std::size_t last = ShortestPrefix();
  const std::size_t first = LatestStart(last);
  const NodeSubset range = GraphSlicer::Range(first, last);
  PrefetchInside(range);
  RemoveNodes(range);
  return true;
}

// ---- Setting up.

ReproCheck::Side SideOf(const SessionConfig& config) {
  const ProviderInfo* provider = FindProvider(config.provider);
  return {provider != nullptr ? std::string(provider->ort_name) : config.provider, config.optimization_level};
}

/// Pieces of a runtime message that the Python API's message holds as well: the run wrapper naming
/// the node, and the runtime's last sentence without source locations and failed conditions.
std::vector<std::string> MessageFragments(std::string text) {
  static const std::regex kAdapter(R"re(^(?:loading (?:'.*?'|the model)|running the model) on [\w-]+: )re");
  static const std::regex kLocation(R"re([^\s:]*\.(?:h|hpp|cc|cpp|cu|inc):\d+ )re");
  constexpr std::size_t kMaxFragment = 120;
  if (text.size() > 4096) text.resize(4096);
  text = std::regex_replace(text, kAdapter, "", std::regex_constants::format_first_only);
  text = text.substr(0, text.find('\n'));
  std::vector<std::string> fragments;
  constexpr std::string_view kStatus = " Status Message: ";
  if (const std::size_t status = text.find(kStatus); status != std::string::npos) {
    fragments.push_back(text.substr(0, status));
    text = text.substr(status + kStatus.size());
  }
  std::sregex_iterator it(text.begin(), text.end(), kLocation), end;
  std::size_t tail = 0;
  for (; it != end; ++it) tail = static_cast<std::size_t>(it->position() + it->length());
  text = text.substr(tail);
  if (const std::size_t was_false = text.rfind(" was false. "); was_false != std::string::npos)
    text = text.substr(was_false + 12);
  if (text.size() > kMaxFragment) text.resize(kMaxFragment);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (!text.empty()) fragments.push_back(text);
  return fragments;
}

ReproCheck MakeReproCheck(const ReduceOptions& options, const ProbeSettings& probe, const Observation& seen) {
  ReproCheck check;
  check.a = SideOf(probe.plan ? probe.plan->a.config : probe.session);
  if (probe.plan) check.b = SideOf(probe.plan->b.config);
  if (!options.message.empty()) {
    check.fragments = {options.message};
  } else if (seen.seen == FailureKind::kLoad || seen.seen == FailureKind::kRun) {
    check.fragments = MessageFragments(seen.message);
  }
  if (probe.command) {
    check.command = probe.command->argv;
    check.command_timeout_s = std::chrono::duration<double>(probe.command->timeout).count();
  }
  if (seen.comparison) {
    for (const auto& c : seen.comparison->comparison.outputs)
      check.tolerances[c.name] = Tolerance{c.EffectiveAtol(), c.tolerance.rtol, false};
  }
  return check;
}

Result<ProbeSettings> MakeProbe(const ReduceOptions& options) {
  ProbeSettings probe;
  probe.kind = options.condition.kind;
  probe.session = options.session;
  probe.tolerance = options.tolerance;
  if (probe.kind == FailureKind::kDiverge) {
    ORTKIT_ASSIGN_OR_RETURN(auto plan, ParseCrossCheckMode(options.condition.cross_check_mode, options.session));
    probe.plan = std::move(plan);
  }
  if (probe.kind == FailureKind::kCommand)
    probe.command = CommandCheck{options.condition.command, options.message, options.command_timeout};
  return probe;
}

/// Why the original does not count, or nullopt when it fails as asked.
std::optional<std::string> NotFailing(const ReduceOptions& options, const Observation& seen) {
  if (!seen.failed()) {
    if (options.condition.kind == FailureKind::kAuto) {
      return fmt::format(
          "the original does not fail: {}; nothing to reduce (a divergence must be asked for: "
          "--fails diverge=opt-levels)",
          seen.message);
    }
    return fmt::format("the original does not fail as --fails {} asks: {}", options.condition.ToString(), seen.message);
  }
  // A check command's output is matched against --message by the check itself.
  if (seen.seen != FailureKind::kCommand && !options.message.empty() &&
      seen.message.find(options.message) == std::string::npos) {
    return fmt::format("the original fails ({}) but its message does not contain '{}': {}", ToString(seen.seen),
                       options.message, seen.message);
  }
  return std::nullopt;
}

SessionConfig ReferenceConfig(const ProbeSettings& probe) {
  if (probe.plan) return probe.plan->a.config;
  SessionConfig reference = probe.session;
  reference.optimization_level = OptimizationLevel::kOff;
  return reference;
}

/// The reduced model and its inputs: the best subset cut out, or the original when nothing smaller fails.
Status FillResult(const GraphSlicer& slicer, FedValues& values, const Search& search, bool sliced,
                  const onnx::ModelProto& model, std::span<const NamedTensor> inputs, ReduceReport& report) {
  if (!sliced) {
    report.reduced = model;
    for (const auto& in : model.graph().input()) {
      auto fed = std::find_if(inputs.begin(), inputs.end(), [&](const NamedTensor& t) { return t.name == in.name(); });
      if (fed != inputs.end()) report.inputs.push_back({fed->name, fed->tensor.Clone()});
    }
  } else {
    ORTKIT_ASSIGN_OR_RETURN(report.reduced,
                            slicer.Build(search.best, [&](const std::string& n) { return values.TypeOf(n); }));
    ORTKIT_ASSIGN_OR_RETURN(report.inputs, values.Feeds(slicer.BoundaryOf(search.best).inputs));
  }
  const auto& graph = report.reduced.graph();
  for (int i = 0; i < graph.node_size(); ++i)
    report.nodes.push_back({NodeDisplayName(graph.node(i), i), graph.node(i).op_type()});
  return OkStatus();
}

/// `model` with the untyped outputs typed as ONNX shape inference finds them (the ONNX checker wants
/// every graph output typed); outputs inference says nothing about stay untyped.
std::optional<onnx::ModelProto> WithInferredOutputTypes(const onnx::ModelProto& model) {
  onnx::ModelProto inferred = model;
  (void)RunShapeInference(inferred);
  onnx::ModelProto typed = model;
  bool changed = false;
  for (int i = 0; i < typed.graph().output_size() && i < inferred.graph().output_size(); ++i) {
    auto* out = typed.mutable_graph()->mutable_output(i);
    const auto& found = inferred.graph().output(i).type();
    if (out->has_type() || !found.has_tensor_type() || found.tensor_type().elem_type() == 0) continue;
    *out->mutable_type() = found;
    changed = true;
  }
  if (!changed) return std::nullopt;
  return typed;
}

Expectation ExpectationFrom(const GraphSlicer& slicer, const Observation& seen, const std::string& message) {
  Expectation expected;
  expected.kind = seen.seen;
  expected.code = seen.code;
  expected.node = seen.node;
  expected.node_position = slicer.PositionOfNode(seen.node);
  // A check command's output is matched by the check itself; its summary need not hold the text.
  if (seen.seen != FailureKind::kCommand) expected.message = message;
  return expected;
}

/// The original's observation; for a check command, an error naming --fails when it cannot be started.
Result<Observation> ObserveOriginal(Runtime& runtime, const ProbeSettings& probe, const ReduceOptions& options,
                                    const std::string& bytes, std::span<const NamedTensor> inputs) {
  if (!probe.command) return Observe(runtime, probe, bytes, inputs);
  auto result = RunCommandCheck(*probe.command, bytes, inputs);
  if (!result.ok()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--fails '{}': {}", options.condition.ToString(), result.error().message));
  }
  Observation o;
  o.message = std::move(result->summary);
  if (result->failed) o.seen = FailureKind::kCommand;
  return o;
}

/// The values fed for cut values: computed by the original on the reference configuration, or, when
/// it cannot be (a load failure, or a check command's original that ONNX Runtime refuses to load or
/// run), inferred and synthesised.
FedValues ChooseFedValues(Runtime& runtime, const GraphSlicer& slicer, const ProbeSettings& probe,
                          const std::string& bytes, std::span<const NamedTensor> inputs, std::uint64_t seed) {
  bool runs = probe.kind != FailureKind::kLoad;
  if (probe.kind == FailureKind::kCommand) {
    ProbeSettings in_process;
    in_process.kind = FailureKind::kAuto;  // load, then run (a NaN made is no obstacle)
    in_process.session = ReferenceConfig(probe);
    const FailureKind seen = Observe(runtime, in_process, bytes, inputs).seen;
    runs = seen != FailureKind::kLoad && seen != FailureKind::kRun;
  }
  if (!runs) return FedValues::Inferred(slicer, inputs, seed);
  return FedValues::Computed(runtime, slicer, ReferenceConfig(probe), inputs);
}

}  // namespace

Status ReduceOptions::Validate() const {
  const FailureKind kind = condition.kind;
  if (!message.empty() && (kind == FailureKind::kNan || kind == FailureKind::kDiverge)) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--message applies to load, run and cmd failures, not to --fails {}", condition.ToString()));
  }
  if (kind == FailureKind::kCommand && condition.command.empty())
    return MakeError(ErrorKind::kInvalidArgument, "--fails cmd: names no command to run");
  if (command_timeout.count() <= 0)
    return MakeError(ErrorKind::kInvalidArgument, "--command-timeout must be above 0 seconds");
  if (time_budget.count() <= 0) return MakeError(ErrorKind::kInvalidArgument, "--time-budget must be above 0 seconds");
  ORTKIT_RETURN_IF_ERROR(CheckProviderName(session.provider));
  return tolerance.Validate();
}

Result<ReduceReport> Reduce(Runtime& runtime, const onnx::ModelProto& model, std::span<const NamedTensor> inputs,
                            const ReduceOptions& options) {
  const auto start = Clock::now();
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  ORTKIT_ASSIGN_OR_RETURN(ProbeSettings probe, MakeProbe(options));
  ReduceReport report;
  report.original_nodes = static_cast<std::size_t>(model.graph().node_size());
  const std::string bytes = model.SerializeAsString();
  ORTKIT_ASSIGN_OR_RETURN(const Observation original, ObserveOriginal(runtime, probe, options, bytes, inputs));
  report.original_message = original.message;
  report.condition = options.condition;
  if (auto why = NotFailing(options, original)) {
    report.not_failing = std::move(*why);
    report.seconds = SecondsSince(start);
    return report;
  }
  report.original_fails = true;
  report.condition.kind = original.seen;
  probe.kind = original.seen;
  const GraphSlicer slicer(model);
  const Expectation expected = ExpectationFrom(slicer, original, options.message);
  FedValues values = ChooseFedValues(runtime, slicer, probe, bytes, inputs, options.seed);
  Search search(runtime, slicer, values, probe, expected, options, start);
  const bool sliced = search.Run();
  ORTKIT_RETURN_IF_ERROR(FillResult(slicer, values, search, sliced, model, inputs, report));
  if (auto typed = sliced ? WithInferredOutputTypes(report.reduced) : std::nullopt) {
    // Declared types are one more thing the runtime checks: keep them only when the failure stays.
    if (Matches(expected, Observe(runtime, probe, typed->SerializeAsString(), report.inputs)))
      report.reduced = std::move(*typed);
  }
  const Observation& reduced = sliced ? search.best_observation : original;
  report.code = reduced.code;
  report.node = expected.node;
  report.message = reduced.message;
  report.repro = MakeReproCheck(options, probe, reduced);
  report.candidates = search.candidates;
  report.sessions = values.sessions();
  report.fed_computed = values.computes();
  report.budget_ran_out = search.out_of_time;
  report.seconds = SecondsSince(start);
  return report;
}

Result<onnx::ModelProto> LoadModelForReduce(const std::filesystem::path& path) {
  ModelLoad load = LoadModelFile(path);
  if (load.model == nullptr) {
    std::string why = "the file is not a usable ONNX model";
    for (const auto& d : load.diagnoses) {
      if (d.severity == Severity::kError) {
        why = d.message;
        break;
      }
    }
    return MakeError(load.failure ? load.failure->kind : ErrorKind::kInvalidModel,
                     fmt::format("reading '{}': {}", path.string(), why));
  }
  onnx::ModelProto proto = std::move(*load.model->proto);
  ORTKIT_RETURN_IF_ERROR(InlineExternalData(proto, load.model->BaseDirectory(), kMaxInlinedBytes,
                                            "reduction copies the weights into every candidate",
                                            "reduce a smaller export"));
  return proto;
}

Result<std::vector<NamedTensor>> PrepareReduceInputs(const onnx::ModelProto& model, const InputSources& sources) {
  std::vector<TensorSpec> specs;
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  for (const auto& in : model.graph().input()) {
    if (initializers.count(in.name()) || !in.type().has_tensor_type()) continue;
    TensorSpec spec;
    spec.name = in.name();
    spec.type = static_cast<DataType>(in.type().tensor_type().elem_type());
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      DimSpec dim;
      if (d.has_dim_value() && d.dim_value() >= 0) dim.value = d.dim_value();
      if (d.has_dim_param()) dim.symbol = d.dim_param();
      spec.dims.push_back(std::move(dim));
    }
    specs.push_back(std::move(spec));
  }
  ORTKIT_ASSIGN_OR_RETURN(PreparedInputs prepared, PrepareInputs(specs, &model, sources));
  return std::move(prepared.tensors);
}

nlohmann::json ReduceReport::ToJson() const {
  nlohmann::json nodes_json = nlohmann::json::array();
  for (const auto& n : nodes) nodes_json.push_back({{"name", n.name}, {"op_type", n.op_type}});
  nlohmann::json j = {{"model", model},
                      {"reproduced", original_fails},
                      {"condition", condition.ToString()},
                      {"code", code},
                      {"node", node},
                      {"message", message},
                      {"original_message", original_message},
                      {"original_nodes", original_nodes},
                      {"reduced_nodes", nodes.size()},
                      {"nodes", std::move(nodes_json)},
                      {"candidates", candidates},
                      {"sessions", sessions},
                      {"seconds", seconds},
                      {"budget_ran_out", budget_ran_out}};
  if (!original_fails) j["not_failing"] = not_failing;
  if (condition.kind == FailureKind::kCommand) {
    j["check_command"] = condition.command;
    j["fed_values"] = fed_computed ? "computed" : "synthesised";
  }
  return j;
}

}  // namespace ortkit
