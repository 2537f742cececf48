// int8 static quantisation in QDQ form: the graph at ONNX Runtime's basic level (constants folded, Conv
// and BatchNormalization merged), calibrated on the user's samples, then QuantizeLinear/DequantizeLinear
// pairs around the operators ONNX Runtime runs as integer kernels (QLinearConv, QLinearMatMul, QGemm,
// QLinearAdd, the pools): activations uint8 with the calibrated ranges, weights int8 per output channel,
// biases int32 at the input's scale times the weight's. A Relu right after a quantised operator is
// dropped: the uint8 output with zero point 0 is its ReLU.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "ortkit/check/onnx_checker.h"
#include "ortkit/optimize/calibration.h"
#include "ortkit/optimize/graph_rewrite.h"
#include "ortkit/optimize/passes.h"
#include "ortkit/optimize/weight_quantization.h"

namespace ortkit {
namespace {

const std::set<std::string> kComputeOps = {"Conv", "MatMul", "Gemm"};
const std::set<std::string> kElementOps = {"Add", "MaxPool", "AveragePool", "GlobalAveragePool"};

struct QdqPlan {
  std::set<int> nodes;                        ///< indices of the nodes to quantise
  std::vector<std::string> tensors;           ///< activations to calibrate and quantise, in order
  std::map<int, int> relu_after;              ///< quantised node -> the Relu dropped after it
  std::map<std::string, std::string> weight;  ///< weight initializer -> the op reading it (its axis)
};

bool IsDefaultDomain(const onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

// Which nodes to quantise: compute ops with a constant float weight (Gemm without transA), element-wise
// and pooling ops; every float activation they read or write.
QdqPlan Plan(GraphRewrite& g) {
  QdqPlan plan;
  const onnx::GraphProto& graph = g.graph();
  std::map<std::string, std::vector<int>> readers;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& in : graph.node(i).input()) readers[in].push_back(i);
  }
  std::set<std::string> outputs;
  for (const auto& o : graph.output()) outputs.insert(o.name());
  // The element types shape inference found for the values: only float ones are quantised.
  std::set<std::string> floats;
  for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto& v : *list) {
      if (v.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT) floats.insert(v.name());
    }
  }
  std::set<std::string> seen;
  // Graph outputs stay as the float operator computed them (their readers are the callers).
  const auto add = [&](const std::string& t) {
    if (!t.empty() && floats.count(t) != 0 && outputs.count(t) == 0 && g.FloatWeight(t, 0) == nullptr &&
        seen.insert(t).second)
      plan.tensors.push_back(t);
  };
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    if (!IsDefaultDomain(n) || n.output_size() != 1 || n.input_size() < 1) continue;
    const bool compute = kComputeOps.count(n.op_type()) != 0 && n.input_size() >= 2 &&
                         g.FloatWeight(n.input(1), 2) != nullptr && IntAttribute(n, "transA", 0) == 0;
    if (!compute && kElementOps.count(n.op_type()) == 0) continue;
    const bool float_io = floats.count(n.input(0)) != 0 && floats.count(n.output(0)) + outputs.count(n.output(0)) != 0;
    if (!float_io) continue;
    if (n.op_type() == "Add" && (n.input_size() != 2 || floats.count(n.input(1)) == 0 || g.FloatWeight(n.input(0), 0) ||
                                 g.FloatWeight(n.input(1), 0)))
      continue;
    plan.nodes.insert(i);
    add(n.input(0));
    if (!compute && n.input_size() > 1) add(n.input(1));
    if (compute) plan.weight[n.input(1)] = n.op_type();
    const auto& r = readers[n.output(0)];
    if (r.size() == 1 && graph.node(r[0]).op_type() == "Relu" && outputs.count(n.output(0)) == 0 &&
        outputs.count(graph.node(r[0]).output(0)) == 0) {
      plan.relu_after[i] = r[0];
      add(graph.node(r[0]).output(0));
    } else {
      add(n.output(0));
    }
  }
  return plan;
}

struct ActivationQuant {
  std::string scale;
  std::string zero_point;
  float scale_value = 1;
};

ActivationQuant AddActivationQuant(GraphRewrite& g, const std::string& tensor, TensorRange r) {
  float scale = (r.max - r.min) / 255.0f;
  float zero = 0;
  if (scale > 0 && std::isfinite(scale)) {
    zero = std::clamp(std::nearbyint(-r.min / scale), 0.0f, 255.0f);
  } else {
    scale = 1;
  }
  return {g.AddScalar(tensor + "_scale", onnx::TensorProto::FLOAT, scale),
          g.AddScalar(tensor + "_zero_point", onnx::TensorProto::UINT8, zero), scale};
}

