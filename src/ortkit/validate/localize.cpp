#include "ortkit/validate/localize.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/check/lint.h"
#include "ortkit/core/scratch_folder.h"
#include "ortkit/core/units.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/graph_walk.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/tensor_proto.h"
#include "ortkit/tensor/tensor_stats.h"
#include "ortkit/tensor/test_case.h"

namespace ortkit {
namespace {

// Values compared and found to agree, with their range (for the NaN origin's inputs).
using AgreedValues = std::unordered_map<std::string, TensorStats>;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kSkippedNamesKept = 20;

Error LoadError(const ModelLoad& load, const std::string& what) {
  std::string message = "the model could not be parsed";
  for (const auto& d : load.diagnoses) {
    if (d.severity == Severity::kError) {
      message = d.message;
      break;
    }
  }
  return MakeError(load.failure ? load.failure->kind : ErrorKind::kInvalidModel, fmt::format("{}: {}", what, message));
}

Result<onnx::ModelProto> LoadProto(const ModelToLoad& source) {
  if (!source.bytes.empty()) {
    ModelLoad load = ParseModelBytes(source.bytes, "the model");
    if (load.model == nullptr) return LoadError(load, "parsing the model");
    return std::move(*load.model->proto);
  }
  if (source.path.empty()) return MakeError(ErrorKind::kInvalidArgument, "no model given: neither a path nor bytes");
  ModelLoad load = LoadModelFile(source.path);
  if (load.model == nullptr) return LoadError(load, fmt::format("reading '{}'", source.path.string()));
  onnx::ModelProto proto = std::move(*load.model->proto);
  ORTKIT_RETURN_IF_ERROR(InlineExternalData(proto, load.model->BaseDirectory(), kMaxInlinedBytes,
                                            "localisation copies external weights into each chunk's model",
                                            "localise a smaller export or compare against saved intermediates"));
  return proto;
}

/// Every name a subgraph reads, its own values included: an over-approximation of the outer
/// values it captures, which is all a dependency order needs (ONNX forbids shadowing).
void CollectSubgraphReads(const onnx::GraphProto& graph, std::unordered_set<std::string>& names) {
  ForEachGraph(graph, [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& node : g.node()) {
      for (const auto& in : node.input()) names.insert(in);
    }
  });
}

/// What localisation needs to know about one side's main graph.
struct GraphIndex {
  std::vector<int> order;                         ///< node indices, topologically
  std::unordered_map<std::string, int> producer;  ///< value -> node index
  std::vector<std::vector<std::string>> reads;    ///< per node: inputs and captured outer values
  std::unordered_set<std::string> graph_inputs;
  std::unordered_set<std::string> initializers;
  std::unordered_set<std::string> graph_outputs;
  std::vector<std::string> values;  ///< node outputs in topological order
};

GraphIndex IndexGraph(const onnx::GraphProto& graph) {
  GraphIndex index;
  for (const auto& t : graph.initializer()) index.initializers.insert(t.name());
  for (const auto& in : graph.input()) {
    if (!index.initializers.count(in.name())) index.graph_inputs.insert(in.name());
  }
  for (const auto& out : graph.output()) index.graph_outputs.insert(out.name());
  const int count = graph.node_size();
  for (int i = 0; i < count; ++i) {
    for (const auto& out : graph.node(i).output()) {
      if (!out.empty()) index.producer.emplace(out, i);
    }
  }
  index.reads.resize(count);
  for (int i = 0; i < count; ++i) {
    const auto& node = graph.node(i);
    std::unordered_set<std::string> reads(node.input().begin(), node.input().end());
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectSubgraphReads(attr.g(), reads);
      for (const auto& g : attr.graphs()) CollectSubgraphReads(g, reads);
    }
    reads.erase("");
    // Keep the node's own inputs first and in order: they are reported as the node's inputs.
    index.reads[i].assign(node.input().begin(), node.input().end());
    for (const auto& name : reads) {
      if (std::find(node.input().begin(), node.input().end(), name) == node.input().end())
        index.reads[i].push_back(name);
    }
  }
  index.order = TopologicalOrder(graph);
  std::unordered_set<std::string> seen;
  for (int i : index.order) {
    for (const auto& out : graph.node(i).output()) {
      if (!out.empty() && index.producer.at(out) == i && seen.insert(out).second) index.values.push_back(out);
    }
  }
  return index;
}

/// A side's model held once, from which each chunk's model is derived by appending outputs.
struct WorkingModel {
  onnx::ModelProto proto;
  int original_outputs = 0;
  GraphIndex index;
};

Result<WorkingModel> MakeWorkingModel(const ModelToLoad& source) {
  WorkingModel model;
  ORTKIT_ASSIGN_OR_RETURN(model.proto, LoadProto(source));
  model.original_outputs = model.proto.graph().output_size();
  model.index = IndexGraph(model.proto.graph());
  return model;
}

