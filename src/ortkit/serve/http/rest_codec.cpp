#include "ortkit/serve/http/rest_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <set>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <nlohmann/json.hpp>

#include "ortkit/serve/request_values.h"

namespace ortkit::serve::http {
namespace {

using nlohmann::json;

Error Invalid(std::string message) { return MakeError(ErrorKind::kInvalidArgument, std::move(message)); }

// The request is parsed with RapidJSON into an arena-allocated tree, several times faster than a
// general JSON library on the per-request path. A request is parsed recursively (its depth bounded
// by the handler) from a NUL-terminated copy; one that nests deeper, holds a NUL or a byte-order
// mark, or does not parse is parsed again iteratively (no recursion at any depth) from its bounded
// bytes, and that parse's tree or error stands. bench/rest_codec_bench: a bert-tiny request with
// binary tensors decodes in 1.3 us the fast way, 1.6 us the careful way.
using JsonValue = rapidjson::Value;

constexpr int kMaxRecursion = 128;  // the fast parse's depth; a real request nests a handful deep

constexpr int kMaxDataDepth = 32;  // "data" nests once per dimension at most

// Builds `Document` as Document::Parse would, except that every non-integer number is read
// again with std::from_chars from the request's bytes. RapidJSON's own reading is inexact by
// default (about one 17-digit double in five comes out an ulp or more off: FP64 data) and, in
// full precision, returns garbage for a zero with an exponent ("0e-30": Debian's 1.1.0
// normalises a zero significand); handing all numbers over as text doubles the parse's cost.
// Integers are exact already. The reader calls Double() once the number's last character is
// consumed, so its text ends at the stream's position; a re-read that disagrees by more than
// rounding keeps RapidJSON's value.
template <typename Document, typename Stream>
class ExactDoubleHandler {
 public:
  /// `max_depth` > 0 stops the parse (false from a handler) at a list or object nested deeper.
  ExactDoubleHandler(Document* document, const char* begin, const Stream* stream, int max_depth)
      : document_(document), begin_(begin), stream_(stream), max_depth_(max_depth) {}

  bool Double(double d) {
    const auto in_number = [](char c) {
      return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    };
    const char* start = begin_ + stream_->Tell();
    const char* end = start;
    if constexpr (rapidjson::StreamTraits<Stream>::copyOptimization) {
      // The reader reads a number from a copy of such a stream and moves this one past it only
      // after this call: it still points at the number's first character (the text ends in NUL).
      while (in_number(*end)) ++end;
    } else {
      while (start > begin_ && in_number(start[-1])) --start;
    }
    const bool exponent = std::find_if(start, end, [](char c) { return c == 'e' || c == 'E'; }) != end;
    if (!std::isfinite(d)) {  // RapidJSON reads 1.5e309 as infinity, which JSON cannot carry
      refused_number_.assign(start, end);
      return false;
    }
    // Without an exponent, 15 characters hold at most 15 digits: RapidJSON reads those exactly
    // (one correctly rounded division).
    if (end - start > 15 || exponent) {
      double exact = 0;
      const auto [ptr, ec] = std::from_chars(start, end, exact);
      if (ec == std::errc() && ptr == end && std::abs(exact - d) <= std::abs(d) * 1e-14) d = exact;
    }
    return document_->Double(d);
  }
  /// The number that stopped the parse (beyond a double's range); empty if none did.
  const std::string& refused_number() const { return refused_number_; }

  bool Null() { return document_->Null(); }
  bool Bool(bool b) { return document_->Bool(b); }
  bool Int(int i) { return document_->Int(i); }
  bool Uint(unsigned u) { return document_->Uint(u); }
  bool Int64(std::int64_t i) { return document_->Int64(i); }
  bool Uint64(std::uint64_t u) { return document_->Uint64(u); }
  bool RawNumber(const char* s, rapidjson::SizeType length, bool copy) { return document_->RawNumber(s, length, copy); }
  bool String(const char* s, rapidjson::SizeType length, bool copy) { return document_->String(s, length, copy); }
  bool StartObject() { return Deeper() && document_->StartObject(); }
  bool Key(const char* s, rapidjson::SizeType length, bool copy) { return document_->Key(s, length, copy); }
  bool EndObject(rapidjson::SizeType members) {
    --depth_;
    return document_->EndObject(members);
  }
  bool StartArray() { return Deeper() && document_->StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    --depth_;
    return document_->EndArray(elements);
  }

 private:
  bool Deeper() { return ++depth_ <= max_depth_ || max_depth_ <= 0; }

