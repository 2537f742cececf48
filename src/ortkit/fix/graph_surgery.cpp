#include "ortkit/fix/graph_surgery.h"

#include <unordered_set>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

constexpr int kMaxDepth = 64;  // check's bound: deeper files are hostile

void Visit(onnx::GraphProto& graph, const std::function<void(onnx::GraphProto&)>& visit, int depth) {
  if (depth > kMaxDepth) return;
  visit(graph);
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) Visit(*attr.mutable_g(), visit, depth + 1);
      for (auto& body : *attr.mutable_graphs()) Visit(body, visit, depth + 1);
    }
  }
}

}  // namespace

void ForEachMutableGraph(onnx::GraphProto& graph, const std::function<void(onnx::GraphProto&)>& visit) {
  Visit(graph, visit, 0);
}

int RenameReaders(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  int renamed = 0;
  ForEachMutableGraph(graph, [&](onnx::GraphProto& g) {
    for (auto& node : *g.mutable_node()) {
      for (auto& input : *node.mutable_input()) {
        if (input != from) continue;
        input = to;
        ++renamed;
      }
    }
  });
  return renamed;
}

std::string UnusedName(const onnx::GraphProto& graph, const std::string& stem) {
  std::unordered_set<std::string> used;
  ForEachGraph(graph, [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& v : g.input()) used.insert(v.name());
    for (const auto& v : g.output()) used.insert(v.name());
    for (const auto& v : g.value_info()) used.insert(v.name());
    for (const auto& t : g.initializer()) used.insert(t.name());
    for (const auto& n : g.node()) {
      used.insert(n.name());
      for (const auto& o : n.output()) used.insert(o);
      for (const auto& i : n.input()) used.insert(i);
    }
  });
  if (!used.count(stem)) return stem;
  for (int k = 1;; ++k) {
    std::string name = fmt::format("{}_{}", stem, k);
    if (!used.count(name)) return name;
  }
}

onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<std::int64_t>& values) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(static_cast<std::int64_t>(values.size()));
  for (auto v : values) tensor.add_int64_data(v);
  return tensor;
}

}  // namespace ortkit