/// Serialises the model with `names` appended as graph outputs, then restores it. The extra
/// outputs carry a name only: ONNX Runtime infers their type and shape.
Result<std::string> ModelExposing(WorkingModel& model, std::span<const std::string> names) {
  auto* outputs = model.proto.mutable_graph()->mutable_output();
  for (const auto& name : names) {
    if (!model.index.graph_outputs.count(name)) outputs->Add()->set_name(name);
  }
  std::string bytes;
  const bool serialised = model.proto.SerializeToString(&bytes);
  outputs->DeleteSubrange(model.original_outputs, outputs->size() - model.original_outputs);
  if (!serialised) {
    return MakeError(ErrorKind::kUnavailable,
                     "the model with extra outputs could not be serialised (2 GiB protobuf limit)");
  }
  return bytes;
}

std::string ChunkRange(std::span<const std::string> names) {
  if (names.empty()) return "no values";
  if (names.size() == 1) return fmt::format("'{}'", names.front());
  return fmt::format("{} values '{}' .. '{}'", names.size(), names.front(), names.back());
}

/// Runs one session exposing `names` and returns the ones that are tensors, in no particular order.
Result<std::vector<NamedTensor>> RunExposing(Runtime& runtime, WorkingModel& model, const SessionConfig& config,
                                             const std::string& label, std::span<const std::string> names,
                                             std::span<const NamedTensor> inputs, LocalizeStats& stats) {
  const auto prefix = [&](const Error& e) {
    return MakeError(e.kind, fmt::format("{}, exposing {}: {}", label, ChunkRange(names), e.message));
  };
  if (names.empty()) return std::vector<NamedTensor>{};
  auto bytes = ModelExposing(model, names);
  if (!bytes.ok()) return prefix(bytes.error());
  auto session = Session::CreateFromBytes(runtime, *bytes, config);
  if (!session.ok()) return prefix(session.error());
  ++stats.sessions_created;
  std::string().swap(*bytes);  // the session holds its own copy of the weights
  auto specs = DescribeOutputs(**session);
  if (!specs.ok()) return prefix(specs.error());
  std::unordered_set<std::string> tensors;
  for (const auto& spec : *specs) {
    if (spec.is_tensor && spec.type != DataType::kUndefined) tensors.insert(spec.name);
  }
  std::vector<std::string> fetch;
  for (const auto& name : names) {
    if (tensors.count(name)) fetch.push_back(name);
  }
  if (fetch.empty()) return std::vector<NamedTensor>{};
  stats.peak_fetched = std::max(stats.peak_fetched, fetch.size());
  auto outputs = RunSession(**session, RunRequest{inputs, fetch});
  if (!outputs.ok()) return prefix(outputs.error());
  return outputs;
}

/// Fetches the values of one chunk for one side; names it cannot give are left out.
using ChunkSource = std::function<Result<std::vector<NamedTensor>>(std::span<const std::string> names)>;

/// Reference tensors by value name: exact names first, then file stems.
class ReferenceIndex {
 public:
  explicit ReferenceIndex(std::span<const NamedTensor> tensors) {
    for (const auto& t : tensors) by_name_.emplace(t.name, &t);
  }
  const NamedTensor* Find(const std::string& value) const {
    if (auto it = by_name_.find(value); it != by_name_.end()) return it->second;
    if (auto it = by_name_.find(ReferenceFileStem(value)); it != by_name_.end()) return it->second;
    return nullptr;
  }

 private:
  std::unordered_map<std::string, const NamedTensor*> by_name_;
};

