#include "ortkit/model/graph_walk.h"

#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <unordered_map>

namespace ortkit {
namespace {

void Walk(const onnx::GraphProto& graph, const std::string& path, int depth,
          const std::function<void(const onnx::GraphProto&, const std::string&)>& visit) {
  if (depth > 64) return;  // a malicious file could nest deeper than the stack allows
  visit(graph, path);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    for (const auto& attr : node.attribute()) {
      const std::string prefix = (path.empty() ? "" : path + "/") + NodeDisplayName(node, i) + "/" + attr.name();
      if (attr.has_g()) Walk(attr.g(), prefix, depth + 1, visit);
      for (const auto& g : attr.graphs()) Walk(g, prefix, depth + 1, visit);
    }
  }
}

}  // namespace

void ForEachGraph(const onnx::GraphProto& graph,
                  const std::function<void(const onnx::GraphProto&, const std::string&)>& visit) {
  Walk(graph, "", 0, visit);
}

std::string NodeDisplayName(const onnx::NodeProto& node, int index) {
  if (!node.name().empty()) return node.name();
  return "#" + std::to_string(index) + " " + node.op_type();
}

long long ElementCount(const onnx::TensorProto& tensor) {
  long long count = 1;
  for (auto d : tensor.dims()) {
    if (d < 0) return -1;
    if (d != 0 && count > std::numeric_limits<long long>::max() / d) return -1;
    count *= d;
  }
  return count;
}

int ElementSize(int data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL: return 1;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: return 2;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64: return 8;
    case onnx::TensorProto::COMPLEX128: return 16;
    case 17:
    case 18:
    case 19:
    case 20: return 1;  // float8 variants (IR 9)
    default: return 0;
  }
}

std::string ElementTypeName(int data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT: return "float32";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "float64";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::COMPLEX64: return "complex64";
    case onnx::TensorProto::COMPLEX128: return "complex128";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 0: return "undefined";
    default: return "type" + std::to_string(data_type);
  }
}

std::vector<int> TopologicalOrder(const onnx::GraphProto& graph) {
  const int count = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i) {
    for (const auto& out : graph.node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  std::vector<std::vector<int>> consumers(count);
  std::vector<int> pending(count, 0);
  for (int i = 0; i < count; ++i) {
    const auto& node = graph.node(i);
    std::set<std::string> reads(node.input().begin(), node.input().end());
    for (const auto& attr : node.attribute()) {
      auto collect = [&](const onnx::GraphProto& body) {
        ForEachGraph(body, [&](const onnx::GraphProto& g, const std::string&) {
          for (const auto& n : g.node()) reads.insert(n.input().begin(), n.input().end());
        });
      };
      if (attr.has_g()) collect(attr.g());
      for (const auto& body : attr.graphs()) collect(body);
    }
    std::set<int> producers;
    for (const auto& name : reads) {
      auto it = producer.find(name);
      if (it != producer.end() && it->second != i) producers.insert(it->second);
    }
    for (int p : producers) consumers[p].push_back(i);
    pending[i] = static_cast<int>(producers.size());
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < count; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  std::vector<bool> placed(count, false);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    placed[i] = true;
    order.push_back(i);
    for (int c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  for (int i = 0; i < count; ++i) {
    if (!placed[i]) order.push_back(i);
  }
  return order;
}

}  // namespace ortkit
