// float64 islands in a float32 model -> float32: the doubles an exporter let in (a Python float
// constant, a numpy default) become floats, when the model's own inputs and outputs are not
// float64 and every value fits. Whether the outputs stay within tolerance is for ModelFix to prove.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "ortkit/check/lint_index.h"
#include "ortkit/fix/fix_passes.h"
#include "ortkit/fix/graph_surgery.h"

namespace ortkit {
namespace {

constexpr int kDouble = onnx::TensorProto::DOUBLE;
constexpr int kFloat = onnx::TensorProto::FLOAT;

/// The doubles a tensor holds, from double_data or little-endian raw_data.
std::vector<double> Doubles(const onnx::TensorProto& tensor) {
  if (!tensor.raw_data().empty()) {
    std::vector<double> values(tensor.raw_data().size() / sizeof(double));
    std::memcpy(values.data(), tensor.raw_data().data(), values.size() * sizeof(double));
    return values;
  }
  return {tensor.double_data().begin(), tensor.double_data().end()};
}

/// Whether every value is NaN, an infinity or within float32's range.
bool FitsFloat(const std::vector<double>& values) {
  for (double v : values) {
    if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max()) return false;
  }
  return true;
}

void ToFloat(onnx::TensorProto& tensor) {
  const auto values = Doubles(tensor);
  std::string raw(values.size() * sizeof(float), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(values[i]);
    std::memcpy(raw.data() + i * sizeof(float), &f, sizeof(float));
  }
  tensor.clear_double_data();
  tensor.set_raw_data(std::move(raw));
  tensor.set_data_type(kFloat);
}

void ValueToFloat(onnx::ValueInfoProto& value, int& count) {
  if (!value.type().has_tensor_type() || value.type().tensor_type().elem_type() != kDouble) return;
  value.mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  ++count;
}

/// The doubles of a graph (initializers, tensor and type attributes, declared values) -> float.
struct Float64Counts {
  int tensors = 0;
  int type_attributes = 0;
  int values = 0;
  std::vector<std::string> too_large;
};

void GraphToFloat(onnx::GraphProto& graph, Float64Counts& counts, bool apply) {
  auto tensor = [&](onnx::TensorProto& t, const std::string& what) {
    if (t.data_type() != kDouble) return;
    if (!FitsFloat(Doubles(t))) {
      counts.too_large.push_back(what);
      return;
    }
    if (apply) ToFloat(t);
    ++counts.tensors;
  };
  for (auto& init : *graph.mutable_initializer()) tensor(init, fmt::format("initializer '{}'", init.name()));
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) tensor(*attr.mutable_t(), fmt::format("node '{}' attribute '{}'", node.name(), attr.name()));
      if ((attr.name() == "to" || attr.name() == "dtype") && attr.has_i() && attr.i() == kDouble) {
        if (apply) attr.set_i(kFloat);
        ++counts.type_attributes;
      }
    }
  }
  if (!apply) return;
  for (auto& v : *graph.mutable_value_info()) ValueToFloat(v, counts.values);
}

}  // namespace

FixPassResult FixFloat64(onnx::ModelProto& model, const FixPassOptions&) {
  FixPassResult result;
  auto& graph = *model.mutable_graph();
  std::vector<std::string> interface;
  for (const auto& v : graph.input()) {
    if (lint::ElementTypeOf(v.type()) == kDouble) interface.push_back("input '" + v.name() + "'");
  }
  for (const auto& v : graph.output()) {
    if (lint::ElementTypeOf(v.type()) == kDouble) interface.push_back("output '" + v.name() + "'");
  }
  if (!interface.empty()) {
    result.refusals.push_back({"graph.float64-mixed", lint::NameList(interface),
                               "the model's own inputs or outputs are float64: making them float32 changes what "
                               "callers feed and read; export with float32 inputs"});
    return result;
  }
  Float64Counts check;
  ForEachMutableGraph(graph, [&](onnx::GraphProto& g) { GraphToFloat(g, check, /*apply=*/false); });
  if (!check.too_large.empty()) {
    result.refusals.push_back({"graph.float64-mixed", lint::NameList(check.too_large),
                               "holds values beyond float32's range (3.4e38): they would become infinities"});
    return result;
  }
  Float64Counts done;
  ForEachMutableGraph(graph, [&](onnx::GraphProto& g) {
    GraphToFloat(g, done, /*apply=*/true);
    // Subgraph bodies declare their own inputs and outputs.
    if (&g == &graph) return;
    for (auto& v : *g.mutable_input()) ValueToFloat(v, done.values);
    for (auto& v : *g.mutable_output()) ValueToFloat(v, done.values);
  });
  if (done.tensors + done.type_attributes + done.values == 0) return result;
  result.changes.push_back(
      {"graph.float64-mixed", "the graph",
       fmt::format("float64 -> float32: {} tensor{} (initializers and constants), {} Cast/dtype attribute{}, {} "
                   "declared value{}",
                   done.tensors, done.tensors == 1 ? "" : "s", done.type_attributes,
                   done.type_attributes == 1 ? "" : "s", done.values, done.values == 1 ? "" : "s")});
  return result;
}

}  // namespace ortkit
