#include "ortkit/serve/http/rest_codec.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace ortkit::serve::http {
namespace {

using nlohmann::json;

Error Invalid(std::string message) { return MakeError(ErrorKind::kInvalidArgument, std::move(message)); }

// Flattens nested "data" arrays (the protocol allows both forms) in row-major order.
void Flatten(const json& data, std::vector<const json*>* out) {
  if (data.is_array()) {
    for (const auto& e : data) Flatten(e, out);
  } else {
    out->push_back(&data);
  }
}

template <typename T>
Status FillIntegers(const std::vector<const json*>& values, Tensor* tensor, const std::string& name) {
  auto out = tensor->values<T>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const json& v = *values[i];
    if (!v.is_number_integer()) {
      return Invalid(fmt::format("input '{}': element {} is {} but datatype {} needs integers", name, i, v.dump(),
                                 FindDataType(tensor->type())->protocol));
    }
    out[i] = v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
  }
  return OkStatus();
}

Status FillFromJson(const json& data, Tensor* tensor, const std::string& name) {
  std::vector<const json*> values;
  values.reserve(static_cast<std::size_t>(tensor->element_count()));
  Flatten(data, &values);
  if (static_cast<std::int64_t>(values.size()) != tensor->element_count()) {
    return Invalid(fmt::format("input '{}': shape {} needs {} values, \"data\" holds {}", name,
                               ShapeToString(tensor->shape()), tensor->element_count(), values.size()));
  }
  switch (tensor->type()) {
    case DataType::kInt64: return FillIntegers<std::int64_t>(values, tensor, name);
    case DataType::kInt32: return FillIntegers<std::int32_t>(values, tensor, name);
    case DataType::kInt16: return FillIntegers<std::int16_t>(values, tensor, name);
    case DataType::kInt8: return FillIntegers<std::int8_t>(values, tensor, name);
    case DataType::kUInt64: return FillIntegers<std::uint64_t>(values, tensor, name);
    case DataType::kUInt32: return FillIntegers<std::uint32_t>(values, tensor, name);
    case DataType::kUInt16: return FillIntegers<std::uint16_t>(values, tensor, name);
    case DataType::kUInt8: return FillIntegers<std::uint8_t>(values, tensor, name);
    default: break;
  }
  const bool is_bool = tensor->type() == DataType::kBool;
  if (tensor->type() == DataType::kFloat32) {
    auto out = tensor->values<float>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!values[i]->is_number()) {
        return Invalid(
            fmt::format("input '{}': element {} is {} but datatype FP32 needs numbers", name, i, values[i]->dump()));
      }
      out[i] = values[i]->get<float>();
    }
    return OkStatus();
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const json& v = *values[i];
    if (is_bool ? !v.is_boolean() : !v.is_number()) {
      return Invalid(fmt::format("input '{}': element {} is {} but datatype {} needs {}", name, i, v.dump(),
                                 FindDataType(tensor->type())->protocol, is_bool ? "true or false" : "numbers"));
    }
    tensor->SetFromDouble(static_cast<std::int64_t>(i), is_bool ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>());
  }
  return OkStatus();
}

template <typename T>
json ArrayOf(const Tensor& t) {
  auto values = t.values<T>();
  return json(std::vector<T>(values.begin(), values.end()));
}

json DataToJson(const Tensor& t) {
  switch (t.type()) {
    case DataType::kFloat32: return ArrayOf<float>(t);
    case DataType::kFloat64: return ArrayOf<double>(t);
    case DataType::kInt64: return ArrayOf<std::int64_t>(t);
    case DataType::kInt32: return ArrayOf<std::int32_t>(t);
    case DataType::kInt16: return ArrayOf<std::int16_t>(t);
    case DataType::kInt8: return ArrayOf<std::int8_t>(t);
    case DataType::kUInt64: return ArrayOf<std::uint64_t>(t);
    case DataType::kUInt32: return ArrayOf<std::uint32_t>(t);
    case DataType::kUInt16: return ArrayOf<std::uint16_t>(t);
    case DataType::kUInt8: return ArrayOf<std::uint8_t>(t);
    case DataType::kBool: {
      json array = json::array();
      for (std::int64_t i = 0; i < t.element_count(); ++i) array.push_back(t.AsDouble(i) != 0);
      return array;
    }
    default: {
      json array = json::array();
      for (std::int64_t i = 0; i < t.element_count(); ++i) array.push_back(t.AsDouble(i));
      return array;
    }
  }
}

std::string ProtocolName(DataType type) {
  const DataTypeInfo* info = FindDataType(type);
  return info ? std::string(info->protocol) : "";
}

// JSON string literal of `text` (valid UTF-8 by construction: names from the model, the id from
// the parsed request).
void AppendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      out->append(fmt::format("\\u{:04x}", c));
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