onnx::AttributeProto IntAttr(const std::string& name, std::int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

// The int8 weight per output channel behind a DequantizeLinear; returns the DQ's output and the scales.
std::string AddWeightDq(GraphRewrite& g, const onnx::TensorProto& w, const std::string& op, bool trans_b,
                        bool reduce_range, std::vector<onnx::NodeProto>& out, std::vector<float>& scales) {
  const auto values = GraphRewrite::FloatValues(w).value_or(std::vector<float>{});
  const std::int64_t rows = w.dims(0), cols = rows == 0 ? 0 : static_cast<std::int64_t>(values.size()) / rows;
  const bool per_column = op == "MatMul" || (op == "Gemm" && !trans_b);
  Int8Channels q = QuantizeInt8PerChannel(values, rows, cols, per_column, reduce_range);
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT8);
  for (auto d : w.dims()) t.add_dims(d);
  t.set_raw_data(q.values.data(), q.values.size());
  const std::string q_name = g.AddInitializer(w.name() + "_int8", std::move(t));
  const std::int64_t channels = static_cast<std::int64_t>(q.scales.size());
  const std::string s = g.AddFloats(w.name() + "_scale", q.scales, {channels});
  onnx::TensorProto zp;
  zp.set_data_type(onnx::TensorProto::INT8);
  zp.add_dims(channels);
  zp.set_raw_data(std::string(static_cast<std::size_t>(channels), '\0'));
  const std::string z = g.AddInitializer(w.name() + "_zero_point", std::move(zp));
  auto dq = g.MakeNode("DequantizeLinear", {q_name, s, z}, {""}, w.name());
  *dq.add_attribute() = IntAttr("axis", per_column ? 1 : 0);
  scales = std::move(q.scales);
  out.push_back(dq);
  return dq.output(0);
}

// The bias as int32 at scale input_scale * weight_scale[c], behind a DequantizeLinear.
std::string AddBiasDq(GraphRewrite& g, const onnx::TensorProto& b, float input_scale,
                      const std::vector<float>& weight_scales, std::vector<onnx::NodeProto>& out) {
  const auto values = GraphRewrite::FloatValues(b).value_or(std::vector<float>{});
  if (values.size() != weight_scales.size()) return b.name();
  std::vector<std::int32_t> q(values.size());
  std::vector<float> scales(values.size());
  for (std::size_t c = 0; c < values.size(); ++c) {
    scales[c] = input_scale * weight_scales[c];
    q[c] = static_cast<std::int32_t>(std::clamp(std::nearbyint(values[c] / scales[c]), -2147483520.0f, 2147483520.0f));
  }
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT32);
  t.add_dims(static_cast<std::int64_t>(q.size()));
  t.set_raw_data(q.data(), q.size() * sizeof(std::int32_t));
  const std::string q_name = g.AddInitializer(b.name() + "_int32", std::move(t));
  const std::string s = g.AddFloats(b.name() + "_scale", scales, {static_cast<std::int64_t>(scales.size())});
  onnx::TensorProto zp;
  zp.set_data_type(onnx::TensorProto::INT32);
  zp.add_dims(static_cast<std::int64_t>(q.size()));
  zp.set_raw_data(std::string(q.size() * sizeof(std::int32_t), '\0'));
  const std::string z = g.AddInitializer(b.name() + "_zero_point", std::move(zp));
  auto dq = g.MakeNode("DequantizeLinear", {q_name, s, z}, {""}, b.name());
  *dq.add_attribute() = IntAttr("axis", 0);
  out.push_back(dq);
  return dq.output(0);
}

}  // namespace

namespace {

class QdqRewriter {
 public:
  QdqRewriter(GraphRewrite& g, const QdqPlan& plan, const CalibrationRanges& ranges, bool reduce_range)
      : g_(g), plan_(plan), reduce_range_(reduce_range) {
    for (const auto& t : plan.tensors) {
      auto it = ranges.ranges.find(t);
      quant_[t] = AddActivationQuant(g, t, it == ranges.ranges.end() ? TensorRange{} : it->second);
      dq_[t] = g.NewName(t + "_dequantized");
    }
    for (const auto& [node, relu] : plan.relu_after) dropped_relus_.insert(relu);
  }

  std::vector<onnx::NodeProto> Rewrite(OptimizePassResult& result) {
    const onnx::GraphProto& graph = g_.graph();
    for (const auto& input : graph.input()) EmitQdq(input.name());
    for (int i = 0; i < graph.node_size(); ++i) {
      if (dropped_relus_.count(i) != 0) {
        ++result.rewritten["Relu"];
        continue;
      }
      onnx::NodeProto node = graph.node(i);
      const bool quantised = plan_.nodes.count(i) != 0;
      for (int k = 0; k < node.input_size(); ++k) {
        auto it = dq_.find(node.input(k));
        if (it != dq_.end() && (quantised || relu_outputs_.count(node.input(k)) != 0)) node.set_input(k, it->second);
      }
      if (quantised) {
        QuantiseWeights(node);
        ++result.rewritten[node.op_type()];
        if (auto r = plan_.relu_after.find(i); r != plan_.relu_after.end()) {
          node.set_output(0, graph.node(r->second).output(0));
          relu_outputs_.insert(node.output(0));
        }
      }
      out_.push_back(node);
      for (const auto& o : node.output()) EmitQdq(o);
    }
    return std::move(out_);
  }

