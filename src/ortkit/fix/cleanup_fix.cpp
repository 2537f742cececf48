// Clean-up passes: initializers listed as graph inputs, and dead code (unused inputs, nodes whose
// outputs reach no graph output, unused and duplicate initializers).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "ortkit/check/lint_index.h"
#include "ortkit/fix/fix_passes.h"
#include "ortkit/fix/graph_surgery.h"
#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

constexpr std::size_t kNamesListed = 5;

std::string Listed(const std::vector<std::string>& names) { return lint::NameList(names, kNamesListed); }

/// Names read by nodes of the bodies of `node` (If/Loop/Scan), at any depth: what the node captures
/// from outer graphs is among them.
std::vector<std::string> NamesReadInBodies(const onnx::NodeProto& node) {
  std::vector<std::string> names;
  for (const auto& attr : node.attribute()) {
    auto collect = [&](const onnx::GraphProto& body) {
      ForEachGraph(body, [&](const onnx::GraphProto& g, const std::string&) {
        for (const auto& n : g.node()) names.insert(names.end(), n.input().begin(), n.input().end());
      });
    };
    if (attr.has_g()) collect(attr.g());
    for (const auto& body : attr.graphs()) collect(body);
  }
  return names;
}

/// The values the graph outputs depend on, following nodes back from the outputs.
std::unordered_set<std::string> LiveValues(const onnx::GraphProto& graph, std::vector<bool>& live_nodes) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& out : graph.node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  std::unordered_set<std::string> live;
  std::vector<std::string> work;
  for (const auto& out : graph.output()) work.push_back(out.name());
  live_nodes.assign(graph.node_size(), false);
  while (!work.empty()) {
    std::string name = std::move(work.back());
    work.pop_back();
    if (name.empty() || !live.insert(name).second) continue;
    auto it = producer.find(name);
    if (it == producer.end() || live_nodes[it->second]) continue;
    live_nodes[it->second] = true;
    const auto& node = graph.node(it->second);
    work.insert(work.end(), node.input().begin(), node.input().end());
    for (auto& captured : NamesReadInBodies(node)) work.push_back(std::move(captured));
  }
  return live;
}

void RemoveDeadNodes(onnx::GraphProto& graph, FixPassResult& result) {
  std::vector<bool> live_nodes;
  LiveValues(graph, live_nodes);
  std::vector<std::string> removed;
  std::map<std::string, int> ops;
  auto* nodes = graph.mutable_node();
  int kept = 0;
  for (int i = 0; i < nodes->size(); ++i) {
    if (live_nodes[i]) {
      if (kept != i) nodes->SwapElements(kept, i);
      ++kept;
      continue;
    }
    removed.push_back(NodeDisplayName(nodes->Get(i), i));
    ++ops[nodes->Get(i).op_type()];
  }
  if (removed.empty()) return;
  nodes->DeleteSubrange(kept, nodes->size() - kept);
  std::string op_text;
  for (const auto& [op, count] : ops) op_text += fmt::format("{}{} {}", op_text.empty() ? "" : ", ", count, op);
  result.changes.push_back(
      {"", fmt::format("{} node{}", removed.size(), removed.size() == 1 ? "" : "s"),
       fmt::format("removed: their outputs reach no graph output ({}; {})", op_text, Listed(removed))});
}

/// Every name some node of any graph reads, and the graph outputs.
std::unordered_set<std::string> ReadNames(onnx::GraphProto& graph) {
  std::unordered_set<std::string> read;
  for (const auto& out : graph.output()) read.insert(out.name());
  ForEachMutableGraph(graph, [&](onnx::GraphProto& g) {
    for (const auto& n : g.node()) read.insert(n.input().begin(), n.input().end());
  });
  return read;
}

void RemoveUnusedInputs(onnx::GraphProto& graph, FixPassResult& result) {
  const auto read = ReadNames(graph);
  std::unordered_set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  auto* inputs = graph.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    const auto& name = inputs->Get(i).name();
    if (read.count(name) || initializers.count(name)) continue;
    result.changes.push_back(
        {"graph.unused-input", fmt::format("input '{}'", name), "removed: no node reads it and it is not an output"});
    inputs->DeleteSubrange(i, 1);
  }
}