  Document* document_;
  const char* begin_;
  const Stream* stream_;
  int max_depth_;
  int depth_ = 0;
  std::string refused_number_;
};

const JsonValue* Member(const JsonValue& object, const char* key) {
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string StringOf(const JsonValue& v) { return std::string(v.GetString(), v.GetStringLength()); }

// The id and names are echoed into answers, which EncodeInferResponse writes byte for
// byte: a string that is not UTF-8 would make the whole answer invalid. Only these few strings are
// checked; RapidJSON's kParseValidateEncodingFlag checks every string at a third of a small parse.
bool IsUtf8(const JsonValue& string) {
  rapidjson::MemoryStream stream(string.GetString(), string.GetStringLength());
  unsigned codepoint = 0;
  while (stream.Tell() < string.GetStringLength()) {
    if (!rapidjson::UTF8<>::Decode(stream, &codepoint)) return false;
  }
  return true;
}

// A value for a message: scalars as JSON, containers by kind (never walked: they may nest deeply).
std::string Describe(const JsonValue& v) {
  if (v.IsArray()) return "a list";
  if (v.IsObject()) return "an object";
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  std::string text(buffer.GetString(), buffer.GetSize());
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

// Flattens nested "data" arrays (the protocol allows both forms) in row-major order.
Status Flatten(const JsonValue& data, int depth, const std::string& name, std::vector<const JsonValue*>* out) {
  if (!data.IsArray()) {
    out->push_back(&data);
    return OkStatus();
  }
  if (depth > kMaxDataDepth) {
    return Invalid(fmt::format("input '{}': \"data\" nests more than {} lists deep", name, kMaxDataDepth));
  }
  for (const JsonValue& e : data.GetArray()) ORTKIT_RETURN_IF_ERROR(Flatten(e, depth + 1, name, out));
  return OkStatus();
}

// A value that does not fit T is refused, never wrapped (UINT8 256 is not 0) nor clamped.
template <typename T>
Status FillIntegers(const std::vector<const JsonValue*>& values, Tensor* tensor, const std::string& name) {
  auto out = tensor->values<T>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const JsonValue& v = *values[i];
    if (!v.IsInt64() && !v.IsUint64()) {
      return Invalid(fmt::format("input '{}': element {} is {} but datatype {} needs integers", name, i, Describe(v),
                                 FindDataType(tensor->type())->protocol));
    }
    const bool fits = v.IsInt64() ? std::in_range<T>(v.GetInt64()) : std::in_range<T>(v.GetUint64());
    if (!fits) return ElementOutOfRange(name, i, Describe(v), tensor->type());
    out[i] = v.IsInt64() ? static_cast<T>(v.GetInt64()) : static_cast<T>(v.GetUint64());
  }
  return OkStatus();
}

// `values` holds exactly the tensor's element count.
Status FillFromJson(const std::vector<const JsonValue*>& values, Tensor* tensor, const std::string& name) {
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
  const bool is_float = tensor->type() == DataType::kFloat32;
  auto floats = is_float ? tensor->values<float>() : std::span<float>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const JsonValue& v = *values[i];
    if (is_bool ? !v.IsBool() : !v.IsNumber()) {
      return Invalid(fmt::format("input '{}': element {} is {} but datatype {} needs {}", name, i, Describe(v),
                                 FindDataType(tensor->type())->protocol, is_bool ? "true or false" : "numbers"));
    }
    const auto at = static_cast<std::int64_t>(i);
    if (is_float) {
      floats[i] = static_cast<float>(v.GetDouble());
    } else {
      tensor->SetFromDouble(at, is_bool ? (v.GetBool() ? 1.0 : 0.0) : v.GetDouble());
    }
    // JSON numbers are finite (the parser refuses 1e309), so an infinity here is a number beyond the
    // datatype's largest (FP16 70000), which would otherwise reach the model as inf.
    if (!is_bool && std::isinf(is_float ? floats[i] : tensor->AsDouble(at))) {
      return ElementOutOfRange(name, i, Describe(v), tensor->type());
    }
  }
  return OkStatus();
}

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
    case DataType::kUInt64: return 21;
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

using Document =
    rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>, rapidjson::MemoryPoolAllocator<>>;
using Reader = rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>>;

// A request's JSON tree. It lives in the buffers here (the allocators spill to the heap beyond
// them): no allocation per request for a header of a few hundred bytes. The stack buffer holds both
// parse stacks (the document's, 1 KiB to start, and the reader's) and the pool's own bookkeeping.
class RequestTree {
 public:
  RequestTree() = default;
  RequestTree(const RequestTree&) = delete;
  RequestTree& operator=(const RequestTree&) = delete;

