#include "ortkit/reduce/fed_values.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "ortkit/check/onnx_checker.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit {
namespace {

/// Fixes the graph inputs' shapes to those of the tensors fed, so that inference gives concrete shapes.
void FixInputShapes(onnx::ModelProto& model, std::span<const NamedTensor> inputs) {
  for (auto& in : *model.mutable_graph()->mutable_input()) {
    auto fed = std::find_if(inputs.begin(), inputs.end(), [&](const NamedTensor& t) { return t.name == in.name(); });
    if (fed == inputs.end() || !in.type().has_tensor_type()) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (std::int64_t d : fed->tensor.shape()) shape->add_dim()->set_dim_value(d);
  }
}

Result<Tensor> Synthesise(const std::string& name, const ValueType& type, std::uint64_t seed) {
  TensorSpec spec;
  spec.name = name;
  spec.type = static_cast<DataType>(type.elem_type);
  for (std::int64_t d : type.dims) spec.dims.push_back(DimSpec{d, {}});
  InputPlan plan;
  plan.seed = seed;
  ORTKIT_ASSIGN_OR_RETURN(auto tensors, SynthesizeInputs({spec}, {}, plan));
  if (tensors.empty()) return MakeError(ErrorKind::kInternal, fmt::format("nothing synthesised for '{}'", name));
  return std::move(tensors.front().tensor);
}

}  // namespace

bool HoldsNonFinite(const Tensor& tensor) {
  const DataTypeInfo* info = FindDataType(tensor.type());
  if (info == nullptr || !info->is_float || tensor.is_string()) return false;
  for (std::int64_t i = 0; i < tensor.element_count(); ++i) {
    if (!std::isfinite(tensor.AsDouble(i))) return true;
  }
  return false;
}

ValueType TypeOfTensor(const Tensor& tensor) { return ValueType{static_cast<int>(tensor.type()), tensor.shape()}; }

FedValues::FedValues(Runtime* runtime, const GraphSlicer& slicer, SessionConfig reference,
                     std::span<const NamedTensor> inputs)
    : runtime_(runtime), slicer_(slicer), reference_(std::move(reference)), inputs_(inputs) {}

FedValues FedValues::Computed(Runtime& runtime, const GraphSlicer& slicer, const SessionConfig& reference,
                              std::span<const NamedTensor> inputs) {
  return FedValues(&runtime, slicer, reference, inputs);
}

FedValues FedValues::Inferred(const GraphSlicer& slicer, std::span<const NamedTensor> inputs, std::uint64_t seed) {
  FedValues values(nullptr, slicer, {}, inputs);
  values.seed_ = seed;
  onnx::ModelProto copy = slicer.model();
  FixInputShapes(copy, inputs);
  // A model that ONNX Runtime refuses often fails inference at the same node: the types inferred
  // before it are kept all the same.
  (void)RunShapeInference(copy);
  auto keep = [&](const onnx::ValueInfoProto& info) {
    if (auto type = ConcreteType(info.type())) values.inferred_.emplace(info.name(), std::move(*type));
  };
  for (const auto& info : copy.graph().value_info()) keep(info);
  for (const auto& info : copy.graph().output()) keep(info);
  return values;
}

const NamedTensor* FedValues::Input(const std::string& name) const {
  auto it = std::find_if(inputs_.begin(), inputs_.end(), [&](const NamedTensor& t) { return t.name == name; });
  return it == inputs_.end() ? nullptr : &*it;
}

std::optional<ValueType> FedValues::TypeOf(const std::string& name) const {
  if (const NamedTensor* in = Input(name)) return TypeOfTensor(in->tensor);
  if (auto it = computed_.find(name); it != computed_.end()) return TypeOfTensor(it->second);
  if (auto it = inferred_.find(name); it != inferred_.end()) return it->second;
  return std::nullopt;
}

bool FedValues::NonFinite(const std::string& name) const {
  if (const NamedTensor* in = Input(name)) return HoldsNonFinite(in->tensor);
  auto it = non_finite_.find(name);
  return it != non_finite_.end() && it->second;
}

bool FedValues::Provide(const std::vector<std::string>& names, bool split) {
  std::vector<std::string> missing;
  for (const auto& name : names) {
    if (Input(name) == nullptr && !computed_.count(name)) missing.push_back(name);
  }
  if (runtime_ == nullptr) {
    return std::all_of(missing.begin(), missing.end(), [&](const std::string& n) { return inferred_.count(n) > 0; });
  }
  if (missing.empty()) return true;
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (!failed_.count(missing) && Compute(missing)) return true;
  failed_.insert(missing);
  if (!split || missing.size() == 1) return false;
  const auto half = missing.begin() + static_cast<std::ptrdiff_t>(missing.size() / 2);
  const bool first = Provide(std::vector<std::string>(missing.begin(), half), true);
  const bool second = Provide(std::vector<std::string>(half, missing.end()), true);
  return first && second;
}

bool FedValues::Compute(const std::vector<std::string>& missing) {
  const NodeSubset ancestors = slicer_.AncestorsOf(missing);
  if (ancestors.empty()) return false;  // neither inputs nor produced: nothing computes them
  auto model = slicer_.Build(
      ancestors, [&](const std::string& name) { return TypeOf(name); }, missing);
  if (!model.ok()) return false;
  const std::string bytes = model->SerializeAsString();
  auto session = Session::CreateFromBytes(*runtime_, bytes, reference_);
  ++sessions_;
  if (!session.ok()) return false;
  auto specs = DescribeOutputs(**session);
  if (!specs.ok()) return false;
  std::unordered_set<std::string> tensors;
  for (const auto& spec : *specs) {
    if (spec.is_tensor && spec.type != DataType::kUndefined) tensors.insert(spec.name);
  }
  if (!std::all_of(missing.begin(), missing.end(), [&](const std::string& n) { return tensors.count(n) > 0; }))
    return false;
  std::vector<std::string> fed;
  for (const auto& in : model->graph().input()) fed.push_back(in.name());
  auto feeds = Feeds(fed);
  if (!feeds.ok()) return false;
  auto outputs = RunSession(**session, RunRequest{*feeds, missing});
  if (!outputs.ok()) return false;
  for (auto& out : *outputs) {
    non_finite_[out.name] = HoldsNonFinite(out.tensor);
    computed_.insert_or_assign(out.name, std::move(out.tensor));
  }
  return true;
}

Result<std::vector<NamedTensor>> FedValues::Feeds(const std::vector<std::string>& names) const {
  std::vector<NamedTensor> feeds;
  for (const auto& name : names) {
    if (const NamedTensor* in = Input(name)) {
      feeds.push_back({name, in->tensor.Clone()});
    } else if (auto it = computed_.find(name); it != computed_.end()) {
      feeds.push_back({name, it->second.Clone()});
    } else if (auto type = inferred_.find(name); type != inferred_.end()) {
      ORTKIT_ASSIGN_OR_RETURN(Tensor t, Synthesise(name, type->second, seed_));
      feeds.push_back({name, std::move(t)});
    } else {
      return MakeError(ErrorKind::kNotFound, fmt::format("no value for '{}'", name));
    }
  }
  return feeds;
}

}  // namespace ortkit