// Every output binary (what clients of the binary extension ask for): the JSON header written
// directly, without building a JSON tree per request; the same keys as the general path.
EncodedResponse EncodeBinaryResponse(const InferResponse& response) {
  EncodedResponse encoded;
  std::string& body = encoded.body;
  std::size_t data_bytes = 0;
  for (const auto& out : response.outputs) data_bytes += out.tensor.byte_size();
  body.reserve(160 + 120 * response.outputs.size() + data_bytes);
  body.append("{");
  if (!response.id.empty()) {
    body.append("\"id\":");
    AppendJsonString(&body, response.id);
    body.append(",");
  }
  body.append("\"model_name\":");
  AppendJsonString(&body, response.model_name);
  body.append(",\"model_version\":");
  AppendJsonString(&body, response.model_version);
  body.append(",\"outputs\":[");
  for (std::size_t i = 0; i < response.outputs.size(); ++i) {
    const auto& out = response.outputs[i];
    body.append(i == 0 ? "{\"datatype\":" : ",{\"datatype\":");
    AppendJsonString(&body, ProtocolName(out.tensor.type()));
    body.append(",\"name\":");
    AppendJsonString(&body, out.name);
    body.append(fmt::format(",\"parameters\":{{\"binary_data_size\":{}}},\"shape\":[{}]}}", out.tensor.byte_size(),
                            fmt::join(out.tensor.shape(), ",")));
  }
  body.append("]}");
  encoded.header_length = body.size();
  for (const auto& out : response.outputs)
    body.append(reinterpret_cast<const char*>(out.tensor.data()), out.tensor.byte_size());
  return encoded;
}

}  // namespace

Result<InferRequest> DecodeInferRequest(std::string_view body, std::optional<std::size_t> header_length,
                                        OutputEncoding* encoding) {
  const std::size_t json_size = header_length.value_or(body.size());
  if (json_size > body.size()) {
    return Invalid(
        fmt::format("Inference-Header-Content-Length is {} but the body holds only {} bytes", json_size, body.size()));
  }
  json root;
  try {
    root = json::parse(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(json_size));
  } catch (const json::parse_error& e) {
    return Invalid(fmt::format("the request is not valid JSON: {}", e.what()));
  }
  if (!root.is_object()) return Invalid("the request must be a JSON object");
  InferRequest request;
  try {
    if (root.contains("id")) {
      if (!root["id"].is_string()) return Invalid("\"id\" must be a string");
      request.id = root["id"].get<std::string>();
    }
    if (root.contains("parameters")) {
      const json& params = root["parameters"];
      if (!params.is_object()) return Invalid("\"parameters\" must be an object");
      if (params.contains("binary_data_output")) encoding->all_binary = params["binary_data_output"].get<bool>();
      if (params.contains("priority")) request.priority = params["priority"].get<int>();
      if (params.contains("timeout")) request.timeout_us = params["timeout"].get<std::int64_t>();
    }
    auto inputs = root.find("inputs");
    if (inputs == root.end() || !inputs->is_array()) return Invalid("the request needs an \"inputs\" list");
    std::size_t binary_offset = json_size;
    for (const json& in : *inputs) {
      if (!in.is_object()) return Invalid("each entry of \"inputs\" must be an object");
      if (!in.contains("name") || !in["name"].is_string()) return Invalid("an input has no \"name\"");
      const std::string name = in["name"].get<std::string>();
      if (!in.contains("datatype") || !in["datatype"].is_string())
        return Invalid(fmt::format("input '{}' has no \"datatype\"", name));
      const std::string datatype = in["datatype"].get<std::string>();
      const DataTypeInfo* info = FindDataTypeByProtocol(datatype);
      if (info == nullptr || info->type == DataType::kString) {
        return Invalid(
            fmt::format("input '{}': datatype \"{}\" is not supported (use BOOL, UINT8..UINT64, INT8..INT64, "
                        "FP16, BF16, FP32 or FP64)",
                        name, datatype));
      }
      if (!in.contains("shape") || !in["shape"].is_array())
        return Invalid(fmt::format("input '{}' has no \"shape\" list", name));
      std::vector<std::int64_t> shape;
      for (const json& d : in["shape"]) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0) {
          return Invalid(fmt::format("input '{}': shape {} must hold non-negative integers", name, in["shape"].dump()));
        }
        shape.push_back(d.get<std::int64_t>());
      }
      auto tensor = Tensor::Allocate(info->type, shape);
      if (!tensor.ok()) return Invalid(fmt::format("input '{}': {}", name, tensor.error().message));
      std::optional<std::size_t> binary_size;
      if (in.contains("parameters") && in["parameters"].contains("binary_data_size")) {
        binary_size = in["parameters"]["binary_data_size"].get<std::size_t>();
      }
      if (binary_size) {
        if (*binary_size != tensor->byte_size()) {
          return Invalid(fmt::format("input '{}': binary_data_size is {} but {} {} needs {} bytes", name, *binary_size,
                                     datatype, ShapeToString(shape), tensor->byte_size()));
        }
        if (binary_offset + *binary_size > body.size()) {
          return Invalid(
              fmt::format("input '{}': binary_data_size {} runs past the end of the body ({} bytes after the JSON "
                          "header, {} already used)",
                          name, *binary_size, body.size() - json_size, binary_offset - json_size));
        }
        if (*binary_size > 0) std::memcpy(tensor->data(), body.data() + binary_offset, *binary_size);
        binary_offset += *binary_size;
      } else {
        if (!in.contains("data"))
          return Invalid(fmt::format("input '{}' has neither \"data\" nor binary_data_size", name));
        ORTKIT_RETURN_IF_ERROR(FillFromJson(in["data"], &tensor.value(), name));
      }
      request.inputs.push_back({name, std::move(tensor).value()});
    }
    if (binary_offset != body.size()) {
      return Invalid(fmt::format("the body holds {} bytes of binary data but the inputs' binary_data_size add up to {}",
                                 body.size() - json_size, binary_offset - json_size));
    }
    if (root.contains("outputs")) {
      if (!root["outputs"].is_array()) return Invalid("\"outputs\" must be a list");
      for (const json& out : root["outputs"]) {
        if (!out.is_object() || !out.contains("name") || !out["name"].is_string()) {
          return Invalid("each entry of \"outputs\" needs a \"name\"");
        }
        const std::string name = out["name"].get<std::string>();
        request.outputs.push_back(name);
        if (out.contains("parameters") && out["parameters"].contains("binary_data") &&
            out["parameters"]["binary_data"].get<bool>()) {
          encoding->binary_outputs.push_back(name);
        }
      }
    }
  } catch (const json::exception& e) {
    // A parameter of the wrong JSON type (get<bool>() on a string, ...).
    return Invalid(fmt::format("malformed request: {}", e.what()));
  }
  return request;
}