const NamedTensor* FindByName(std::span<const NamedTensor> tensors, const std::string& name) {
  auto it = std::find_if(tensors.begin(), tensors.end(), [&](const NamedTensor& t) { return t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

/// RMS of (actual - expected) over the standard deviation of expected: how far a value moved beside its
/// spread. A constant value that changed, or a NaN or infinity on one side, is infinitely far.
double SpreadError(const Tensor& expected, const Tensor& actual) {
  const std::int64_t n = expected.element_count();
  if (n == 0) return 0;
  double mean = 0;
  for (std::int64_t i = 0; i < n; ++i) mean += expected.AsDouble(i);
  mean /= static_cast<double>(n);
  double variance = 0, squared_difference = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double e = expected.AsDouble(i);
    const double a = actual.AsDouble(i);
    if (!std::isfinite(e) || !std::isfinite(a)) {
      if (e == a || (std::isnan(e) && std::isnan(a))) continue;
      return HUGE_VAL;
    }
    variance += (e - mean) * (e - mean);
    squared_difference += (a - e) * (a - e);
  }
  if (squared_difference == 0) return 0;
  return variance > 0 ? std::sqrt(squared_difference / variance) : HUGE_VAL;
}

/// The values side B's optimised graph keeps between its kernels, each with the kernel computing it.
struct OptimizedGraph {
  std::unordered_map<std::string, std::string> kernel_of;  ///< value -> "QLinearConv 'conv_quant'"
};

/// Nodes the runtime inserts to change a value's layout: the kernel that computes the value is behind them.
bool IsLayoutNode(const onnx::NodeProto& node) {
  return node.op_type() == "Transpose" || node.op_type() == "ReorderInput" || node.op_type() == "ReorderOutput" ||
         node.op_type() == "Reshape";
}

OptimizedGraph IndexOptimizedGraph(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, const onnx::NodeProto*> producer;
  for (const auto& node : graph.node()) {
    for (const auto& out : node.output()) producer.emplace(out, &node);
  }
  OptimizedGraph optimized;
  for (const auto& [value, node] : producer) {
    const onnx::NodeProto* kernel = node;
    for (int hops = 0; hops < 4 && IsLayoutNode(*kernel) && kernel->input_size() > 0; ++hops) {
      auto it = producer.find(kernel->input(0));
      if (it == producer.end()) break;
      kernel = it->second;
    }
    optimized.kernel_of.emplace(value, fmt::format("{} '{}'", kernel->op_type(), kernel->name()));
  }
  return optimized;
}

/// Side B's graph as ONNX Runtime optimised it, written by a session of its own into a scratch folder.
Result<OptimizedGraph> ReadOptimizedGraph(Runtime& runtime, const ModelToLoad& model, const CrossCheckSide& side) {
  ORTKIT_ASSIGN_OR_RETURN(ScratchFolder scratch, ScratchFolder::Create("localize"));
  SessionConfig config = side.config;
  config.optimized_model_path = scratch.path() / "optimized.onnx";
  { ORTKIT_ASSIGN_OR_RETURN(auto session, OpenModel(runtime, model, config)); }
  ModelLoad load = LoadModelFile(config.optimized_model_path);
  if (load.model == nullptr) return LoadError(load, fmt::format("{}: reading the optimised graph", side.label));
  return IndexOptimizedGraph(load.model->proto->graph());
}

struct Walk {
  std::vector<std::string> values;                        ///< walkable values in side A's topological order
  std::unordered_map<std::string, std::size_t> position;  ///< over every value of side A
};

/// The walk itself: chunk by chunk until the first value outside the tolerance.
Status WalkChunks(const Walk& walk, const ChunkSource& source_a, const ChunkSource& source_b,
                  const LocalizeOptions& options, Clock::time_point start, LocalizeReport& report,
                  AgreedValues& agreed) {
  const std::size_t chunk_size = std::max<std::size_t>(1, options.chunk_size);
  const std::size_t considered =
      options.max_values > 0 ? std::min(options.max_values, walk.values.size()) : walk.values.size();
  report.stats.values_considered = considered;
  const std::size_t chunks = (considered + chunk_size - 1) / chunk_size;
  report.walked = true;
  for (std::size_t c = 0; c < chunks; ++c) {
    const auto elapsed = Clock::now() - start;
    if (options.time_budget.count() > 0 && elapsed >= options.time_budget) {
      report.stopped_because = fmt::format("the time budget of {:.3g} s ran out after {} of {} values",
                                           std::chrono::duration<double>(options.time_budget).count(),
                                           report.stats.values_compared, considered);
      return OkStatus();
    }
    const std::size_t first = c * chunk_size;
    std::span<const std::string> names(walk.values.data() + first, std::min(chunk_size, considered - first));
    const std::size_t peak_before = report.stats.peak_fetched;
    report.stats.peak_fetched = 0;
    ORTKIT_ASSIGN_OR_RETURN(auto expected, source_a(names));
    std::vector<std::string> on_a;
    for (const auto& name : names) {
      if (FindByName(expected, name) != nullptr) on_a.push_back(name);
    }
    ORTKIT_ASSIGN_OR_RETURN(auto actual, source_b(on_a));
    LocalizeChunk progress{c, chunks, first, names.size(), report.stats.peak_fetched, 0, false};
    report.stats.peak_fetched = std::max(peak_before, report.stats.peak_fetched);
    ++report.stats.chunks_run;
    for (const auto& name : names) {
      const NamedTensor* e = FindByName(expected, name);
      const NamedTensor* a = FindByName(actual, name);
      if (e == nullptr || a == nullptr) {
        ++report.stats.values_skipped;
        if (report.skipped.size() < kSkippedNamesKept) report.skipped.push_back(name);
        continue;
      }
      ++report.stats.values_compared;
      ++progress.compared;
      OutputComparison comparison =
          CompareTensors(name, e->tensor, a->tensor, options.tolerance.For(name, e->tensor.type()));
      double spread_error = 0;
      if (options.quantized && comparison.shape_match && comparison.type_match && !comparison.strings) {
        spread_error = SpreadError(e->tensor, a->tensor);
        comparison.passed = spread_error <= kQuantizedSpreadBound;
        if (!comparison.passed) {
          comparison.problem = fmt::format(
              "the RMS of its difference is {:.3g} of its spread (bound {:g}; float figures: {})", spread_error,
              kQuantizedSpreadBound, comparison.problem.empty() ? "within the tolerance" : comparison.problem);
        }
      }
      // NaN on both sides agrees on nothing: in topological order, the first value that holds NaN
      // is made by the node that first produces it (every value before it was free of NaN).
      const bool nan_origin = comparison.passed && comparison.nan_both > 0;
      report.compared.push_back({name, "", comparison.max_abs_error, comparison.passed && !nan_origin});
      if (comparison.passed && !nan_origin) {
        agreed.emplace(name, ComputeStats(e->tensor));
        continue;
      }
      Divergence divergence;
      divergence.nan_origin = nan_origin;
      if (nan_origin) {
        comparison.passed = false;
        comparison.problem =
            fmt::format("{} of {} elements are NaN on both sides", comparison.nan_both, comparison.elements);
      }
      divergence.value = name;
      divergence.spread_error = spread_error;
      divergence.position = walk.position.at(name);
      divergence.comparison = std::move(comparison);
      report.divergence = std::move(divergence);
      progress.diverged = true;
      break;
    }
    if (options.on_chunk) options.on_chunk(progress);
    if (report.divergence) break;
  }
  report.complete = true;
  if (!report.divergence && considered < walk.values.size()) {
    report.complete = false;
    report.stopped_because = fmt::format("max_values {} reached: the remaining {} of {} values were not compared",
                                         options.max_values, walk.values.size() - considered, walk.values.size());
  }
  return OkStatus();
}

/// The ranges of the graph inputs and initializers the diverging node reads, beside those of the values
/// compared: a NaN origin fed straight from an input ("Log of 'x' in [-2.1, 3.4]") says so too.
void AddSourceRanges(const onnx::GraphProto& graph, const GraphIndex& index, std::span<const NamedTensor> inputs,
                     const Divergence& divergence, AgreedValues& ranges) {
  const auto& node = graph.node(index.producer.at(divergence.value));
  for (const auto& value : node.input()) {
    if (value.empty() || ranges.count(value)) continue;
    if (index.graph_inputs.count(value)) {
      auto fed = std::find_if(inputs.begin(), inputs.end(), [&](const NamedTensor& t) { return t.name == value; });
      if (fed != inputs.end() && !fed->tensor.is_string()) ranges.emplace(value, ComputeStats(fed->tensor));
    } else if (index.initializers.count(value)) {
      for (const auto& init : graph.initializer()) {
        if (init.name() != value) continue;
        auto tensor = TensorFromProto(init, value);
        if (tensor.ok() && !tensor->is_string()) ranges.emplace(value, ComputeStats(*tensor));
      }
    }
  }
}

/// Names the node producing each compared value.
void NameComparedNodes(const onnx::GraphProto& graph, const GraphIndex& index, LocalizeReport& report) {
  for (auto& c : report.compared) {
    auto it = index.producer.find(c.value);
    if (it != index.producer.end()) c.node = NodeDisplayName(graph.node(it->second), it->second);
  }
}

/// Fills in the node, its inputs and the last agreeing value upstream of the divergence.
void DescribeDivergence(const onnx::GraphProto& graph, const GraphIndex& index, const Walk& walk,
                        const AgreedValues& agreed, Divergence& divergence) {
  const int node_index = index.producer.at(divergence.value);
  const auto& node = graph.node(node_index);
  divergence.node_index = node_index;
  divergence.node = NodeDisplayName(node, node_index);
  divergence.op_type = node.op_type();
  auto describe = [&](const std::string& value) {
    UpstreamValue up;
    up.value = value;
    if (auto it = index.producer.find(value); it != index.producer.end()) {
      up.node = NodeDisplayName(graph.node(it->second), it->second);
      up.op_type = graph.node(it->second).op_type();
      up.state = agreed.count(value) ? UpstreamValue::State::kAgreed : UpstreamValue::State::kNotCompared;
      if (auto stats = agreed.find(value); stats != agreed.end()) up.range = stats->second;
    } else if (index.initializers.count(value)) {
      up.state = UpstreamValue::State::kInitializer;
      if (auto stats = agreed.find(value); stats != agreed.end()) up.range = stats->second;
    } else if (index.graph_inputs.count(value)) {
      up.state = UpstreamValue::State::kGraphInput;
      if (auto stats = agreed.find(value); stats != agreed.end()) up.range = stats->second;
    }
    return up;
  };
  for (const auto& in : node.input()) {
    if (!in.empty()) divergence.inputs.push_back(describe(in));
  }
  // Upstream: every value the node depends on, transitively; the nearest agreeing one is the one
  // latest in topological order.
  std::unordered_set<std::string> visited;
  std::vector<std::string> stack(index.reads[node_index].begin(), index.reads[node_index].end());
  std::optional<std::string> nearest;
  while (!stack.empty()) {
    std::string value = std::move(stack.back());
    stack.pop_back();
    if (value.empty() || !visited.insert(value).second) continue;
    auto producer = index.producer.find(value);
    if (producer == index.producer.end()) continue;
    if (agreed.count(value) && (!nearest || walk.position.at(value) > walk.position.at(*nearest))) nearest = value;
    for (const auto& read : index.reads[producer->second]) stack.push_back(read);
  }
  if (nearest) divergence.last_agreeing = describe(*nearest);
}

/// Initializers the diverging node reads that differ between the two models.
void CompareNodeInitializers(const WorkingModel& a, const WorkingModel& b, const ToleranceRules& tolerance,
                             Divergence& divergence) {
  auto find = [](const onnx::GraphProto& graph, const std::string& name) -> const onnx::TensorProto* {
    for (const auto& t : graph.initializer()) {
      if (t.name() == name) return &t;
    }
    return nullptr;
  };
  for (const auto& input : divergence.inputs) {
    if (input.state != UpstreamValue::State::kInitializer) continue;
    const auto* pa = find(a.proto.graph(), input.value);
    const auto* pb = find(b.proto.graph(), input.value);
    if (pa == nullptr || pb == nullptr) continue;
    auto ta = TensorFromProto(*pa, fmt::format("initializer '{}'", input.value));
    auto tb = TensorFromProto(*pb, fmt::format("initializer '{}'", input.value));
    if (!ta.ok() || !tb.ok()) continue;
    auto comparison = CompareTensors(input.value, *ta, *tb, tolerance.For(input.value, ta->type()));
    if (!comparison.passed) divergence.differing_initializers.push_back(std::move(comparison));
  }
}

Walk MakeWalk(const GraphIndex& index, const std::function<bool(const std::string&)>& on_other_side,
              LocalizeReport& report) {
  Walk walk;
  for (std::size_t i = 0; i < index.values.size(); ++i) {
    const std::string& value = index.values[i];
    walk.position.emplace(value, i);
    if (on_other_side(value)) {
      walk.values.push_back(value);
    } else {
      ++report.stats.values_skipped;
      if (report.skipped.size() < kSkippedNamesKept) report.skipped.push_back(value);
    }
  }
  report.stats.values_total = index.values.size();
  return walk;
}

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool OutputsAgree(const ComparisonReport& outputs) { return !outputs.outputs.empty() && outputs.Passed(); }

std::string UpstreamText(const UpstreamValue& up) {
  if (up.node.empty()) return fmt::format("'{}' ({})", up.value, ToString(up.state));
  return fmt::format("'{}' from node '{}' ({}, {})", up.value, up.node, up.op_type, ToString(up.state));
}

// "'x' from node 'n' (Sub, agrees) in [-3.2, 1.7]": a NaN origin's inputs with the values they held.
std::string UpstreamRangeText(const UpstreamValue& up) {
  std::string text = UpstreamText(up);
  if (!up.range) return text;
  const TensorStats& r = *up.range;
  if (r.finite > 0) text += fmt::format(" in [{:.4g}, {:.4g}]", r.min, r.max);
  if (r.inf > 0) text += fmt::format(", {} infinite", r.inf);
  return text;
}

}  // namespace

const char* ToString(UpstreamValue::State state) {
  switch (state) {
    case UpstreamValue::State::kAgreed: return "agrees";
    case UpstreamValue::State::kGraphInput: return "graph input";
    case UpstreamValue::State::kInitializer: return "initializer";
    case UpstreamValue::State::kNotCompared: return "not compared";
  }
  return "?";
}

bool LocalizeReport::vanished() const { return walked && complete && !divergence && !outputs.Passed(); }

QuantizedDivergence DescribeQuantizedDivergence(const LocalizeReport& report) {
  QuantizedDivergence found;
  if (!report.quantized || !report.divergence || report.divergence->nan_origin) return found;
  const Divergence& d = *report.divergence;
  found.node = d.node;
  found.op_type = d.op_type;
  std::string value = fmt::format("'{}' from node '{}' ({})", d.value, d.node, d.op_type);
  // A QuantizeLinear closes a QDQ group: the node computing the group's value is the one to name.
  if (d.op_type == "QuantizeLinear" && !d.inputs.empty() && !d.inputs.front().node.empty()) {
    found.node = d.inputs.front().node;
    found.op_type = d.inputs.front().op_type;
    value = fmt::format("'{}', the quantised output of node '{}' ({})", d.value, found.node, found.op_type);
  }
  found.text = "the first value beyond the rounding of quantised kernels is " + value;
  if (!d.fused_kernel.empty())
    found.text += fmt::format(", computed by ONNX Runtime's fused kernel {}", d.fused_kernel);
  found.text +=
      fmt::format(": its difference is {:.3g} of its spread (bound {:g})", d.spread_error, kQuantizedSpreadBound);
  if (d.last_agreeing)
    found.text += fmt::format("; the last value within it upstream: {}", UpstreamText(*d.last_agreeing));
  return found;
}

Result<LocalizeReport> Localize(Runtime& runtime, const ModelToLoad& model, const CrossCheckPlan& plan,
                                std::span<const NamedTensor> inputs, const LocalizeOptions& options) {
  const auto start = Clock::now();
  LocalizeReport report;
  report.label_a = plan.a.label;
  report.label_b = plan.b.label;
  ORTKIT_ASSIGN_OR_RETURN(CrossCheckReport plain, CrossCheck(runtime, model, plan, inputs, options.tolerance));
  report.outputs = std::move(plain.comparison);
  report.stats.sessions_created = 2;
  if (options.skip_if_outputs_agree && OutputsAgree(report.outputs)) {
    report.complete = true;
    report.stats.elapsed_ms = MillisecondsSince(start);
    return report;
  }
  const bool own_b = !plan.b.model.empty();
  ORTKIT_ASSIGN_OR_RETURN(WorkingModel model_a, MakeWorkingModel(plan.a.model.empty() ? model : plan.a.model));
  std::optional<WorkingModel> own_model_b;
  if (own_b) {
    ORTKIT_ASSIGN_OR_RETURN(own_model_b, MakeWorkingModel(plan.b.model));
  }
  WorkingModel& model_b = own_b ? *own_model_b : model_a;
  report.quantized = options.quantized;
  OptimizedGraph optimized;
  if (options.quantized) {
    ORTKIT_ASSIGN_OR_RETURN(optimized, ReadOptimizedGraph(runtime, own_b ? plan.b.model : model, plan.b));
  }
  const Walk walk = MakeWalk(
      model_a.index,
      [&](const std::string& v) {
        return model_b.index.producer.count(v) > 0 && (!options.quantized || optimized.kernel_of.count(v) > 0);
      },
      report);
  auto source = [&](WorkingModel& m, const CrossCheckSide& side) -> ChunkSource {
    return [&, &side = side](std::span<const std::string> names) {
      return RunExposing(runtime, m, side.config, side.label, names, inputs, report.stats);
    };
  };
  AgreedValues agreed;
  ORTKIT_RETURN_IF_ERROR(
      WalkChunks(walk, source(model_a, plan.a), source(model_b, plan.b), options, start, report, agreed));
  NameComparedNodes(model_a.proto.graph(), model_a.index, report);
  if (report.divergence) {
    AddSourceRanges(model_a.proto.graph(), model_a.index, inputs, *report.divergence, agreed);
    DescribeDivergence(model_a.proto.graph(), model_a.index, walk, agreed, *report.divergence);
    if (own_b) CompareNodeInitializers(model_a, model_b, options.tolerance, *report.divergence);
    if (auto it = optimized.kernel_of.find(report.divergence->value); it != optimized.kernel_of.end())
      report.divergence->fused_kernel = it->second;
  }
  report.stats.elapsed_ms = MillisecondsSince(start);
  return report;
}

Result<LocalizeReport> LocalizeAgainstReference(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config,
                                                std::span<const NamedTensor> reference,
                                                std::span<const NamedTensor> inputs, const LocalizeOptions& options) {
  const auto start = Clock::now();
  LocalizeReport report;
  report.label_a = "reference";
  report.label_b = config.provider;
  ORTKIT_ASSIGN_OR_RETURN(WorkingModel working, MakeWorkingModel(model));
  const ReferenceIndex by_name(reference);

  std::vector<NamedTensor> fed;
  if (inputs.empty()) {
    for (const auto& name : working.index.graph_inputs) {
      if (const NamedTensor* t = by_name.Find(name)) fed.push_back({name, t->tensor.Clone()});
    }
    inputs = fed;
  }

  ORTKIT_ASSIGN_OR_RETURN(auto session, OpenModel(runtime, model, config));
  ++report.stats.sessions_created;
  auto actual = RunSession(*session, RunRequest{inputs, {}});
  if (!actual.ok())
    return MakeError(actual.error().kind, fmt::format("{}: {}", report.label_b, actual.error().message));
  session.reset();
  std::vector<NamedTensor> expected_outputs;
  for (const auto& out : working.proto.graph().output()) {
    if (const NamedTensor* t = by_name.Find(out.name())) expected_outputs.push_back({out.name(), t->tensor.Clone()});
  }
  report.outputs = CompareOutputs(expected_outputs, *actual, options.tolerance);
  if (options.skip_if_outputs_agree && OutputsAgree(report.outputs)) {
    report.complete = true;
    report.stats.elapsed_ms = MillisecondsSince(start);
    return report;
  }

  const Walk walk = MakeWalk(
      working.index, [&](const std::string& v) { return by_name.Find(v) != nullptr; }, report);
  ChunkSource from_reference = [&](std::span<const std::string> names) -> Result<std::vector<NamedTensor>> {
    std::vector<NamedTensor> tensors;
    for (const auto& name : names) {
      if (const NamedTensor* t = by_name.Find(name)) tensors.push_back({name, t->tensor.Clone()});
    }
    return tensors;
  };
  ChunkSource from_session = [&](std::span<const std::string> names) {
    return RunExposing(runtime, working, config, report.label_b, names, inputs, report.stats);
  };
  AgreedValues agreed;
  ORTKIT_RETURN_IF_ERROR(WalkChunks(walk, from_reference, from_session, options, start, report, agreed));
  NameComparedNodes(working.proto.graph(), working.index, report);
  if (report.divergence) {
    AddSourceRanges(working.proto.graph(), working.index, inputs, *report.divergence, agreed);
    DescribeDivergence(working.proto.graph(), working.index, walk, agreed, *report.divergence);
  }
  report.stats.elapsed_ms = MillisecondsSince(start);
  return report;
}

namespace {

// What a reference holds by name: a folder or file of tensors as ReadTensors reads it, or a data set
// (input_K.pb, output_K.pb) with the intermediate values recorded beside it (NAME.pb or NAME.npy).
Result<std::vector<NamedTensor>> ReferenceValues(const std::filesystem::path& reference) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(reference, ec) || !fs::exists(reference / "input_0.pb", ec)) return ReadTensors(reference);
  ORTKIT_ASSIGN_OR_RETURN(TestDataSet set, ReadTestDataSet(reference));
  std::vector<NamedTensor> tensors = std::move(set.inputs);
  for (auto& t : set.outputs) tensors.push_back(std::move(t));
  std::vector<fs::path> values;
  for (const auto& entry : fs::directory_iterator(reference, ec)) {
    const std::string stem = entry.path().stem().string();
    const std::string extension = entry.path().extension().string();
    if (extension != ".pb" && extension != ".npy") continue;
    if (stem.rfind("input_", 0) == 0 || stem.rfind("output_", 0) == 0) continue;
    values.push_back(entry.path());
  }
  std::sort(values.begin(), values.end());  // the directory's order is the file system's
  for (const auto& file : values) {
    ORTKIT_ASSIGN_OR_RETURN(auto read, ReadTensors(file));
    for (auto& t : read) tensors.push_back(std::move(t));
  }
  return tensors;
}

}  // namespace

