#include "ortkit/runtime/run.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "ortkit/runtime/ort_handles.h"

namespace ortkit {
namespace {

// Some converters (paddle2onnx, old tf2onnx) write "?" or "-1" as a dimension's name where they
// mean "no name": each such dimension is its own unnamed axis, not one axis shared by all of them.
bool IsPlaceholderName(std::string_view name) { return name == "?" || name == "-1" || name == "None"; }

Result<TensorSpec> SpecFromTypeInfo(std::string name, const Ort::TypeInfo& info) {
  TensorSpec spec;
  spec.name = std::move(name);
  if (info.GetONNXType() != ONNX_TYPE_TENSOR) {
    spec.is_tensor = false;
    return spec;
  }
  auto tensor = info.GetTensorTypeAndShapeInfo();
  spec.type = static_cast<DataType>(tensor.GetElementType());
  const std::vector<std::int64_t> shape = tensor.GetShape();
  std::vector<const char*> symbols(shape.size(), nullptr);
  tensor.GetSymbolicDimensions(symbols.data(), symbols.size());
  for (std::size_t i = 0; i < shape.size(); ++i) {
    DimSpec dim;
    if (shape[i] >= 0)
      dim.value = shape[i];
    else if (symbols[i] != nullptr && !IsPlaceholderName(symbols[i]))
      dim.symbol = symbols[i];
    spec.dims.push_back(std::move(dim));
  }
  return spec;
}

template <typename GetName, typename GetInfo>
Result<std::vector<TensorSpec>> Describe(std::size_t count, GetName get_name, GetInfo get_info) {
  try {
    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<TensorSpec> specs;
    for (std::size_t i = 0; i < count; ++i) {
      auto name = get_name(i, allocator);
      ORTKIT_ASSIGN_OR_RETURN(TensorSpec spec, SpecFromTypeInfo(name.get(), get_info(i)));
      specs.push_back(std::move(spec));
    }
    return specs;
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kRuntime, std::string("describing the session: ") + e.what());
  }
}

Result<Tensor> FromOrtValue(const Ort::Value& value, const std::string& name) {
  if (!value.IsTensor()) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("output '{}' is not a tensor (sequence, map or optional outputs are not supported)", name));
  }
  auto info = value.GetTensorTypeAndShapeInfo();
  const auto type = static_cast<DataType>(info.GetElementType());
  ORTKIT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(type, info.GetShape()));
  if (type == DataType::kString) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(tensor.element_count()); ++i) {
      tensor.strings()[i] = value.GetStringTensorElement(i);
    }
  } else if (tensor.byte_size() > 0) {
    std::memcpy(tensor.data(), value.GetTensorRawData(), tensor.byte_size());
  }
  return tensor;
}

}  // namespace

Ort::Value ToOrtValue(const Tensor& tensor, const Ort::MemoryInfo& memory,
                      Ort::AllocatorWithDefaultOptions& allocator) {
  const auto& shape = tensor.shape();
  if (tensor.is_string()) {
    Ort::Value value =
        Ort::Value::CreateTensor(allocator, shape.data(), shape.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING);
    std::vector<const char*> pointers;
    pointers.reserve(tensor.strings().size());
    for (const auto& s : tensor.strings()) pointers.push_back(s.c_str());
    value.FillStringTensor(pointers.data(), pointers.size());
    return value;
  }
  // The runtime reads the tensor's own buffer: no copy. It must outlive the Run call.
  return Ort::Value::CreateTensor(memory, const_cast<std::byte*>(tensor.data()), tensor.byte_size(), shape.data(),
                                  shape.size(), static_cast<ONNXTensorElementDataType>(tensor.type()));
}

Result<std::vector<TensorSpec>> DescribeInputs(Session& session) {
  auto& s = OrtSession(session);
  return Describe(
      s.GetInputCount(), [&](std::size_t i, auto& a) { return s.GetInputNameAllocated(i, a); },
      [&](std::size_t i) { return s.GetInputTypeInfo(i); });
}

Result<std::vector<TensorSpec>> DescribeOutputs(Session& session) {
  auto& s = OrtSession(session);
  return Describe(
      s.GetOutputCount(), [&](std::size_t i, auto& a) { return s.GetOutputNameAllocated(i, a); },
      [&](std::size_t i) { return s.GetOutputTypeInfo(i); });
}

Status CheckInputs(std::span<const NamedTensor> inputs, const std::vector<TensorSpec>& specs) {
  for (const auto& in : inputs) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == in.name; });
    if (spec == specs.end()) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("the model has no input named '{}'; its inputs are: {}",
                                                                in.name, fmt::join(names, ", ")));
    }
    ORTKIT_RETURN_IF_ERROR(
        CheckAgainstSpec(fmt::format("input '{}'", in.name), in.tensor.type(), in.tensor.shape(), *spec));
  }
  for (const auto& spec : specs) {
    if (std::none_of(inputs.begin(), inputs.end(), [&](const NamedTensor& t) { return t.name == spec.name; })) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("input '{}' ({}) is missing", spec.name, spec.Describe()));
    }
  }
  return OkStatus();
}