EncodedResponse EncodeInferResponse(const InferResponse& response, const OutputEncoding& encoding) {
  const auto binary_wanted = [&](const std::string& name) {
    return encoding.all_binary || std::find(encoding.binary_outputs.begin(), encoding.binary_outputs.end(), name) !=
                                      encoding.binary_outputs.end();
  };
  if (std::all_of(response.outputs.begin(), response.outputs.end(),
                  [&](const auto& o) { return binary_wanted(o.name); }) &&
      !response.outputs.empty()) {
    return EncodeBinaryResponse(response);
  }
  json root = {{"model_name", response.model_name}, {"model_version", response.model_version}};
  if (!response.id.empty()) root["id"] = response.id;
  json outputs = json::array();
  std::vector<const Tensor*> binary;
  for (const auto& out : response.outputs) {
    json o = {{"name", out.name}, {"datatype", ProtocolName(out.tensor.type())}, {"shape", out.tensor.shape()}};
    const bool as_binary =
        encoding.all_binary || std::find(encoding.binary_outputs.begin(), encoding.binary_outputs.end(), out.name) !=
                                   encoding.binary_outputs.end();
    if (as_binary) {
      o["parameters"] = {{"binary_data_size", out.tensor.byte_size()}};
      binary.push_back(&out.tensor);
    } else {
      o["data"] = DataToJson(out.tensor);
    }
    outputs.push_back(std::move(o));
  }
  root["outputs"] = std::move(outputs);
  EncodedResponse encoded;
  encoded.body = root.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!binary.empty()) {
    encoded.header_length = encoded.body.size();
    std::size_t total = encoded.body.size();
    for (const Tensor* t : binary) total += t->byte_size();
    encoded.body.reserve(total);
    for (const Tensor* t : binary) encoded.body.append(reinterpret_cast<const char*>(t->data()), t->byte_size());
  }
  return encoded;
}

nlohmann::json ModelMetadataToJson(const ModelMetadata& metadata) {
  auto tensors = [](const std::vector<TensorMetadata>& list) {
    json array = json::array();
    for (const auto& t : list)
      array.push_back({{"name", t.name}, {"datatype", ProtocolName(t.type)}, {"shape", t.shape}});
    return array;
  };
  return json{{"name", metadata.name},
              {"versions", metadata.versions},
              {"platform", metadata.platform},
              {"inputs", tensors(metadata.inputs)},
              {"outputs", tensors(metadata.outputs)}};
}

}  // namespace ortkit::serve::http