Result<LocalizeReport> LocalizeAgainstReference(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config,
                                                const std::filesystem::path& reference,
                                                std::span<const NamedTensor> inputs, const LocalizeOptions& options) {
  ORTKIT_ASSIGN_OR_RETURN(auto tensors, ReferenceValues(reference));
  ORTKIT_ASSIGN_OR_RETURN(LocalizeReport report,
                          LocalizeAgainstReference(runtime, model, config, tensors, inputs, options));
  report.label_a = fmt::format("reference '{}'", reference.string());
  return report;
}

Result<SavedIntermediates> SaveIntermediates(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config,
                                             std::span<const NamedTensor> inputs, const std::filesystem::path& folder,
                                             const LocalizeOptions& options) {
  const auto start = Clock::now();
  ORTKIT_ASSIGN_OR_RETURN(WorkingModel working, MakeWorkingModel(model));
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("creating '{}': {}", folder.string(), ec.message()));
  std::set<std::string> used_stems;
  auto write = [&](const std::string& name, const Tensor& tensor) -> Status {
    std::string stem = ReferenceFileStem(name);
    // ReadTensors reads a folder holding input_K.pb as a test data set (its inputs only).
    if (stem.rfind("input_", 0) == 0 || stem.rfind("output_", 0) == 0) stem += "_";
    for (int k = 2; !used_stems.insert(stem).second; ++k) stem = fmt::format("{}_{}", ReferenceFileStem(name), k);
    return WriteTensorProto(folder / (stem + ".pb"), tensor, name);
  };
  SavedIntermediates saved;
  for (const auto& in : inputs) {
    ORTKIT_RETURN_IF_ERROR(write(in.name, in.tensor));
    ++saved.inputs;
  }
  const auto& values = working.index.values;
  const std::size_t chunk_size = std::max<std::size_t>(1, options.chunk_size);
  const std::size_t considered = options.max_values > 0 ? std::min(options.max_values, values.size()) : values.size();
  LocalizeStats stats;
  for (std::size_t first = 0; first < considered; first += chunk_size) {
    if (options.time_budget.count() > 0 && Clock::now() - start >= options.time_budget) {
      return MakeError(
          ErrorKind::kUnavailable,
          fmt::format("the time budget of {:.3g} s ran out after writing {} of {} values",
                      std::chrono::duration<double>(options.time_budget).count(), saved.values, considered));
    }
    std::span<const std::string> names(values.data() + first, std::min(chunk_size, considered - first));
    ORTKIT_ASSIGN_OR_RETURN(auto tensors, RunExposing(runtime, working, config, config.provider, names, inputs, stats));
    for (const auto& t : tensors) ORTKIT_RETURN_IF_ERROR(write(t.name, t.tensor));
    saved.values += tensors.size();
    ++saved.chunks_run;
  }
  return saved;
}