namespace {

TensorSpec SpecFromValueInfo(const onnx::ValueInfoProto& value) {
  TensorSpec spec;
  spec.name = value.name();
  spec.is_tensor = value.type().has_tensor_type();
  if (spec.is_tensor) {
    spec.type = static_cast<DataType>(value.type().tensor_type().elem_type());
    for (const auto& dim : value.type().tensor_type().shape().dim()) {
      DimSpec d;
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        d.value = dim.dim_value();
      } else if (dim.has_dim_param() && !IsPlaceholderName(dim.dim_param())) {
        d.symbol = dim.dim_param();
      }
      spec.dims.push_back(std::move(d));
    }
  }
  return spec;
}

}  // namespace

std::vector<TensorSpec> DeclaredInputs(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<TensorSpec> specs;
  for (const auto& in : model.graph().input()) {
    if (!initializers.count(in.name())) specs.push_back(SpecFromValueInfo(in));
  }
  return specs;
}

std::vector<TensorSpec> DeclaredOutputs(const onnx::ModelProto& model) {
  std::vector<TensorSpec> specs;
  for (const auto& out : model.graph().output()) specs.push_back(SpecFromValueInfo(out));
  return specs;
}

std::vector<std::string> OutputShapeMismatches(const std::vector<TensorSpec>& declared,
                                               std::span<const NamedTensor> outputs) {
  std::vector<std::string> mismatches;
  for (const auto& out : outputs) {
    auto spec = std::find_if(declared.begin(), declared.end(), [&](const TensorSpec& s) { return s.name == out.name; });
    if (spec == declared.end() || !spec->is_tensor || spec->dims.empty()) continue;  // rank 0 may mean unknown
    const auto& shape = out.tensor.shape();
    bool differs = shape.size() != spec->dims.size();
    for (std::size_t d = 0; !differs && d < shape.size(); ++d) {
      differs = spec->dims[d].fixed() && spec->dims[d].value != shape[d];
    }
    if (!differs) continue;
    std::vector<std::string> dims;
    for (const auto& dim : spec->dims) dims.push_back(dim.ToString());
    mismatches.push_back(fmt::format("output '{}' is {} but the model declares [{}]", out.name, ShapeToString(shape),
                                     fmt::join(dims, ", ")));
  }
  return mismatches;
}

Result<std::vector<NamedTensor>> RunSession(Session& session, const RunRequest& request) {
  ORTKIT_ASSIGN_OR_RETURN(auto input_specs, DescribeInputs(session));
  ORTKIT_RETURN_IF_ERROR(CheckInputs(request.inputs, input_specs));
  std::vector<std::string> output_names = request.output_names;
  // Outputs fetched only so that the model runs, not returned: sequences, maps and optionals.
  std::size_t returned = 0;
  if (output_names.empty()) {
    // Every tensor output: a sequence or map output (skl2onnx's ZipMap probabilities) is left in the
    // runtime, where it is computed all the same. A model without tensor outputs (SplitToSequence, a
    // ZipMap alone) still runs: ONNX Runtime needs an output to fetch, so its outputs are fetched and
    // dropped, and the result is empty.
    ORTKIT_ASSIGN_OR_RETURN(auto output_specs, DescribeOutputs(session));
    for (const auto& s : output_specs) {
      if (s.is_tensor) output_names.push_back(s.name);
    }
    returned = output_names.size();
    if (output_names.empty()) {
      for (auto& s : output_specs) output_names.push_back(std::move(s.name));
    }
  } else {
    returned = output_names.size();
  }
  try {
    Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<Ort::Value> values;
    std::vector<const char*> input_names;
    for (const auto& in : request.inputs) {
      values.push_back(ToOrtValue(in.tensor, memory, allocator));
      input_names.push_back(in.name.c_str());
    }
    std::vector<const char*> output_pointers;
    for (const auto& n : output_names) output_pointers.push_back(n.c_str());
    auto outputs = OrtSession(session).Run(Ort::RunOptions{nullptr}, input_names.data(), values.data(), values.size(),
                                           output_pointers.data(), output_pointers.size());
    std::vector<NamedTensor> result;
    for (std::size_t i = 0; i < outputs.size() && i < returned; ++i) {
      ORTKIT_ASSIGN_OR_RETURN(Tensor t, FromOrtValue(outputs[i], output_names[i]));
      result.push_back({output_names[i], std::move(t)});
    }
    return result;
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kRuntime, e.what());
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime, e.what());
  }
}

}  // namespace ortkit
