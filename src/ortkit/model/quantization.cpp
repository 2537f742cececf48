#include "ortkit/model/quantization.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/model/graph_walk.h"
#include "ortkit/tensor/tensor_proto.h"

namespace ortkit {
namespace {

using Scheme = QuantizationSummary::Scheme;

struct QuantizationOp {
  std::string_view op_type;
  Scheme scheme;
};

// ConvInteger and MatMulInteger are kDynamic when DynamicQuantizeLinear feeds them (ONNX Runtime's
// quantize_dynamic) and kQOperator otherwise; SummarizeQuantization settles that.
constexpr std::array kQuantizationOps = std::to_array<QuantizationOp>({
    {"QuantizeLinear", Scheme::kQdq},
    {"DequantizeLinear", Scheme::kQdq},
    {"QLinearConv", Scheme::kQOperator},
    {"QLinearMatMul", Scheme::kQOperator},
    {"QLinearAdd", Scheme::kQOperator},
    {"QLinearMul", Scheme::kQOperator},
    {"QLinearSigmoid", Scheme::kQOperator},
    {"QLinearLeakyRelu", Scheme::kQOperator},
    {"QLinearSoftmax", Scheme::kQOperator},
    {"QLinearConcat", Scheme::kQOperator},
    {"QLinearAveragePool", Scheme::kQOperator},
    {"QLinearGlobalAveragePool", Scheme::kQOperator},
    {"QLinearReduceMean", Scheme::kQOperator},
    {"QLinearWhere", Scheme::kQOperator},
    {"QLinearConvTranspose", Scheme::kQOperator},
    {"QGemm", Scheme::kQOperator},
    {"QEmbedLayerNormalization", Scheme::kQOperator},
    {"ConvInteger", Scheme::kQOperator},
    {"MatMulInteger", Scheme::kQOperator},
    {"DynamicQuantizeLinear", Scheme::kDynamic},
    {"DynamicQuantizeMatMul", Scheme::kDynamic},
    {"DynamicQuantizeLSTM", Scheme::kDynamic},
    {"MatMulIntegerToFloat", Scheme::kDynamic},
    {"QAttention", Scheme::kDynamic},
    {"MatMulNBits", Scheme::kWeightOnly},
    {"MatMulBnb4", Scheme::kWeightOnly},
    {"MatMulFpQ4", Scheme::kWeightOnly},
    {"GatherBlockQuantized", Scheme::kWeightOnly},
});

const QuantizationOp* FindQuantizationOp(const onnx::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx" && node.domain() != "com.microsoft") return nullptr;
  auto it = std::find_if(kQuantizationOps.begin(), kQuantizationOps.end(),
                         [&](const QuantizationOp& op) { return op.op_type == node.op_type(); });
  return it == kQuantizationOps.end() ? nullptr : &*it;
}

bool HasBlockSize(const onnx::NodeProto& node) {
  return std::any_of(node.attribute().begin(), node.attribute().end(),
                     [](const onnx::AttributeProto& a) { return a.name() == "block_size" && a.i() > 0; });
}

void AddScheme(std::vector<Scheme>& schemes, Scheme scheme) {
  if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end()) schemes.push_back(scheme);
}

/// Whether `value` is a weight of `graph`: an initializer or a Constant node's output.
bool IsWeight(const onnx::GraphProto& graph, const std::string& value) {
  return std::any_of(graph.initializer().begin(), graph.initializer().end(),
                     [&](const onnx::TensorProto& t) { return t.name() == value; }) ||
         std::any_of(graph.node().begin(), graph.node().end(), [&](const onnx::NodeProto& n) {
           return n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == value;
         });
}

void CountGraph(const onnx::GraphProto& graph, QuantizationSummary& summary, std::vector<Scheme>& seen) {
  for (const auto& node : graph.node()) {
    const QuantizationOp* op = FindQuantizationOp(node);
    if (op == nullptr) continue;
    ++summary.nodes[node.op_type()];
    // Dequantising a weight block-wise, or with no QuantizeLinear anywhere, is weight-only quantisation;
    // dequantising a value computed at run time belongs to the scheme that quantised it.
    const bool weight = node.op_type() == "DequantizeLinear" && node.input_size() > 0 && IsWeight(graph, node.input(0));
    if (node.op_type() == "DequantizeLinear" && !weight) continue;
    AddScheme(seen, weight && HasBlockSize(node) ? Scheme::kWeightOnly : op->scheme);
  }
}

const char* SchemeTitle(Scheme scheme) {
  switch (scheme) {
    case Scheme::kQdq: return "static QDQ";
    case Scheme::kQOperator: return "integer operators";
    case Scheme::kDynamic: return "dynamic int8";
    case Scheme::kWeightOnly: return "weight-only";
  }
  return "quantised";
}

/// A constant of the main graph (an initializer or a Constant node's value) as its largest |value|.
std::optional<double> LargestConstant(const onnx::GraphProto& graph, const std::string& name) {
  const onnx::TensorProto* proto = nullptr;
  for (const auto& init : graph.initializer()) {
    if (init.name() == name) proto = &init;
  }
  for (const auto& node : graph.node()) {
    if (proto != nullptr) break;
    if (node.op_type() != "Constant" || node.output_size() != 1 || node.output(0) != name) continue;
    for (const auto& a : node.attribute()) {
      if (a.name() == "value" && a.has_t()) proto = &a.t();
    }
  }
  if (proto == nullptr) return std::nullopt;
  auto tensor = TensorFromProto(*proto, name);
  if (!tensor.ok() || tensor->element_count() == 0) return std::nullopt;
  double largest = 0;
  for (std::int64_t i = 0; i < tensor->element_count(); ++i)
    largest = std::max(largest, std::fabs(tensor->AsDouble(i)));
  return std::isfinite(largest) && largest > 0 ? std::optional<double>(largest) : std::nullopt;
}

bool KeepsDifferences(const onnx::NodeProto& node) {
  static constexpr std::array<std::string_view, 16> kOps = {
      "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Slice", "Gather",
      "Softmax", "Sigmoid",   "Relu",    "Tanh",      "Clip",    "Expand",   "Split", "MaxPool"};
  return node.domain().empty() && std::find(kOps.begin(), kOps.end(), node.op_type()) != kOps.end();
}

}  // namespace

