// int4 weight-only quantisation: a MatMul whose B is a constant float [K, N] weight becomes ONNX Runtime's
// com.microsoft MatMulNBits, its weight in 4-bit blocks along K with a float scale and a 4-bit zero point
// per block (weight_quantization.h holds the layout). The graph's activations stay float: the kernel
// dequantises the weight as it multiplies (at accuracy_level 4 quantising each block of the activations to
// int8 inside the kernel), so the weights take about a sixth of their float size, and the time goes down
// where reading the weights dominates (decoders at small batches).
#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"
#include "ortkit/optimize/graph_rewrite.h"
#include "ortkit/optimize/passes.h"
#include "ortkit/optimize/weight_quantization.h"

namespace ortkit {
namespace {

constexpr const char* kMicrosoftDomain = "com.microsoft";

// The MatMulNBits inputs made from one weight (a weight read by several MatMuls is quantised once).
struct PackedWeight {
  std::int64_t k = 0;
  std::int64_t n = 0;
  std::string packed;
  std::string scales;
  std::string zero_points;
  double largest_step = 0;
};

class Int4Rewriter {
 public:
  Int4Rewriter(GraphRewrite& graph, std::int64_t block, std::int64_t accuracy_level, OptimizePassResult& result)
      : g_(graph), block_(block), accuracy_level_(accuracy_level), result_(result) {}

  std::vector<onnx::NodeProto> Rewrite() {
    std::vector<onnx::NodeProto> out;
    for (const auto& node : g_.graph().node()) {
      const bool onnx_domain = node.domain().empty() || node.domain() == "ai.onnx";
      const PackedWeight* weight =
          onnx_domain && node.op_type() == "MatMul" && node.input_size() == 2 && node.output_size() == 1 ? Take(node)
                                                                                                         : nullptr;
      if (weight == nullptr) {
        out.push_back(node);
        continue;
      }
      out.push_back(MatMulNBits(node, *weight));
      ++result_.rewritten["MatMul"];
    }
    return out;
  }

  std::map<std::string, int> left;  // what was left and why -> count
  double largest_step = 0;

 private:
  const PackedWeight* Take(const onnx::NodeProto& node) {
    if (auto it = packed_.find(node.input(1)); it != packed_.end()) return &it->second;
    const onnx::TensorProto* w = g_.FloatWeight(node.input(1));
    if (w == nullptr) {
      ++left["MatMul without a constant float weight (two activations, or a weight that is also an input)"];
      return nullptr;
    }
    if (w->dims_size() != 2) {
      ++left["MatMul with a weight of rank other than 2"];
      return nullptr;
    }
    const std::int64_t k = w->dims(0), n = w->dims(1);
    if (ElementCount(*w) < kInt4MinWeights || k < 16 || n < 1) {
      ++left[fmt::format("MatMul with a small weight (under {} values, or K under 16)", kInt4MinWeights)];
      return nullptr;
    }
    auto values = GraphRewrite::FloatValues(*w);
    if (!values) return nullptr;
    const Int4Blocks q = QuantizeInt4Blocks(*values, k, n, block_, /*symmetric=*/false);
    PackedWeight p;
    p.k = k;
    p.n = n;
    onnx::TensorProto blob;
    blob.set_data_type(onnx::TensorProto::UINT8);
    for (const std::int64_t d : {n, q.blocks_per_column, block_ / 2}) blob.add_dims(d);
    blob.set_raw_data(q.packed.data(), q.packed.size());
    p.packed = g_.AddInitializer(w->name() + "_int4", std::move(blob));
    p.scales = g_.AddFloats(w->name() + "_int4_scales", q.scales, {n, q.blocks_per_column});
    onnx::TensorProto zero_points;
    zero_points.set_data_type(onnx::TensorProto::UINT8);
    zero_points.add_dims(n);
    zero_points.add_dims(static_cast<std::int64_t>(q.zero_points.size()) / n);
    zero_points.set_raw_data(q.zero_points.data(), q.zero_points.size());
    p.zero_points = g_.AddInitializer(w->name() + "_int4_zero_points", std::move(zero_points));
    for (const float s : q.scales) largest_step = std::max(largest_step, static_cast<double>(std::abs(s)));
    return &packed_.emplace(node.input(1), std::move(p)).first->second;
  }

  onnx::NodeProto MatMulNBits(const onnx::NodeProto& node, const PackedWeight& w) {
    const std::string stem = node.name().empty() ? node.output(0) : node.name();
    onnx::NodeProto q = g_.MakeNode("MatMulNBits", {node.input(0), w.packed, w.scales, w.zero_points}, {node.output(0)},
                                    stem, kMicrosoftDomain);
    for (const auto& [name, value] : {std::pair<const char*, std::int64_t>{"K", w.k},
                                      {"N", w.n},
                                      {"bits", 4},
                                      {"block_size", block_},
                                      {"accuracy_level", accuracy_level_}}) {
      auto* a = q.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(value);
    }
    return q;
  }

  GraphRewrite& g_;
  std::int64_t block_;
  std::int64_t accuracy_level_;
  OptimizePassResult& result_;
  std::unordered_map<std::string, PackedWeight> packed_;
};

}  // namespace

Result<OptimizePassResult> QuantizeInt4WeightOnly(onnx::ModelProto& model, const OptimizePassContext& context) {
  const std::int64_t block = context.int4_block;
  if (block < 16 || block > 256 || (block & (block - 1)) != 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--int4-block {}: expected 16, 32, 64 or 128 (a power of two)", block));
  }
  OptimizePassResult result;
  GraphRewrite graph(model);
  Int4Rewriter rewriter(graph, block, context.int4_accuracy_level, result);
  std::vector<onnx::NodeProto> nodes = rewriter.Rewrite();
  for (const auto& [what, count] : rewriter.left) result.left.push_back(fmt::format("{} {}", count, what));
  if (!result.changed()) {
    if (result.left.empty())
      result.left.push_back("no MatMul in the main graph (int4 rewrites MatMul with a constant float [K, N] weight)");
    return result;
  }
  const std::int64_t removed = graph.Commit(std::move(nodes));
  graph.ImportDomain(kMicrosoftDomain, 1);
  result.produced["MatMulNBits"] = result.rewritten["MatMul"];
  result.notes.push_back(
      fmt::format("4-bit blocks of {} along K, a float scale and a 4-bit zero point each; {}", block,
                  context.int4_accuracy_level == 4
                      ? "the kernel quantises the activations to int8 per block (accuracy_level 4)"
                      : fmt::format("activations stay float (accuracy_level {})", context.int4_accuracy_level)));
  result.notes.push_back(fmt::format("{:.1f} MB of float weights replaced (largest step {:.3g})",
                                     static_cast<double>(removed) / 1e6, rewriter.largest_step));
  return result;
}

}  // namespace ortkit
