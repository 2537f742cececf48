#include "ortkit/model/graph_walk.h"

#include <limits>

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

}  // namespace ortkit
