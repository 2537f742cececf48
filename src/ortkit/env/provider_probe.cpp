#include "ortkit/env/provider_probe.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/scratch_folder.h"
#include "ortkit/runtime/profile.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {
namespace {

constexpr std::int64_t kRows = 2;
constexpr std::int64_t kWidth = 8;

void AddFloatTensor(onnx::GraphProto& graph, const std::string& name, const std::vector<std::int64_t>& shape) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  std::int64_t count = 1;
  for (auto dim : shape) {
    tensor->add_dims(dim);
    count *= dim;
  }
  for (std::int64_t i = 0; i < count; ++i) tensor->add_float_data(static_cast<float>((i * 7) % 11 - 5) / 8.0F);
}

void Declare(onnx::ValueInfoProto* value, const char* name) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(kRows);
  tensor->mutable_shape()->add_dim()->set_dim_value(kWidth);
}

void AddNode(onnx::GraphProto& graph, const char* op, const char* name, std::vector<std::string> inputs,
             const char* output) {
  auto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (auto& input : inputs) node->add_input(std::move(input));
  node->add_output(output);
}

Result<std::vector<NamedTensor>> RunProbe(Runtime& runtime, const SessionConfig& config, ProfileReport* placement,
                                          std::string* placement_error) {
  ORTKIT_ASSIGN_OR_RETURN(auto session, Session::CreateFromBytes(runtime, ProviderProbeModel(), config));
  std::vector<float> x(kRows * kWidth);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0F;
  ORTKIT_ASSIGN_OR_RETURN(auto tensor, Tensor::FromVector<float>({kRows, kWidth}, x));
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", std::move(tensor)});
  ORTKIT_ASSIGN_OR_RETURN(auto outputs, RunSession(*session, RunRequest{inputs, {}}));
  if (placement != nullptr) {
    auto profile = CollectProfile(*session);
    if (profile.ok())
      *placement = std::move(*profile);
    else
      *placement_error = profile.error().message;
  }
  return outputs;
}

double MaxAbsDiff(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != 1 || b.size() != 1 || a[0].tensor.type() != DataType::kFloat32 ||
      b[0].tensor.type() != DataType::kFloat32 || a[0].tensor.element_count() != b[0].tensor.element_count()) {
    return INFINITY;
  }
  const auto x = a[0].tensor.values<float>();
  const auto y = b[0].tensor.values<float>();
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(static_cast<double>(x[i]) - y[i]);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

}  // namespace

std::string ProviderProbeModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("ortkit env");
  model.add_opset_import()->set_version(17);
  auto& graph = *model.mutable_graph();
  graph.set_name("provider_probe");
  AddFloatTensor(graph, "W", {kWidth, kWidth});
  AddFloatTensor(graph, "b", {kWidth});
  AddNode(graph, "MatMul", "matmul", {"x", "W"}, "xw");
  AddNode(graph, "Add", "add", {"xw", "b"}, "xwb");
  AddNode(graph, "Relu", "relu", {"xwb"}, "y");
  Declare(graph.add_input(), "x");
  Declare(graph.add_output(), "y");
  return model.SerializeAsString();
}

bool ProviderProbe::UsedProvider() const {
  const ProviderInfo* info = FindProvider(provider);
  if (info == nullptr) return false;
  return std::any_of(placement.begin(), placement.end(),
                     [&](const auto& group) { return group.first == info->ort_name && group.second > 0; });
}

std::string ProviderProbe::PlacementText() const {
  std::string text;
  for (const auto& [name, nodes] : placement)
    text += fmt::format("{}{} {} node{}", text.empty() ? "" : ", ", name, nodes, nodes == 1 ? "" : "s");
  return text.empty() ? "unknown" : text;
}

std::string ProviderProbe::Describe() const {
  if (!Ran()) return error;
  std::string text = placement.empty()
                         ? "ran; placement unknown" + (placement_error.empty() ? "" : ": " + placement_error)
                         : "ran on " + PlacementText();
  if (!cpu_fallbacks.empty()) text += fmt::format(" (on the CPU: {})", fmt::join(cpu_fallbacks, ", "));
  if (max_abs_diff >= 0) {
    text += std::isfinite(max_abs_diff) ? fmt::format("; matches the CPU within {:.3g}", max_abs_diff)
                                        : std::string("; its output differs from the CPU's (NaN or another shape)");
  }
  return text;
}

nlohmann::json ProviderProbe::ToJson() const {
  nlohmann::json json = {{"provider", provider}, {"ran", Ran()}, {"error", error}};
  json["placement"] = nlohmann::json::array();
  for (const auto& [name, nodes] : placement) json["placement"].push_back({{"provider", name}, {"nodes", nodes}});
  json["cpu_fallbacks"] = cpu_fallbacks;
  if (!placement_error.empty()) json["placement_error"] = placement_error;
  json["max_abs_diff_vs_cpu"] = max_abs_diff >= 0 && std::isfinite(max_abs_diff) ? nlohmann::json(max_abs_diff)
                                : max_abs_diff < 0                               ? nlohmann::json(nullptr)
                                                                                 : nlohmann::json("inf");
  return json;
}

ProviderProbe ProbeProvider(Runtime& runtime, std::string_view provider) {
  ProviderProbe probe;
  probe.provider = std::string(provider);
  auto scratch = ScratchFolder::Create("probe");
  SessionConfig config;
  config.provider = probe.provider;
  config.optimization_level = OptimizationLevel::kOff;
  if (scratch.ok()) {
    config.enable_profiling = true;
    config.profile_prefix = (scratch->path() / "probe").string();
  } else {
    probe.placement_error = scratch.error().message;
  }
  ProfileReport placement;
  auto outputs = RunProbe(runtime, config, scratch.ok() ? &placement : nullptr, &probe.placement_error);
  if (!outputs.ok()) {
    probe.error = outputs.error().message;
    return probe;
  }
  for (const auto& group : placement.providers) probe.placement.emplace_back(group.name, group.nodes);
  std::stable_sort(probe.placement.begin(), probe.placement.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& node : placement.cpu_fallbacks)
    probe.cpu_fallbacks.push_back(fmt::format("{} '{}'", node.op_type, node.node));
  if (provider != "cpu") {
    SessionConfig cpu;
    cpu.optimization_level = OptimizationLevel::kOff;
    if (auto reference = RunProbe(runtime, cpu, nullptr, nullptr); reference.ok())
      probe.max_abs_diff = MaxAbsDiff(*reference, *outputs);
  }
  return probe;
}

}  // namespace ortkit