/// Initializers equal in type, shape and bytes read by the first one's name.
void MergeDuplicateInitializers(onnx::GraphProto& graph, FixPassResult& result) {
  std::unordered_set<std::string> interface;
  for (const auto& v : graph.input()) interface.insert(v.name());
  for (const auto& v : graph.output()) interface.insert(v.name());
  std::unordered_map<std::string, std::string> first_by_content;
  std::vector<std::string> merged;
  for (const auto& t : graph.initializer()) {
    if (interface.count(t.name()) || t.data_location() == onnx::TensorProto::EXTERNAL) continue;
    onnx::TensorProto content = t;
    content.clear_name();
    content.clear_doc_string();
    auto [it, inserted] = first_by_content.emplace(content.SerializeAsString(), t.name());
    if (inserted) continue;
    RenameReaders(graph, t.name(), it->second);
    merged.push_back(fmt::format("{} -> {}", t.name(), it->second));
  }
  if (merged.empty()) return;
  result.changes.push_back({"", fmt::format("{} initializer{}", merged.size(), merged.size() == 1 ? "" : "s"),
                            fmt::format("read as an equal initializer instead: {}", Listed(merged))});
}

/// Constant nodes of the main graph with equal attributes: readers of the later ones read the first's
/// output (the later ones are then dead code).
void MergeDuplicateConstants(onnx::GraphProto& graph, FixPassResult& result) {
  std::unordered_set<std::string> outputs;
  for (const auto& v : graph.output()) outputs.insert(v.name());
  std::unordered_map<std::string, std::string> first_by_value;
  std::vector<std::string> merged;
  for (const auto& node : graph.node()) {
    if (!lint::IsOnnxOp(node, "Constant") || node.output_size() != 1 || outputs.count(node.output(0))) continue;
    std::string key;
    for (const auto& attr : node.attribute()) key += attr.SerializeAsString();
    auto [it, inserted] = first_by_value.emplace(std::move(key), node.output(0));
    if (inserted) continue;
    RenameReaders(graph, node.output(0), it->second);
    merged.push_back(fmt::format("{} -> {}", node.output(0), it->second));
  }
  if (merged.empty()) return;
  result.changes.push_back({"", fmt::format("{} Constant node{}", merged.size(), merged.size() == 1 ? "" : "s"),
                            fmt::format("read as an equal Constant instead: {}", Listed(merged))});
}

void RemoveUnusedInitializers(onnx::GraphProto& graph, FixPassResult& result) {
  const auto read = ReadNames(graph);
  std::vector<std::string> removed;
  auto* inits = graph.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i) {
    if (read.count(inits->Get(i).name())) continue;
    removed.push_back(inits->Get(i).name());
    inits->DeleteSubrange(i, 1);
  }
  auto* inputs = graph.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    if (std::find(removed.begin(), removed.end(), inputs->Get(i).name()) != removed.end()) inputs->DeleteSubrange(i, 1);
  }
  if (removed.empty()) return;
  std::reverse(removed.begin(), removed.end());
  result.changes.push_back({"", fmt::format("{} initializer{}", removed.size(), removed.size() == 1 ? "" : "s"),
                            fmt::format("removed: nothing reads them ({})", Listed(removed))});
}

/// value_info entries for values that no longer exist.
void DropStaleValueInfo(onnx::GraphProto& graph) {
  std::unordered_set<std::string> produced;
  for (const auto& n : graph.node()) produced.insert(n.output().begin(), n.output().end());
  auto* infos = graph.mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    if (!produced.count(infos->Get(i).name())) infos->DeleteSubrange(i, 1);
  }
}

}  // namespace

FixPassResult FixInitializersAsInputs(onnx::ModelProto& model, const FixPassOptions& options) {
  FixPassResult result;
  auto& graph = *model.mutable_graph();
  std::unordered_set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const auto& in : graph.input()) {
    if (initializers.count(in.name())) names.push_back(in.name());
  }
  if (names.empty()) return result;
  if (options.keep_overridable) {
    result.refusals.push_back({"graph.initializer-as-input", fmt::format("{} initializers", names.size()),
                               "kept as graph inputs (--keep-overridable): they can be fed to override the weights"});
    return result;
  }
  if (model.ir_version() < 4) model.set_ir_version(4);  // IR 3 requires initializers to be inputs
  auto* inputs = graph.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    if (initializers.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
  }
  result.changes.push_back(
      {"graph.initializer-as-input", fmt::format("{} graph input{}", names.size(), names.size() == 1 ? "" : "s"),
       fmt::format("no longer listed as inputs (they stay initializers, so ONNX Runtime may fold them): {}",
                   Listed(names))});
  return result;
}

FixPassResult RemoveDeadCode(onnx::ModelProto& model, const FixPassOptions&) {
  FixPassResult result;
  auto& graph = *model.mutable_graph();
  MergeDuplicateConstants(graph, result);
  RemoveDeadNodes(graph, result);
  RemoveUnusedInputs(graph, result);
  MergeDuplicateInitializers(graph, result);
  RemoveUnusedInitializers(graph, result);
  DropStaleValueInfo(graph);
  return result;
}

}  // namespace ortkit