  /// Parses `json` the fast way, and the careful way when that fails (see JsonValue); errors are
  /// kInvalidArgument and give the byte where the JSON goes wrong. The root is an object after.
  Status Parse(std::string_view json) {
    if (!json.starts_with("\xEF\xBB\xBF") && json.find('\0') == std::string_view::npos) ParseFast(json);
    if (!root_.IsObject()) ORTKIT_RETURN_IF_ERROR(ParseCarefully(json));
    if (!root_.IsObject()) return Invalid("the request must be a JSON object");
    return OkStatus();
  }

  const JsonValue& root() const { return root_; }

 private:
  // Recursive, from a NUL-terminated copy; the root stays null when the parse fails.
  void ParseFast(std::string_view json) {
    alignas(16) char small[2048];
    std::string large;
    char* text = small;
    if (json.size() >= sizeof small) {
      large.assign(json);
      text = large.data();
    } else {
      std::memcpy(small, json.data(), json.size());
      small[json.size()] = '\0';
    }
    auto fast = [&](Document& document) {
      rapidjson::StringStream stream(text);
      ExactDoubleHandler<Document, rapidjson::StringStream> handler(&document, text, &stream, kMaxRecursion);
      Reader reader(&stack_allocator_);
      return !reader.Parse<rapidjson::kParseDefaultFlags>(stream, handler).IsError();
    };
    root_.Populate(fast);
  }

  // Iterative (no recursion at any depth), from the bounded bytes: its tree or error stands.
  Status ParseCarefully(std::string_view json) {
    using Stream = rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream>;  // skips a BOM
    rapidjson::ParseResult parsed;
    std::string refused_number;
    auto careful = [&](Document& document) {
      rapidjson::MemoryStream bytes(json.data(), json.size());
      Stream stream(bytes);
      ExactDoubleHandler<Document, Stream> handler(&document, json.data(), &stream, 0);
      Reader reader(&stack_allocator_);
      parsed = reader.Parse<rapidjson::kParseIterativeFlag>(stream, handler);
      // The reader takes a NUL byte for the end of the text: bytes after one are not JSON either.
      if (!parsed.IsError() && stream.Tell() < json.size()) {
        parsed.Set(rapidjson::kParseErrorDocumentRootNotSingular, stream.Tell());
      }
      refused_number = handler.refused_number();
      return !parsed.IsError();
    };
    root_.Populate(careful);
    if (!refused_number.empty()) {
      return Invalid(fmt::format("the request is not valid JSON: number {} is beyond a double's range (at byte {})",
                                 refused_number, parsed.Offset()));
    }
    if (parsed.IsError()) {
      return Invalid(fmt::format("the request is not valid JSON: {} (at byte {})",
                                 rapidjson::GetParseError_En(parsed.Code()), parsed.Offset()));
    }
    return OkStatus();
  }