std::vector<Diagnosis> LocalizeDiagnoses(const LocalizeReport& report, const onnx::ModelProto* model) {
  std::vector<Diagnosis> diagnoses;
  if (const auto& d = report.divergence) {
    const auto& c = d->comparison;
    std::string message = fmt::format(
        "'{}' produced by node '{}' ({}) is the first value that differs between {} and {}: {}; max abs error {:.3g}, "
        "max rel error {:.3g}",
        d->value, d->node, d->op_type, report.label_a, report.label_b, c.problem, c.max_abs_error, c.max_rel_error);
    if (!d->inputs.empty()) {
      std::vector<std::string> inputs;
      for (const auto& in : d->inputs) inputs.push_back(UpstreamText(in));
      message += fmt::format("; its inputs: {}", fmt::join(inputs, ", "));
    }
    if (d->last_agreeing) message += fmt::format("; last agreeing value upstream: {}", UpstreamText(*d->last_agreeing));
    for (const auto& init : d->differing_initializers) {
      message += fmt::format("; initializer '{}' differs between the models ({})", init.name, init.problem);
    }
    Location where;
    where.node = d->node;
    where.op_type = d->op_type;
    where.tensor = d->value;
    if (d->nan_origin) {
      std::vector<std::string> inputs;
      for (const auto& in : d->inputs) inputs.push_back(UpstreamRangeText(in));
      message = fmt::format(
          "node '{}' ({}) is the first to produce NaN: '{}' holds {} NaN of {} elements in both {} and {}, and no "
          "value before it holds any{}",
          d->node, d->op_type, d->value, c.nan_both, c.elements, report.label_a, report.label_b,
          inputs.empty() ? std::string() : fmt::format("; its inputs: {}", fmt::join(inputs, ", ")));
      diagnoses.push_back(Diagnose("validate.nan-origin", std::move(message), std::move(where)));
      return diagnoses;
    }
    Diagnosis diverges = Diagnose("validate.diverges-at-node", std::move(message), std::move(where));
    if (model != nullptr) {
      // The check may already know why this node differs between runs: say that rather than blame a kernel.
      for (const auto& known : LintModel(*model)) {
        if (known.location.node != d->node || known.severity == Severity::kInfo) continue;
        diverges.cause =
            fmt::format("`ortkit check` already knows why: {} ({}). {}", known.message, known.code, known.cause);
        diverges.fix = known.fix;
        break;
      }
    }
    diagnoses.push_back(std::move(diverges));
  } else if (report.vanished()) {
    std::vector<std::string> failing;
    for (const auto& o : report.outputs.outputs) {
      if (!o.passed) failing.push_back("'" + o.name + "'");
    }
    diagnoses.push_back(Diagnose(
        "validate.divergence-vanished",
        fmt::format(
            "output{} {} differ between {} and {}, but all {} intermediate values compared agree once exposed as "
            "outputs",
            failing.size() == 1 ? "" : "s", fmt::join(failing, ", "), report.label_a, report.label_b,
            report.stats.values_compared)));
  } else if (report.walked && !report.complete) {
    diagnoses.push_back(Diagnose("validate.localize-incomplete",
                                 fmt::format("localisation between {} and {} stopped before finding a divergence: {}",
                                             report.label_a, report.label_b, report.stopped_because)));
  }
  return diagnoses;
}

