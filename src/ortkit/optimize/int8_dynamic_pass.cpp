// int8 dynamic quantisation: constant weights of MatMul and Gemm (and Conv, in the pass that asks for it)
// become int8 per output channel; the activations are quantised at run time (DynamicQuantizeLinear,
// uint8) and multiplied in integers. The graph uses ONNX's own operators (MatMulInteger, ConvInteger),
// in the pattern ONNX Runtime fuses at load time into its integer kernels (MatMulIntegerToFloat,
// DynamicQuantizeMatMul), so the file runs on any runtime and fastest on ONNX Runtime.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "ortkit/optimize/graph_rewrite.h"
#include "ortkit/optimize/passes.h"
#include "ortkit/optimize/weight_quantization.h"

namespace ortkit {
namespace {

// Below this many weights a matrix product costs less than quantising its input at run time.
constexpr std::int64_t kMinWeights = 1024;

struct QuantizedActivation {
  std::string values;  // uint8
  std::string scale;
  std::string zero_point;
};

std::string Int8ArithmeticNote(const CpuFeatures& cpu, bool reduce_range) {
  if (reduce_range) {
    return fmt::format(
        "U8S8 with int8 weights per channel in 7 bits (reduce range): this CPU ({}) has no VNNI, and its 8-bit "
        "multiply-add saturates when both operands use their full range",
        cpu.Describe());
  }
  return fmt::format("U8S8 with int8 weights per channel over their full range ({})", cpu.Describe());
}

class DynamicRewriter {
 public:
  DynamicRewriter(GraphRewrite& graph, bool reduce_range, bool convolutions, OptimizePassResult& result)
      : g_(graph), reduce_range_(reduce_range), convolutions_(convolutions), result_(result) {}

  std::vector<onnx::NodeProto> Rewrite() {
    for (const auto& node : g_.graph().node()) {
      const bool done = (node.domain().empty() || node.domain() == "ai.onnx") && node.output_size() >= 1 &&
                        node.input_size() >= 1 &&
                        ((node.op_type() == "MatMul" && TryMatMul(node)) ||
                         (node.op_type() == "Gemm" && TryGemm(node)) || (node.op_type() == "Conv" && TryConv(node)));
      if (done) {
        ++result_.rewritten[node.op_type()];
      } else {
        out_.push_back(node);
      }
    }
    return std::move(out_);
  }

  std::map<std::string, int> left;  // op type and reason -> count

 private:
  std::string Stem(const onnx::NodeProto& node) const { return node.name().empty() ? node.output(0) : node.name(); }

  const QuantizedActivation& Quantize(const std::string& activation) {
    auto it = quantized_.find(activation);
    if (it != quantized_.end()) return it->second;
    auto dql = g_.MakeNode("DynamicQuantizeLinear", {activation}, {"", "", ""}, activation);
    QuantizedActivation q{dql.output(0), dql.output(1), dql.output(2)};
    out_.push_back(std::move(dql));
    return quantized_.emplace(activation, q).first->second;
  }

  // A [rows, cols] weight as int8 with one scale per column (times `scale_factor`, a Gemm's alpha), both
  // added as initializers; false when `values` does not hold the matrix.
  bool AddWeight(const std::string& stem, std::span<const float> values, std::int64_t rows, std::int64_t cols,
                 std::string& q_name, std::string& scale_name, float scale_factor = 1) {
    if (rows * cols != static_cast<std::int64_t>(values.size())) return false;
    Int8Channels q = QuantizeInt8PerChannel(values, rows, cols, /*per_column=*/true, reduce_range_);
    for (float& s : q.scales) s *= scale_factor;
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT8);
    t.add_dims(rows);
    t.add_dims(cols);
    t.set_raw_data(q.values.data(), q.values.size());
    q_name = g_.AddInitializer(stem + "_int8", std::move(t));
    scale_name = g_.AddFloats(stem + "_scale", q.scales, {cols});
    return true;
  }