  alignas(16) char tree_buffer_[8192];
  alignas(16) char stack_buffer_[4096];
  rapidjson::MemoryPoolAllocator<> tree_allocator_{tree_buffer_, sizeof tree_buffer_};
  rapidjson::MemoryPoolAllocator<> stack_allocator_{stack_buffer_, sizeof stack_buffer_};
  Document root_{&tree_allocator_, 1024, &stack_allocator_};
};

// "id" and "parameters" of the request.
Status DecodeRequestOptions(const JsonValue& root, InferRequest* request, OutputEncoding* encoding) {
  if (const JsonValue* id = Member(root, "id")) {
    if (!id->IsString()) return Invalid("\"id\" must be a string");
    if (!IsUtf8(*id)) return Invalid("\"id\" is not valid UTF-8");
    request->id = StringOf(*id);
  }
  const JsonValue* params = Member(root, "parameters");
  if (params == nullptr) return OkStatus();
  if (!params->IsObject()) return Invalid("\"parameters\" must be an object");
  if (const JsonValue* v = Member(*params, "binary_data_output")) {
    if (!v->IsBool()) return Invalid("malformed request: parameter \"binary_data_output\" must be true or false");
    encoding->all_binary = v->GetBool();
  }
  if (const JsonValue* v = Member(*params, "priority")) {
    if (!v->IsInt64()) return ParameterNotAnInteger("priority");
    request->priority = v->GetInt64();
  }
  if (const JsonValue* v = Member(*params, "timeout")) {
    if (!v->IsInt64()) return ParameterNotAnInteger("timeout");
    request->timeout_us = v->GetInt64();
  }
  return OkStatus();
}

// What an input entry says of its tensor, checked before anything is allocated.
struct InputHeader {
  std::string name;
  std::string datatype;
  const DataTypeInfo* info = nullptr;
  std::vector<std::int64_t> shape;
  std::int64_t count = 0;  // elements
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> binary_size;  // parameters.binary_data_size
};

// The binary tensor data after the JSON header, taken in order by the inputs that have a
// binary_data_size.
struct BinaryData {
  std::string_view body;
  std::size_t json_size = 0;
  std::size_t offset = 0;  // where the next binary input starts
};

Result<InputHeader> DecodeInputHeader(const JsonValue& in) {
  if (!in.IsObject()) return Invalid("each entry of \"inputs\" must be an object");
  InputHeader header;
  const JsonValue* name_value = Member(in, "name");
  if (name_value == nullptr || !name_value->IsString()) return Invalid("an input has no \"name\"");
  if (!IsUtf8(*name_value)) return Invalid("an input's \"name\" is not valid UTF-8");
  header.name = StringOf(*name_value);
  const std::string& name = header.name;
  const JsonValue* datatype_value = Member(in, "datatype");
  if (datatype_value == nullptr || !datatype_value->IsString()) {
    return Invalid(fmt::format("input '{}' has no \"datatype\"", name));
  }
  header.datatype = StringOf(*datatype_value);
  header.info = FindDataTypeByProtocol(header.datatype);
  if (header.info == nullptr || header.info->type == DataType::kString) {
    return Invalid(
        fmt::format("input '{}': datatype \"{}\" is not supported (use BOOL, UINT8..UINT64, INT8..INT64, "
                    "FP16, BF16, FP32 or FP64)",
                    name, header.datatype));
  }
  const JsonValue* shape_value = Member(in, "shape");
  if (shape_value == nullptr || !shape_value->IsArray()) {
    return Invalid(fmt::format("input '{}' has no \"shape\" list", name));
  }
  header.shape.reserve(shape_value->Size());
  for (const JsonValue& d : shape_value->GetArray()) {
    if (!d.IsInt64() || d.GetInt64() < 0) {
      return Invalid(fmt::format("input '{}': shape must hold non-negative integers, not {}", name, Describe(d)));
    }
    header.shape.push_back(d.GetInt64());
  }
  // Sizes are checked against what the request carries before anything is allocated: a shape
  // of a billion rows is refused, not reserved.
  auto count = ElementCountOf(header.shape);
  if (!count.ok() || static_cast<std::uint64_t>(*count) > UINT64_MAX / header.info->size) {
    return Invalid(fmt::format("input '{}': shape {} is too large", name, ShapeToString(header.shape)));
  }
  header.count = *count;
  header.bytes = static_cast<std::uint64_t>(*count) * header.info->size;
  if (const JsonValue* params = Member(in, "parameters")) {
    if (!params->IsObject()) return Invalid(fmt::format("input '{}': \"parameters\" must be an object", name));
    if (const JsonValue* size = Member(*params, "binary_data_size")) {
      if (!size->IsUint64()) {
        return Invalid(
            fmt::format("input '{}': binary_data_size must be a non-negative integer, not {}", name, Describe(*size)));
      }
      header.binary_size = size->GetUint64();
    }
  }
  return header;
}

Status CheckBinarySize(const InputHeader& header, const BinaryData& binary) {
  const std::uint64_t size = *header.binary_size;
  if (size != header.bytes) {
    return Invalid(fmt::format("input '{}': binary_data_size is {} but {} {} needs {} bytes", header.name, size,
                               header.datatype, ShapeToString(header.shape), header.bytes));
  }
  if (size > binary.body.size() - binary.offset) {
    return Invalid(
        fmt::format("input '{}': binary_data_size {} runs past the end of the body ({} bytes after the JSON "
                    "header, {} already used)",
                    header.name, size, binary.body.size() - binary.json_size, binary.offset - binary.json_size));
  }
  return OkStatus();
}

// The input's "data" flattened into `values`, one per element of its shape.
Status GatherValues(const InputHeader& header, const JsonValue* data, std::vector<const JsonValue*>* values) {
  if (data == nullptr) return Invalid(fmt::format("input '{}' has neither \"data\" nor binary_data_size", header.name));
  values->reserve(std::min<std::uint64_t>(static_cast<std::uint64_t>(header.count), 1 << 20));
  ORTKIT_RETURN_IF_ERROR(Flatten(*data, 0, header.name, values));
  if (values->size() != static_cast<std::uint64_t>(header.count)) {
    return Invalid(fmt::format("input '{}': shape {} needs {} values, \"data\" holds {}", header.name,
                               ShapeToString(header.shape), header.count, values->size()));
  }
  return OkStatus();
}

Result<NamedTensor> DecodeInput(const JsonValue& in, BinaryData* binary) {
  ORTKIT_ASSIGN_OR_RETURN(InputHeader header, DecodeInputHeader(in));
  std::vector<const JsonValue*> values;
  const JsonValue* data = Member(in, "data");
  if (header.binary_size && data != nullptr) {
    return Invalid(
        fmt::format("input '{}' has both \"data\" and binary_data_size: send the values once, in one "
                    "of them",
                    header.name));
  }
  if (header.binary_size) {
    ORTKIT_RETURN_IF_ERROR(CheckBinarySize(header, *binary));
  } else {
    ORTKIT_RETURN_IF_ERROR(GatherValues(header, data, &values));
  }
  auto tensor = Tensor::Allocate(header.info->type, std::move(header.shape));
  if (!tensor.ok()) return Invalid(fmt::format("input '{}': {}", header.name, tensor.error().message));
  if (header.binary_size) {
    if (*header.binary_size > 0) std::memcpy(tensor->data(), binary->body.data() + binary->offset, *header.binary_size);
    binary->offset += *header.binary_size;
  } else {
    ORTKIT_RETURN_IF_ERROR(FillFromJson(values, &tensor.value(), header.name));
  }
  return NamedTensor{std::move(header.name), std::move(tensor).value()};
}

Status DecodeInputs(const JsonValue& root, std::string_view body, std::size_t json_size, InferRequest* request) {
  const JsonValue* inputs = Member(root, "inputs");
  if (inputs == nullptr || !inputs->IsArray()) return Invalid("the request needs an \"inputs\" list");
  request->inputs.reserve(inputs->Size());
  BinaryData binary{body, json_size, json_size};
  for (const JsonValue& in : inputs->GetArray()) {
    ORTKIT_ASSIGN_OR_RETURN(NamedTensor input, DecodeInput(in, &binary));
    request->inputs.push_back(std::move(input));
  }
  if (binary.offset != body.size()) {
    return Invalid(fmt::format("the body holds {} bytes of binary data but the inputs' binary_data_size add up to {}",
                               body.size() - json_size, binary.offset - json_size));
  }
  return OkStatus();
}

Status DecodeOutputs(const JsonValue& root, InferRequest* request, OutputEncoding* encoding) {
  const JsonValue* outputs = Member(root, "outputs");
  if (outputs == nullptr) return OkStatus();
  if (!outputs->IsArray()) return Invalid("\"outputs\" must be a list");
  std::set<std::string_view> named;
  for (const JsonValue& out : outputs->GetArray()) {
    const JsonValue* name_value = out.IsObject() ? Member(out, "name") : nullptr;
    if (name_value == nullptr || !name_value->IsString()) {
      return Invalid("each entry of \"outputs\" needs a \"name\"");
    }
    if (!IsUtf8(*name_value)) return Invalid("an output's \"name\" is not valid UTF-8");
    std::string name = StringOf(*name_value);
    if (!named.insert(std::string_view(name_value->GetString(), name_value->GetStringLength())).second) {
      return OutputNamedTwice(name);
    }
    if (const JsonValue* params = Member(out, "parameters")) {
      if (!params->IsObject()) return Invalid(fmt::format("output '{}': \"parameters\" must be an object", name));
      if (Member(*params, "classification") != nullptr) return ClassificationNotSupported(name);
      if (const JsonValue* binary = Member(*params, "binary_data")) {
        if (!binary->IsBool()) {
          return Invalid(fmt::format("output '{}': parameter \"binary_data\" must be true or false", name));
        }
        if (binary->GetBool()) encoding->binary_outputs.push_back(name);
      }
    }
    request->outputs.push_back(std::move(name));
  }
  return OkStatus();
}

}  // namespace

Result<InferRequest> DecodeInferRequest(std::string_view body, std::optional<std::size_t> header_length,
                                        OutputEncoding* encoding) {
  const std::size_t json_size = header_length.value_or(body.size());
  if (json_size > body.size()) {
    return Invalid(
        fmt::format("Inference-Header-Content-Length is {} but the body holds only {} bytes", json_size, body.size()));
  }
  RequestTree tree;
  ORTKIT_RETURN_IF_ERROR(tree.Parse(body.substr(0, json_size)));
  InferRequest request;
  ORTKIT_RETURN_IF_ERROR(DecodeRequestOptions(tree.root(), &request, encoding));
  ORTKIT_RETURN_IF_ERROR(DecodeInputs(tree.root(), body, json_size, &request));
  ORTKIT_RETURN_IF_ERROR(DecodeOutputs(tree.root(), &request, encoding));
  return request;
}

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
