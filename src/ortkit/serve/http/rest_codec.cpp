#include "ortkit/serve/http/rest_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace ortkit::serve::http {
namespace {

using nlohmann::json;

// One JSON number: the shortest text that reads back as the same value; non-finite floating-point
// values have no JSON number and are written null; floating-point values always carry a fraction or an
// exponent ("2.0", "-0.0"), as JSON libraries write them. A float is written as the double it equals:
// clients (and this decoder) read JSON numbers as doubles and then round to float, and the float's
// own shortest text can land one ulp off after that second rounding.
template <typename T>
void AppendNumber(std::string* out, T value) {
  char text[32];
  char* end = text;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) {
      out->append("null");
      return;
    }
    end = std::to_chars(text, text + sizeof(text), static_cast<double>(value)).ptr;
    // "-0" would read back as the integer 0: keep a fraction so that readers see a float.
    if (std::find_if(text, end, [](char c) { return c == '.' || c == 'e'; }) == end) {
      *end++ = '.';
      *end++ = '0';
    }
  } else {
    end = std::to_chars(text, text + sizeof(text), value).ptr;
  }
  out->append(text, end);
}

template <typename T>
void AppendValues(std::string* out, const Tensor& t) {
  for (const T value : t.values<T>()) {
    AppendNumber(out, value);
    out->push_back(',');
  }
}

// The tensor's values as a flat JSON array, written directly: a JSON tree of one node per value cost
// 88 us per bert-tiny answer (1,152 floats).
void AppendData(std::string* out, const Tensor& t) {
  out->push_back('[');
  switch (t.type()) {
    case DataType::kFloat32: AppendValues<float>(out, t); break;
    case DataType::kFloat64: AppendValues<double>(out, t); break;
    case DataType::kInt64: AppendValues<std::int64_t>(out, t); break;
    case DataType::kInt32: AppendValues<std::int32_t>(out, t); break;
    case DataType::kInt16: AppendValues<std::int16_t>(out, t); break;
    case DataType::kInt8: AppendValues<std::int8_t>(out, t); break;
    case DataType::kUInt64: AppendValues<std::uint64_t>(out, t); break;
    case DataType::kUInt32: AppendValues<std::uint32_t>(out, t); break;
    case DataType::kUInt16: AppendValues<std::uint16_t>(out, t); break;
    case DataType::kUInt8: AppendValues<std::uint8_t>(out, t); break;
    case DataType::kBool:
      for (std::int64_t i = 0; i < t.element_count(); ++i) out->append(t.AsDouble(i) != 0 ? "true," : "false,");
      break;
    default:  // FP16, BF16: their exact value as a double
      for (std::int64_t i = 0; i < t.element_count(); ++i) {
        AppendNumber(out, t.AsDouble(i));
        out->push_back(',');
      }
  }
  if (out->back() == ',') out->pop_back();
  out->push_back(']');
}

std::string ProtocolName(DataType type) {
  const DataTypeInfo* info = FindDataType(type);
  return info ? std::string(info->protocol) : "";
}

bool AsBinary(const OutputEncoding& encoding, std::string_view name) {
  return encoding.all_binary || std::find(encoding.binary_outputs.begin(), encoding.binary_outputs.end(), name) !=
                                    encoding.binary_outputs.end();
}

// The longest text AppendData writes for one value of `type`, with its comma.
std::uint64_t JsonValueWidth(DataType type) {
  switch (type) {
    case DataType::kBool: return 6;  // "false,"
    case DataType::kUInt8: return 4;
    case DataType::kInt8: return 5;
    case DataType::kUInt16: return 6;
    case DataType::kInt16: return 7;
    case DataType::kUInt32: return 11;
    case DataType::kInt32: return 12;
    case DataType::kUInt64:
    case DataType::kInt64: return 21;
    default: return 25;  // floating point, as a double: "-2.2250738585072014e-308,"
  }
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

}  // namespace

std::string EncodedResponse::Joined() const {
  std::string body = json;
  for (std::string_view part : binary) body.append(part);
  return body;
}

std::uint64_t EncodedOutputBound(const OutputEncoding& encoding, std::string_view name, DataType type,
                                 std::span<const std::int64_t> shape) {
  const auto saturating_mul = [](std::uint64_t a, std::uint64_t b) {
    return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
  };
  std::uint64_t values = 1;
  for (std::int64_t d : shape) values = saturating_mul(values, d > 0 ? static_cast<std::uint64_t>(d) : 0);
  // "datatype", "name" (escaped: at most 6 bytes a byte), "shape" (at most 21 bytes a dimension),
  // "parameters" and the punctuation.
  const std::uint64_t entry = 128 + 6 * std::uint64_t{name.size()} + 21 * std::uint64_t{shape.size()};
  const DataTypeInfo* info = FindDataType(type);
  const std::uint64_t per_value = AsBinary(encoding, name) ? (info != nullptr ? info->size : 8) : JsonValueWidth(type);
  const std::uint64_t data = saturating_mul(values, per_value);
  return data > UINT64_MAX - entry ? UINT64_MAX : entry + data;
}

EncodedResponse EncodeInferResponse(const InferResponse& response, const OutputEncoding& encoding) {
  const auto as_binary = [&](const std::string& name) { return AsBinary(encoding, name); };
  // Written directly, without a JSON tree per request; keys in the order a JSON library sorts them.
  EncodedResponse encoded;
  std::string& body = encoded.json;
  std::uint64_t size = 160 + response.id.size() * 6 + response.model_name.size() * 6;
  for (const auto& out : response.outputs) {
    const std::uint64_t bound = EncodedOutputBound(encoding, out.name, out.tensor.type(), out.tensor.shape());
    size = bound > UINT64_MAX - size ? UINT64_MAX : size + bound;
  }
  body.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(size, body.max_size())));
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
  std::vector<const Tensor*> binary;
  for (std::size_t i = 0; i < response.outputs.size(); ++i) {
    const auto& out = response.outputs[i];
    body.append(i == 0 ? "{" : ",{");
    const bool binary_data = as_binary(out.name);
    if (!binary_data) {
      body.append("\"data\":");
      AppendData(&body, out.tensor);
      body.append(",");
    }
    body.append("\"datatype\":");
    AppendJsonString(&body, ProtocolName(out.tensor.type()));
    body.append(",\"name\":");
    AppendJsonString(&body, out.name);
    if (binary_data) {
      body.append(fmt::format(",\"parameters\":{{\"binary_data_size\":{}}}", out.tensor.byte_size()));
      binary.push_back(&out.tensor);
    }
    body.append(fmt::format(",\"shape\":[{}]}}", fmt::join(out.tensor.shape(), ",")));
  }
  body.append("]}");
  if (!binary.empty()) {
    encoded.header_length = body.size();
    for (const Tensor* t : binary)
      encoded.binary.emplace_back(reinterpret_cast<const char*>(t->data()), t->byte_size());
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