nlohmann::json LocalizeReport::ToJson() const {
  nlohmann::json j = {{"reference", label_a}, {"checked", label_b},    {"outputs", outputs.ToJson()},
                      {"walked", walked},     {"complete", complete},  {"vanished", vanished()},
                      {"skipped", skipped},   {"quantized", quantized}};
  if (!stopped_because.empty()) j["stopped_because"] = stopped_because;
  auto upstream = [](const UpstreamValue& up) {
    nlohmann::json u = {{"value", up.value}, {"state", ToString(up.state)}};
    if (up.range && up.range->finite > 0) u["range"] = {up.range->min, up.range->max};
    if (!up.node.empty()) {
      u["node"] = up.node;
      u["op_type"] = up.op_type;
    }
    return u;
  };
  if (divergence) {
    nlohmann::json d = {{"nan_origin", divergence->nan_origin},
                        {"value", divergence->value},
                        {"node", divergence->node},
                        {"op_type", divergence->op_type},
                        {"node_index", divergence->node_index},
                        {"position", divergence->position},
                        {"comparison", divergence->comparison.ToJson()},
                        {"inputs", nlohmann::json::array()},
                        {"differing_initializers", nlohmann::json::array()}};
    for (const auto& in : divergence->inputs) d["inputs"].push_back(upstream(in));
    if (divergence->last_agreeing) d["last_agreeing"] = upstream(*divergence->last_agreeing);
    for (const auto& init : divergence->differing_initializers) d["differing_initializers"].push_back(init.ToJson());
    if (quantized) {
      d["spread_error"] =
          std::isfinite(divergence->spread_error) ? nlohmann::json(divergence->spread_error) : nlohmann::json();
      d["fused_kernel"] = divergence->fused_kernel;
    }
    j["divergence"] = std::move(d);
  } else {
    j["divergence"] = nullptr;
  }
  j["stats"] = {{"values_total", stats.values_total},       {"values_considered", stats.values_considered},
                {"values_compared", stats.values_compared}, {"values_skipped", stats.values_skipped},
                {"chunks_run", stats.chunks_run},           {"sessions_created", stats.sessions_created},
                {"peak_fetched", stats.peak_fetched},       {"elapsed_ms", stats.elapsed_ms}};
  return j;
}

}  // namespace ortkit