 private:
  void EmitQdq(const std::string& tensor) {
    auto it = quant_.find(tensor);
    if (it == quant_.end() || emitted_.count(tensor) != 0) return;
    emitted_.insert(tensor);
    auto q = g_.MakeNode("QuantizeLinear", {tensor, it->second.scale, it->second.zero_point}, {""}, tensor);
    auto dq =
        g_.MakeNode("DequantizeLinear", {q.output(0), it->second.scale, it->second.zero_point}, {dq_[tensor]}, tensor);
    out_.push_back(std::move(q));
    out_.push_back(std::move(dq));
  }

  void QuantiseWeights(onnx::NodeProto& node) {
    if (kComputeOps.count(node.op_type()) == 0) return;
    const onnx::TensorProto* w = g_.FloatWeight(node.input(1), 2);
    if (w == nullptr) return;
    const bool trans_b = IntAttribute(node, "transB", 0) != 0;
    std::vector<float> scales;
    node.set_input(1, AddWeightDq(g_, *w, node.op_type(), trans_b, reduce_range_, out_, scales));
    if (node.op_type() == "MatMul" || node.input_size() < 3 || node.input(2).empty()) return;
    const onnx::TensorProto* b = g_.FloatWeight(node.input(2), 1);
    const auto input = quant_.find(ActivationOf(node));
    if (b == nullptr || input == quant_.end()) return;
    node.set_input(2, AddBiasDq(g_, *b, input->second.scale_value, scales, out_));
  }

  // The activation a quantised node reads, by its name before the DequantizeLinear replaced it.
  std::string ActivationOf(const onnx::NodeProto& node) const {
    for (const auto& [tensor, dq] : dq_) {
      if (dq == node.input(0)) return tensor;
    }
    return node.input(0);
  }

  GraphRewrite& g_;
  const QdqPlan& plan_;
  bool reduce_range_;
  std::map<std::string, ActivationQuant> quant_;
  std::map<std::string, std::string> dq_;
  std::set<int> dropped_relus_;
  std::set<std::string> relu_outputs_;
  std::set<std::string> emitted_;
  std::vector<onnx::NodeProto> out_;
};

// A MaxPool chooses among its input's values: its output shares the input's scale, which lets ONNX Runtime
// run it on the quantised values directly.
void ShareMaxPoolRanges(const onnx::GraphProto& graph, const QdqPlan& plan, CalibrationRanges& ranges) {
  for (int i : plan.nodes) {
    const auto& n = graph.node(i);
    if (n.op_type() != "MaxPool") continue;
    auto in = ranges.ranges.find(n.input(0));
    if (in != ranges.ranges.end()) ranges.ranges[n.output(0)] = in->second;
  }
}

std::string CalibrationNote(const CalibrationRanges& r, std::size_t tensors) {
  return fmt::format("calibrated {} activations on {} samples ({}) in {:.1f} s, peak resident memory {:.0f} MB",
                     tensors, r.samples, ToString(r.method), r.seconds, static_cast<double>(r.peak_rss_bytes) / 1e6);
}

}  // namespace

Result<OptimizePassResult> QuantizeInt8Static(onnx::ModelProto& model, const OptimizePassContext& context) {
  if (context.calibration == nullptr || context.calibration->size() == 0)
    return MakeError(ErrorKind::kInvalidArgument, "int8-static needs calibration samples (--calibration)");
  ORTKIT_ASSIGN_OR_RETURN(OptimizePassResult basic, SaveRuntimeGraph(model, context, OptimizationLevel::kBasic));
  OptimizePassResult result;
  // The element types of the values (value_info), which ONNX Runtime's saved graph does not always keep:
  // only float activations are quantised.
  (void)RunShapeInference(model);
  GraphRewrite g(model);
  const QdqPlan plan = Plan(g);
  if (plan.nodes.empty()) {
    result.left.push_back("no Conv, MatMul or Gemm with a constant float weight, and no Add or pooling to quantise");
    return result;
  }
  CalibrationOptions calibration = context.calibration_options;
  ORTKIT_ASSIGN_OR_RETURN(CalibrationRanges ranges, Calibrate(*context.runtime, model, plan.tensors,
                                                              *context.calibration, calibration, context.scratch));
  ShareMaxPoolRanges(model.graph(), plan, ranges);
  const bool reduce_range = !context.cpu.HasInt8DotProduct() && context.cpu.architecture == "x86_64";
  QdqRewriter rewriter(g, plan, ranges, reduce_range);
  std::vector<onnx::NodeProto> nodes = rewriter.Rewrite(result);
  g.Commit(std::move(nodes));
  for (const auto& [op, count] : CountOps(model.graph())) {
    if (op == "QuantizeLinear" || op == "DequantizeLinear") result.produced[op] = count;
  }
  result.notes = basic.notes;
  result.notes.push_back(CalibrationNote(ranges, plan.tensors.size()));
  result.notes.push_back(
      fmt::format("QDQ: activations uint8 at their calibrated ranges, weights int8 per output "
                  "channel{}, biases int32",
                  reduce_range ? " in 7 bits (no VNNI)" : ""));
  return result;
}

}  // namespace ortkit
