#include "ortkit/perf/v2_protocol.h"
#include "ortkit/core/text.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit::perf {
namespace {

using nlohmann::json;

Result<std::vector<TensorSpec>> ParseTensorList(const json& list, const std::string& field) {
  std::vector<TensorSpec> specs;
  if (!list.is_array())
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("model metadata: '{}' is not a list", field));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& item = list[i];
    const std::string where = fmt::format("model metadata: {}[{}]", field, i);
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
      return MakeError(ErrorKind::kInvalidArgument, where + " has no string 'name'");
    }
    TensorSpec spec;
    spec.name = item["name"].get<std::string>();
    const std::string datatype = item.value("datatype", "");
    const DataTypeInfo* info = FindDataTypeByProtocol(datatype);
    if (info == nullptr) {
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("{} ('{}'): datatype '{}' is not a protocol datatype perf can send", where, spec.name, datatype));
    }
    spec.type = info->type;
    if (!item.contains("shape") || !item["shape"].is_array()) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("{} ('{}') has no 'shape' list", where, spec.name));
    }
    for (std::size_t axis = 0; axis < item["shape"].size(); ++axis) {
      const json& d = item["shape"][axis];
      if (!d.is_number_integer())
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("{} ('{}'): shape holds a non-integer", where, spec.name));
      DimSpec dim;
      dim.value = d.get<std::int64_t>();
      if (dim.value < 0) {
        dim.value = -1;
        dim.symbol = PositionalDimName(axis);
      }
      spec.dims.push_back(dim);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

json JsonData(const Tensor& t) {
  json data = json::array();
  const DataTypeInfo* info = FindDataType(t.type());
  for (std::int64_t i = 0; i < t.element_count(); ++i) {
    const double v = t.AsDouble(i);
    if (t.type() == DataType::kBool)
      data.push_back(v != 0);
    else if (info->is_float)
      data.push_back(v);
    else if (info->is_signed)
      data.push_back(static_cast<std::int64_t>(v));
    else
      data.push_back(static_cast<std::uint64_t>(v));
  }
  return data;
}

Result<const DataTypeInfo*> ProtocolType(const NamedTensor& input) {
  const DataTypeInfo* info = FindDataType(input.tensor.type());
  if (info == nullptr || info->protocol.empty() || input.tensor.is_string()) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("input '{}': {} tensors cannot be sent by perf",
                                                              input.name, DataTypeName(input.tensor.type())));
  }
  return info;
}

json TensorHeader(const NamedTensor& input, const DataTypeInfo& info) {
  return json{{"name", input.name}, {"shape", input.tensor.shape()}, {"datatype", std::string(info.protocol)}};
}

std::int64_t RowsOf(const std::vector<NamedTensor>& inputs) {
  if (inputs.empty() || inputs.front().tensor.shape().empty()) return 1;
  return inputs.front().tensor.shape().front();
}

}  // namespace

std::string PositionalDimName(std::size_t axis) {
  if (axis == 0) return "batch";
  if (axis == 1) return "seq_len";
  return fmt::format("dim{}", axis);
}

Result<RemoteModel> ParseModelMetadata(std::string_view text) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("model metadata is not a JSON object: {}", ErrorMessageOf(text)));
  }
  RemoteModel model;
  model.name = doc.value("name", "");
  if (!doc.contains("inputs")) return MakeError(ErrorKind::kInvalidArgument, "model metadata has no 'inputs'");
  ORTKIT_ASSIGN_OR_RETURN(model.inputs, ParseTensorList(doc["inputs"], "inputs"));
  if (doc.contains("outputs")) {
    ORTKIT_ASSIGN_OR_RETURN(model.outputs, ParseTensorList(doc["outputs"], "outputs"));
  }
  return model;
}

std::map<std::string, ValueHint> HintsFromNames(const std::vector<TensorSpec>& inputs) {
  std::map<std::string, ValueHint> hints;
  for (const auto& spec : inputs) {
    if (NameHas(spec.name, {"mask"})) {
      hints[spec.name] = ValueHint{ValueHint::Kind::kOnes, 0, 0, "a mask: all ones"};
    } else if (NameHas(spec.name, {"token_type", "segment"})) {
      hints[spec.name] = ValueHint{ValueHint::Kind::kChoice, 0, 0, "token types: all zero"};
    }
  }
  return hints;
}

Result<EncodedRequest> EncodeJsonRequest(const std::vector<NamedTensor>& inputs,
                                         const std::vector<std::string>& outputs) {
  json doc{{"inputs", json::array()}};
  for (const auto& input : inputs) {
    ORTKIT_ASSIGN_OR_RETURN(const DataTypeInfo* info, ProtocolType(input));
    json item = TensorHeader(input, *info);
    item["data"] = JsonData(input.tensor);
    doc["inputs"].push_back(std::move(item));
  }
  if (!outputs.empty()) {
    doc["outputs"] = json::array();
    for (const auto& name : outputs) doc["outputs"].push_back(json{{"name", name}});
  }
  return EncodedRequest{doc.dump(), 0, RowsOf(inputs)};
}

Result<EncodedRequest> EncodeBinaryRequest(const std::vector<NamedTensor>& inputs,
                                           const std::vector<std::string>& outputs) {
  json doc{{"inputs", json::array()}};
  std::size_t data_size = 0;
  for (const auto& input : inputs) {
    ORTKIT_ASSIGN_OR_RETURN(const DataTypeInfo* info, ProtocolType(input));
    json item = TensorHeader(input, *info);
    item["parameters"] = json{{"binary_data_size", input.tensor.byte_size()}};
    doc["inputs"].push_back(std::move(item));
    data_size += input.tensor.byte_size();
  }
  doc["outputs"] = json::array();
  for (const auto& name : outputs)
    doc["outputs"].push_back(json{{"name", name}, {"parameters", {{"binary_data", true}}}});
  EncodedRequest request;
  request.body = doc.dump();
  request.header_length = request.body.size();
  request.rows = RowsOf(inputs);
  request.body.reserve(request.header_length + data_size);
  for (const auto& input : inputs) {
    request.body.append(reinterpret_cast<const char*>(input.tensor.data()), input.tensor.byte_size());
  }
  return request;
}

std::string ErrorMessageOf(std::string_view body) {
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
    return doc["error"].get<std::string>();
  }
  std::string cut(body.substr(0, 200));
  if (body.size() > 200) cut += "...";
  return cut;
}

}  // namespace ortkit::perf