  void EmitProduct(const std::string& op, const onnx::NodeProto& original, const QuantizedActivation& a,
                   const std::string& weight, const std::string& weight_scale, const std::string& output,
                   const std::string& stem) {
    auto product = g_.MakeNode(op, {a.values, weight, a.zero_point, zero_point_}, {""}, stem);
    if (op == "ConvInteger") {
      for (const auto& attr : original.attribute()) *product.add_attribute() = attr;
    }
    auto cast = g_.MakeNode("Cast", {product.output(0)}, {""}, stem);
    auto* to = cast.add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
    auto scale = g_.MakeNode("Mul", {a.scale, weight_scale}, {""}, stem + "_scales");
    auto mul = g_.MakeNode("Mul", {cast.output(0), scale.output(0)}, {output}, stem + "_output");
    for (auto* n : {&product, &cast, &scale, &mul}) out_.push_back(std::move(*n));
  }

  void EnsureZeroPoint() {
    if (zero_point_.empty()) zero_point_ = g_.AddScalar("int8_zero_point", onnx::TensorProto::INT8, 0);
  }

  const onnx::TensorProto* Weight(const onnx::NodeProto& node, const std::string& what) {
    const onnx::TensorProto* w = node.input_size() > 1 ? g_.FloatWeight(node.input(1)) : nullptr;
    if (w == nullptr) {
      ++left[fmt::format("{} {}", node.op_type(), what)];
      return nullptr;
    }
    return w;
  }

  bool TryMatMul(const onnx::NodeProto& node) {
    const onnx::TensorProto* w = Weight(node, "of two activations (no constant float weight)");
    if (w == nullptr) return false;
    if (w->dims_size() != 2 || w->dims(0) * w->dims(1) < kMinWeights) {
      ++left[w->dims_size() != 2 ? "MatMul with a weight of rank other than 2" : "MatMul with a small weight"];
      return false;
    }
    auto values = GraphRewrite::FloatValues(*w);
    if (!values) return false;
    std::string q, scale;
    EnsureZeroPoint();
    if (!AddWeight(w->name(), *values, w->dims(0), w->dims(1), q, scale)) return false;
    EmitProduct("MatMulInteger", node, Quantize(node.input(0)), q, scale, node.output(0), Stem(node));
    return true;
  }

  bool TryGemm(const onnx::NodeProto& node) {
    const float alpha = FloatAttribute(node, "alpha", 1), beta = FloatAttribute(node, "beta", 1);
    const bool trans_b = IntAttribute(node, "transB", 0) != 0;
    const bool has_bias = node.input_size() > 2 && !node.input(2).empty();
    if (IntAttribute(node, "transA", 0) != 0 ||
        (has_bias && beta != 1 && g_.FloatWeight(node.input(2), 0) == nullptr)) {
      ++left["Gemm with a transposed input or a scaled computed bias"];
      return false;
    }
    const onnx::TensorProto* w = Weight(node, "of two activations (no constant float weight)");
    if (w == nullptr || w->dims_size() != 2) return false;
    auto values = GraphRewrite::FloatValues(*w);
    if (!values) return false;
    const std::int64_t k = trans_b ? w->dims(1) : w->dims(0), n = trans_b ? w->dims(0) : w->dims(1);
    if (k * n < kMinWeights) {
      ++left["Gemm with a small weight"];
      return false;
    }
    std::vector<float> kn(values->size());
    for (std::int64_t r = 0; r < k; ++r) {
      for (std::int64_t c = 0; c < n; ++c) kn[r * n + c] = trans_b ? (*values)[c * k + r] : (*values)[r * n + c];
    }
    std::string q, scale;
    EnsureZeroPoint();
    if (!AddWeight(w->name(), kn, k, n, q, scale, alpha)) return false;
    const std::string stem = Stem(node);
    const std::string product = has_bias ? g_.NewName(stem + "_product") : node.output(0);
    EmitProduct("MatMulInteger", node, Quantize(node.input(0)), q, scale, product, stem);
    if (has_bias) {
      std::string bias = node.input(2);
      if (beta != 1) {
        auto c = GraphRewrite::FloatValues(*g_.FloatWeight(bias, 0));
        if (!c) return false;
        for (float& v : *c) v *= beta;
        const auto* original = g_.FloatWeight(bias, 0);
        bias = g_.AddFloats(bias + "_scaled", *c, {original->dims().begin(), original->dims().end()});
      }
      out_.push_back(g_.MakeNode("Add", {product, bias}, {node.output(0)}, stem + "_bias"));
    }
    return true;
  }

