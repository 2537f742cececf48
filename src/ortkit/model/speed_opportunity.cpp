#include "ortkit/model/speed_opportunity.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"
#include "ortkit/model/quantization.h"

namespace ortkit {
namespace {

std::string Command(std::string_view model_path) {
  return fmt::format("`ortkit optimize {} --out fast.onnx`", model_path.empty() ? "MODEL" : model_path);
}

int Percent(double share) { return static_cast<int>(share * 100 + 0.5); }

// The float forms of the operators optimize quantises, under the names a profile gives them.
const std::set<std::string, std::less<>> kFloatProducts = {"MatMul", "FusedMatMul", "Gemm",         "FusedGemm",
                                                           "Conv",   "FusedConv",   "NhwcFusedConv"};

}  // namespace

WeightShare ShareWeights(const onnx::ModelProto& model) {
  WeightShare share;
  share.quantized = SummarizeQuantization(model).quantized();
  std::map<std::string, const onnx::TensorProto*> weights;
  for (const auto& t : model.graph().initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    share.float_bytes += std::max<long long>(ElementCount(t), 0) * 4;
    weights[t.name()] = &t;
  }
  std::set<std::string> products, convolutions;
  for (const auto& n : model.graph().node()) {
    if (n.input_size() < 2) continue;
    const auto it = weights.find(n.input(1));
    if (it == weights.end()) continue;
    if ((n.op_type() == "MatMul" || n.op_type() == "Gemm") && it->second->dims_size() == 2) products.insert(n.input(1));
    if (n.op_type() == "Conv") convolutions.insert(n.input(1));
  }
  for (const auto& name : products) share.product_bytes += std::max<long long>(ElementCount(*weights[name]), 0) * 4;
  for (const auto& name : convolutions)
    share.convolution_bytes += std::max<long long>(ElementCount(*weights[name]), 0) * 4;
  return share;
}

std::string NextStepFromWeights(const WeightShare& share, std::string_view model_path, const CpuFeatures& cpu) {
  const std::int64_t quantisable = share.product_bytes + share.convolution_bytes;
  if (share.quantized || quantisable < kWorthQuantisingBytes || 2 * quantisable < share.float_bytes) return "";
  const bool products = share.product_bytes >= share.convolution_bytes;
  const double held = static_cast<double>(products ? share.product_bytes : share.convolution_bytes) /
                      static_cast<double>(share.float_bytes);
  const std::string arithmetic =
      !products ? "int8 convolutions are measured against float before one is chosen"
      : cpu.HasInt8DotProduct()
          ? fmt::format("int8 on this CPU's 8-bit dot products ({}), each candidate proven and measured",
                        cpu.Describe())
          : "this CPU has no 8-bit dot products (VNNI), so int8 is measured against float before it is chosen";
  return fmt::format("{} ({} hold {}% of the weights; {})", Command(model_path), products ? "MatMul/Gemm" : "Conv",
                     Percent(held), arithmetic);
}

std::string NextStepFromProfile(const std::vector<OpTimeShare>& op_types, std::string_view model_path) {
  double total = 0;
  std::vector<const OpTimeShare*> named;
  for (const auto& g : op_types) {
    if (kFloatProducts.count(g.op_type) == 0) continue;
    total += g.share;
    named.push_back(&g);
  }
  if (total < 0.5 || named.empty()) return "";
  std::sort(named.begin(), named.end(), [](const auto* a, const auto* b) { return a->share > b->share; });
  std::string who = named[0]->op_type;
  if (named.size() == 2) who += " and " + named[1]->op_type;
  if (named.size() > 2) who += fmt::format(" and {} other products", named.size() - 1);
  return fmt::format("{} {} {}% of the time: {} (int8 and fusions, each proven and measured here)", who,
                     named.size() == 1 ? "is" : "are", Percent(total), Command(model_path));
}

}  // namespace ortkit