const char* ToString(Scheme scheme) {
  switch (scheme) {
    case Scheme::kQdq: return "qdq";
    case Scheme::kQOperator: return "qoperator";
    case Scheme::kDynamic: return "dynamic";
    case Scheme::kWeightOnly: return "weight-only";
  }
  return "qdq";
}

QuantizationSummary SummarizeQuantization(const onnx::ModelProto& model) {
  QuantizationSummary summary;
  std::vector<Scheme> seen;
  ForEachGraph(model.graph(),
               [&](const onnx::GraphProto& graph, const std::string&) { CountGraph(graph, summary, seen); });
  for (const auto& function : model.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = function.node();
    CountGraph(body, summary, seen);
  }
  const auto has = [&](std::string_view op) { return summary.nodes.count(std::string(op)) > 0; };
  const bool dynamic = std::find(seen.begin(), seen.end(), Scheme::kDynamic) != seen.end();
  const bool integer_only = !has("QuantizeLinear") && (has("ConvInteger") || has("MatMulInteger"));
  for (Scheme scheme : seen) {
    if (scheme == Scheme::kQdq && !has("QuantizeLinear")) {
      // Dequantisation alone reads weights only: weight-only quantisation.
      AddScheme(summary.schemes, Scheme::kWeightOnly);
    } else if (scheme == Scheme::kQOperator && dynamic && integer_only &&
               std::none_of(summary.nodes.begin(), summary.nodes.end(), [](const auto& entry) {
                 return entry.first.rfind("QLinear", 0) == 0 || entry.first == "QGemm";
               })) {
      // ConvInteger / MatMulInteger fed by DynamicQuantizeLinear: dynamic quantisation, not QOperator.
      continue;
    } else {
      AddScheme(summary.schemes, scheme);
    }
  }
  std::sort(summary.schemes.begin(), summary.schemes.end());
  return summary;
}

std::string QuantizationSummary::Describe() const {
  if (!quantized()) return "";
  std::vector<std::string> titles;
  for (Scheme s : schemes) titles.emplace_back(SchemeTitle(s));
  std::vector<std::pair<std::string, int>> counted(nodes.begin(), nodes.end());
  std::stable_sort(counted.begin(), counted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  parts.reserve(counted.size());
  for (const auto& [op, count] : counted) parts.push_back(fmt::format("{} {}", count, op));
  return fmt::format("{} ({})", fmt::join(titles, " + "), fmt::join(parts, ", "));
}

nlohmann::json QuantizationSummary::ToJson() const {
  nlohmann::json names = nlohmann::json::array();
  for (Scheme s : schemes) names.push_back(ToString(s));
  return {{"schemes", std::move(names)}, {"nodes", nodes}};
}

std::optional<double> OutputQuantizationStep(const onnx::ModelProto& model, const std::string& output) {
  const onnx::GraphProto& graph = model.graph();
  const std::string* value = &output;
  for (int hops = 0; hops < 16; ++hops) {
    auto it = std::find_if(graph.node().begin(), graph.node().end(), [&](const onnx::NodeProto& n) {
      return std::find(n.output().begin(), n.output().end(), *value) != n.output().end();
    });
    if (it == graph.node().end()) return std::nullopt;
    if (it->op_type() == "DequantizeLinear" && it->input_size() >= 2) return LargestConstant(graph, it->input(1));
    if (!KeepsDifferences(*it) || it->input_size() == 0) return std::nullopt;
    value = &it->input(0);
  }
  return std::nullopt;
}

}  // namespace ortkit