  bool TryConv(const onnx::NodeProto& node) {
    if (!convolutions_) {
      ++left["Conv left in float (the int8-dynamic-conv candidate quantises convolutions)"];
      return false;
    }
    const onnx::TensorProto* w = Weight(node, "with a computed weight");
    if (w == nullptr || w->dims_size() < 3) return false;
    auto values = GraphRewrite::FloatValues(*w);
    if (!values) return false;
    const std::int64_t m = w->dims(0),
                       per_channel = static_cast<std::int64_t>(values->size()) / std::max<std::int64_t>(m, 1);
    Int8Channels q = QuantizeInt8PerChannel(*values, m, per_channel, /*per_column=*/false, reduce_range_);
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT8);
    for (auto d : w->dims()) t.add_dims(d);
    t.set_raw_data(q.values.data(), q.values.size());
    const std::string q_name = g_.AddInitializer(w->name() + "_int8", std::move(t));
    // Scales (and the bias) broadcast over the output's spatial axes: [M, 1, 1, ...].
    std::vector<std::int64_t> channel_dims(static_cast<std::size_t>(w->dims_size() - 1), 1);
    channel_dims[0] = m;
    const std::string scale = g_.AddFloats(w->name() + "_scale", q.scales, channel_dims);
    EnsureZeroPoint();
    const std::string stem = Stem(node);
    const bool has_bias = node.input_size() > 2 && !node.input(2).empty();
    const onnx::TensorProto* b = has_bias ? g_.FloatWeight(node.input(2), 1) : nullptr;
    if (has_bias && b == nullptr) return false;
    const std::string product = has_bias ? g_.NewName(stem + "_product") : node.output(0);
    EmitProduct("ConvInteger", node, Quantize(node.input(0)), q_name, scale, product, stem);
    if (has_bias) {
      auto bias = GraphRewrite::FloatValues(*b);
      if (!bias) return false;
      out_.push_back(g_.MakeNode("Add", {product, g_.AddFloats(b->name() + "_channels", *bias, channel_dims)},
                                 {node.output(0)}, stem + "_bias"));
    }
    return true;
  }

  GraphRewrite& g_;
  bool reduce_range_;
  bool convolutions_;
  OptimizePassResult& result_;
  std::map<std::string, QuantizedActivation> quantized_;
  std::vector<onnx::NodeProto> out_;
  std::string zero_point_;
};

Result<OptimizePassResult> QuantizeDynamic(onnx::ModelProto& model, const OptimizePassContext& context,
                                           bool convolutions) {
  OptimizePassResult result;
  const bool reduce_range = !context.cpu.HasInt8DotProduct() && context.cpu.architecture == "x86_64";
  GraphRewrite graph(model);
  DynamicRewriter rewriter(graph, reduce_range, convolutions, result);
  std::vector<onnx::NodeProto> nodes = rewriter.Rewrite();
  if (!result.changed()) {
    for (const auto& [what, count] : rewriter.left) result.left.push_back(fmt::format("{} {}", count, what));
    return result;
  }
  const std::int64_t removed = graph.Commit(std::move(nodes));
  result.notes.push_back(Int8ArithmeticNote(context.cpu, reduce_range));
  result.notes.push_back(fmt::format("{:.1f} MB of float weights replaced", static_cast<double>(removed) / 1e6));
  for (const auto& [what, count] : rewriter.left) result.left.push_back(fmt::format("{} {}", count, what));
  for (const auto& [op, count] : CountOps(model.graph())) {
    if (op == "DynamicQuantizeLinear" || op == "MatMulInteger" || op == "ConvInteger") result.produced[op] = count;
  }
  return result;
}

}  // namespace

Result<OptimizePassResult> QuantizeInt8Dynamic(onnx::ModelProto& model, const OptimizePassContext& context) {
  return QuantizeDynamic(model, context, /*convolutions=*/false);
}

Result<OptimizePassResult> QuantizeInt8DynamicWithConvolutions(onnx::ModelProto& model,
                                                               const OptimizePassContext& context) {
  return QuantizeDynamic(model, context, /*convolutions=*/true);
}

}  // namespace ortkit
