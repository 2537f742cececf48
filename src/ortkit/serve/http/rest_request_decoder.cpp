// DecodeInferRequest (rest_codec.h): the request's JSON read once by RapidJSON's event reader
// (iterative: no recursion at any depth), each "data" value checked and stored in its tensor as it
// is read. No tree of the document is built: a 50 MB "data" list cost 2-4.6 GB as a tree with a
// pointer per value; read this way a request holds its body and its tensors, nothing per value.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ortkit/serve/http/rest_codec.h"
#include "ortkit/serve/request_values.h"

namespace ortkit::serve::http {
namespace {

Error Invalid(std::string message) { return MakeError(ErrorKind::kInvalidArgument, std::move(message)); }

constexpr int kMaxDataDepth = 32;  // "data" nests once per dimension at most

// One JSON value as the reader meets it: a scalar, or the start of a list or an object.
struct Value {
  enum class Kind { kInt, kUint, kDouble, kBool, kNull, kString, kList, kObject };
  Kind kind = Kind::kNull;
  std::int64_t i = 0;     // kInt: every integer that fits int64
  std::uint64_t u = 0;    // kUint: the integers above INT64_MAX
  double d = 0;           // kDouble
  bool b = false;         // kBool
  std::string_view text;  // kString: the decoded bytes, valid until the next event

  static Value Of(Kind kind) {
    Value v;
    v.kind = kind;
    return v;
  }
  static Value Integer(std::int64_t i) {
    Value v = Of(Kind::kInt);
    v.i = i;
    return v;
  }

  bool is_integer() const { return kind == Kind::kInt || kind == Kind::kUint; }
  bool is_number() const { return is_integer() || kind == Kind::kDouble; }
  double as_double() const {
    return kind == Kind::kInt ? static_cast<double>(i) : kind == Kind::kUint ? static_cast<double>(u) : d;
  }
};

// A value for a message: scalars as JSON (cut at 40 characters), containers by kind.
std::string Describe(const Value& v) {
  if (v.kind == Value::Kind::kList) return "a list";
  if (v.kind == Value::Kind::kObject) return "an object";
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  switch (v.kind) {
    case Value::Kind::kInt: writer.Int64(v.i); break;
    case Value::Kind::kUint: writer.Uint64(v.u); break;
    case Value::Kind::kDouble: writer.Double(v.d); break;
    case Value::Kind::kBool: writer.Bool(v.b); break;
    case Value::Kind::kString: writer.String(v.text.data(), static_cast<rapidjson::SizeType>(v.text.size())); break;
    default: writer.Null();
  }
  std::string text(buffer.GetString(), buffer.GetSize());
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

// The id and names are echoed into answers, which EncodeInferResponse writes byte for byte: a
// string that is not UTF-8 would make the whole answer invalid. Only these few strings are
// checked; RapidJSON's kParseValidateEncodingFlag checks every string at a third of a small parse.
bool IsUtf8(std::string_view text) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  unsigned codepoint = 0;
  while (stream.Tell() < text.size()) {
    if (!rapidjson::UTF8<>::Decode(stream, &codepoint)) return false;
  }
  return true;
}

// RapidJSON's handler interface turned into Values for `Events`, which implements OnScalar(Value),
// OnOpen(Value) (a list or an object starts), OnKey(std::string_view) and OnClose(), each
// returning false to stop the parse. Every non-integer number is read again with std::from_chars
// from the request's bytes: RapidJSON's own reading is inexact (about one 17-digit double in five
// comes out an ulp or more off: FP64 data) and, in full precision, returns garbage for a zero with
// an exponent ("0e-30": Debian's 1.1.0); handing every number over as text doubles the parse's
// cost. The reader calls Double() once the number's last character is consumed, so its text ends
// at the stream's position; a re-read that disagrees by more than rounding keeps RapidJSON's value.
template <typename Events>
class ValueHandler {
 public:
  /// `begin`: where `stream` (the underlying bytes of what is parsed) starts.
  ValueHandler(const char* begin, const rapidjson::MemoryStream* stream) : begin_(begin), stream_(stream) {}

  bool Null() { return events().OnScalar(Value{}); }
  bool Bool(bool b) {
    Value v = Value::Of(Value::Kind::kBool);
    v.b = b;
    return events().OnScalar(v);
  }
  bool Int(int i) { return Int64(i); }
  bool Uint(unsigned u) { return Int64(u); }
  bool Int64(std::int64_t i) { return events().OnScalar(Value::Integer(i)); }
  bool Uint64(std::uint64_t u) {
    if (u <= static_cast<std::uint64_t>(INT64_MAX)) return Int64(static_cast<std::int64_t>(u));
    Value v = Value::Of(Value::Kind::kUint);
    v.u = u;
    return events().OnScalar(v);
  }
  bool Double(double d);
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not asked for
  bool String(const char* s, rapidjson::SizeType length, bool) {
    Value v = Value::Of(Value::Kind::kString);
    v.text = std::string_view(s, length);
    return events().OnScalar(v);
  }
  bool StartObject() { return events().OnOpen(Value::Of(Value::Kind::kObject)); }
  bool Key(const char* s, rapidjson::SizeType length, bool) { return events().OnKey(std::string_view(s, length)); }
  bool EndObject(rapidjson::SizeType) { return events().OnClose(); }
  bool StartArray() { return events().OnOpen(Value::Of(Value::Kind::kList)); }
  bool EndArray(rapidjson::SizeType) { return events().OnClose(); }

  /// The number that stopped the parse (beyond a double's range); empty if none did.
  const std::string& refused_number() const { return refused_number_; }
  /// Where the parse is, counted from `begin`.
  std::size_t position() const { return stream_->Tell(); }

 private:
  Events& events() { return static_cast<Events&>(*this); }

  const char* begin_;
  const rapidjson::MemoryStream* stream_;
  std::string refused_number_;
};

template <typename Events>
bool ValueHandler<Events>::Double(double d) {
  const auto in_number = [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
  };
  const char* end = begin_ + stream_->Tell();
  const char* start = end;
  while (start > begin_ && in_number(start[-1])) --start;
  if (!std::isfinite(d)) {  // RapidJSON reads 1.5e309 as infinity, which JSON cannot carry
    refused_number_.assign(start, end);
    return false;
  }
  // Without an exponent, 15 characters hold at most 15 digits: RapidJSON reads those exactly (one
  // correctly rounded division).
  const bool exponent = std::find_if(start, end, [](char c) { return c == 'e' || c == 'E'; }) != end;
  if (end - start > 15 || exponent) {
    double exact = 0;
    const auto [ptr, ec] = std::from_chars(start, end, exact);
    if (ec == std::errc() && ptr == end && std::abs(exact - d) <= std::abs(d) * 1e-14) d = exact;
  }
  Value v = Value::Of(Value::Kind::kDouble);
  v.d = d;
  return events().OnScalar(v);
}

// One input's "data" as it is read: lists nest at most kMaxDataDepth deep and are flattened in
// row-major order; each value is checked against the datatype and stored in the tensor at once.
// Values beyond the tensor's count (every value, without a tensor) are only counted, so that a
// mismatch can say how many there were.
class DataFiller {
 public:
  /// `tensor`: where the values go; null to count them only.
  DataFiller(std::string_view name, Tensor* tensor) : name_(name), tensor_(tensor) {}

  /// Whether one more list may open inside the open ones.
  bool CanOpen() const { return depth_ < kMaxDataDepth; }
  void Open() { ++depth_; }
  void Close() { --depth_; }
  /// One value (an object counts as one too: it is the wrong kind of value).
  Status Add(const Value& v) {
    const std::uint64_t at = count_++;
    if (tensor_ == nullptr || at >= static_cast<std::uint64_t>(tensor_->element_count())) return OkStatus();
    return Store(v, static_cast<std::int64_t>(at));
  }
  std::uint64_t count() const { return count_; }
  int depth() const { return depth_; }

 private:
  Status Store(const Value& v, std::int64_t at);
  template <typename T>
  Status StoreInteger(const Value& v, std::int64_t at);
  Status StoreFloat(const Value& v, std::int64_t at);
  Error NotA(const Value& v, std::int64_t at, std::string_view needs) const {
    return Invalid(fmt::format("input '{}': element {} is {} but datatype {} needs {}", name_, at, Describe(v),
                               FindDataType(tensor_->type())->protocol, needs));
  }

  std::string_view name_;
  Tensor* tensor_;
  std::uint64_t count_ = 0;
  int depth_ = 0;
};

// A value that does not fit T is refused, never wrapped (UINT8 256 is not 0) nor clamped.
template <typename T>
Status DataFiller::StoreInteger(const Value& v, std::int64_t at) {
  if (!v.is_integer()) return NotA(v, at, "integers");
  const bool fits = v.kind == Value::Kind::kInt ? std::in_range<T>(v.i) : std::in_range<T>(v.u);
  if (!fits) return ElementOutOfRange(name_, static_cast<std::size_t>(at), Describe(v), tensor_->type());
  tensor_->values<T>()[at] = v.kind == Value::Kind::kInt ? static_cast<T>(v.i) : static_cast<T>(v.u);
  return OkStatus();
}

Status DataFiller::StoreFloat(const Value& v, std::int64_t at) {
  const DataType type = tensor_->type();
  if (type == DataType::kBool) {
    if (v.kind != Value::Kind::kBool) return NotA(v, at, "true or false");
    tensor_->SetFromDouble(at, v.b ? 1.0 : 0.0);
    return OkStatus();
  }
  if (!v.is_number()) return NotA(v, at, "numbers");
  double stored = 0;
  if (type == DataType::kFloat32) {
    stored = tensor_->values<float>()[at] = static_cast<float>(v.as_double());
  } else {
    tensor_->SetFromDouble(at, v.as_double());
    stored = tensor_->AsDouble(at);
  }
  // JSON numbers are finite (the reader refuses 1e309), so an infinity here is a number beyond the
  // datatype's largest (FP16 70000), which would otherwise reach the model as inf.
  if (std::isinf(stored)) return ElementOutOfRange(name_, static_cast<std::size_t>(at), Describe(v), type);
  return OkStatus();
}

Status DataFiller::Store(const Value& v, std::int64_t at) {
  switch (tensor_->type()) {
    case DataType::kInt64: return StoreInteger<std::int64_t>(v, at);
    case DataType::kInt32: return StoreInteger<std::int32_t>(v, at);
    case DataType::kInt16: return StoreInteger<std::int16_t>(v, at);
    case DataType::kInt8: return StoreInteger<std::int8_t>(v, at);
    case DataType::kUInt64: return StoreInteger<std::uint64_t>(v, at);
    case DataType::kUInt32: return StoreInteger<std::uint32_t>(v, at);
    case DataType::kUInt16: return StoreInteger<std::uint16_t>(v, at);
    case DataType::kUInt8: return StoreInteger<std::uint8_t>(v, at);
    default: return StoreFloat(v, at);
  }
}

Error NestsTooDeep(std::string_view name) {
  return Invalid(fmt::format("input '{}': \"data\" nests more than {} lists deep", name, kMaxDataDepth));
}

// The "data" of an input that came before its name, datatype or shape, read again once those are
// known: from its bytes (the list alone), into the tensor. It was read once already: its nesting
// and its count are right.
class DataReader : public ValueHandler<DataReader> {
 public:
  DataReader(const char* begin, const rapidjson::MemoryStream* stream, std::string_view name, Tensor* tensor)
      : ValueHandler(begin, stream), filler_(name, tensor) {}

  bool OnScalar(const Value& v) { return Keep(filler_.Add(v)); }
  bool OnOpen(const Value& v) {
    if (v.kind == Value::Kind::kList) {
      filler_.Open();
      return true;
    }
    return Keep(filler_.Add(v));  // an object: the wrong kind of value, which stops the read
  }
  bool OnKey(std::string_view) { return false; }
  bool OnClose() {
    filler_.Close();
    return true;
  }
  const Status& error() const { return error_; }

 private:
  bool Keep(Status status) {
    if (!status.ok()) error_ = std::move(status);
    return error_.ok();
  }
  DataFiller filler_;
  Status error_;
};

// Where the next value goes, by the key (or the list) it belongs to.
enum class Slot {
  kRoot,
  kIgnored,  // a key the server does not read: its value, whatever it holds, is skipped
  kId,
  kParameters,
  kInputs,
  kOutputs,
  kBinaryDataOutput,
  kPriority,
  kTimeout,
  kInput,
  kName,
  kDatatype,
  kShape,
  kDim,
  kInputParameters,
  kBinaryDataSize,
  kData,
  kOutput,
  kOutputName,
  kOutputParameters,
  kBinaryData,
  kClassification,
};

// The containers being read, outermost first.
enum class Frame {
  kRequest,
  kParameters,
  kInputs,
  kInput,
  kShape,
  kInputParameters,
  kData,
  kOutputs,
  kOutput,
  kOutputParameters
};

// The frames open, with the keys met in each: at most four deep (the request, "inputs", an input,
// its "shape"), so kept without allocating.
class OpenFrames {
 public:
  bool empty() const { return size_ == 0; }
  Frame back() const { return frames_[size_ - 1]; }
  std::uint32_t& seen() { return seen_[size_ - 1]; }
  void push(Frame frame) {
    frames_[size_] = frame;
    seen_[size_++] = 0;
  }
  void pop() { --size_; }

 private:
  std::array<Frame, 8> frames_{};
  std::array<std::uint32_t, 8> seen_{};
  std::size_t size_ = 0;
};

struct KeyOf {  // NOLINT(clang-analyzer-optin.performance.Padding): a constexpr table, written in the order read
  Frame frame;
  std::string_view key;
  Slot slot;
};
constexpr KeyOf kKeys[] = {
    {Frame::kRequest, "id", Slot::kId},
    {Frame::kRequest, "parameters", Slot::kParameters},
    {Frame::kRequest, "inputs", Slot::kInputs},
    {Frame::kRequest, "outputs", Slot::kOutputs},
    {Frame::kParameters, "binary_data_output", Slot::kBinaryDataOutput},
    {Frame::kParameters, "priority", Slot::kPriority},
    {Frame::kParameters, "timeout", Slot::kTimeout},
    {Frame::kInput, "name", Slot::kName},
    {Frame::kInput, "datatype", Slot::kDatatype},
    {Frame::kInput, "shape", Slot::kShape},
    {Frame::kInput, "parameters", Slot::kInputParameters},
    {Frame::kInput, "data", Slot::kData},
    {Frame::kInputParameters, "binary_data_size", Slot::kBinaryDataSize},
    {Frame::kOutput, "name", Slot::kOutputName},
    {Frame::kOutput, "parameters", Slot::kOutputParameters},
    {Frame::kOutputParameters, "binary_data", Slot::kBinaryData},
    {Frame::kOutputParameters, "classification", Slot::kClassification},
};

// The container a slot holds when its value is one of `kind`; none for a value of another kind.
std::optional<Frame> ContainerOf(Slot slot, Value::Kind kind) {
  const bool object = kind == Value::Kind::kObject;
  switch (slot) {
    case Slot::kRoot: return object ? std::optional(Frame::kRequest) : std::nullopt;
    case Slot::kParameters: return object ? std::optional(Frame::kParameters) : std::nullopt;
    case Slot::kInputs: return object ? std::nullopt : std::optional(Frame::kInputs);
    case Slot::kOutputs: return object ? std::nullopt : std::optional(Frame::kOutputs);
    case Slot::kInput: return object ? std::optional(Frame::kInput) : std::nullopt;
    case Slot::kShape: return object ? std::nullopt : std::optional(Frame::kShape);
    case Slot::kInputParameters: return object ? std::optional(Frame::kInputParameters) : std::nullopt;
    case Slot::kData: return object ? std::nullopt : std::optional(Frame::kData);
    case Slot::kOutput: return object ? std::optional(Frame::kOutput) : std::nullopt;
    case Slot::kOutputParameters: return object ? std::optional(Frame::kOutputParameters) : std::nullopt;
    default: return std::nullopt;
  }
}

// What an input entry said, kept until the entry ends (its keys come in any order), and its values
// when "data" came after its name, datatype and shape.
struct InputEntry {
  std::optional<std::string> name;
  std::optional<std::string> datatype;
  bool datatype_seen = false;
  bool shape_is_list = false;
  std::string shape_bad;  // the first element that is not a non-negative integer, described
  std::vector<std::int64_t> shape;
  bool parameters_bad = false;
  std::string binary_size_bad;
  std::optional<std::uint64_t> binary_size;
  std::string twice;  // the first key given twice
  bool data_seen = false;
  std::optional<Tensor> tensor;      // "data" read into it as it came
  std::optional<DataFiller> filler;  // while "data" is read
  std::uint64_t data_count = 0;      // values in "data"
  std::size_t data_begin = 0;        // where "data" is, to read it again when it came first
  std::size_t data_end = 0;
  bool data_too_deep = false;        // found before the name was known
  std::optional<Value> scalar_data;  // "data" that is one value, kept with its text
  std::string scalar_text;
};

struct OutputEntry {
  std::optional<std::string> name;
  std::string twice;
  bool parameters_bad = false;
  bool binary_bad = false;
  bool binary = false;
  bool classification = false;
};

// What the datatype and shape of an input say, checked before anything is allocated.
struct InputHeader {
  const DataTypeInfo* info = nullptr;
  std::int64_t count = 0;
  std::uint64_t bytes = 0;
};

using Reader = rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>>;

// The reader of one request: events in, the request and its tensors out.
class RequestReader : public ValueHandler<RequestReader> {
 public:
  RequestReader(std::string_view json, std::string_view body, const rapidjson::MemoryStream* stream,
                InferRequest* request, OutputEncoding* encoding)
      : ValueHandler(json.data(), stream),
        json_(json),
        body_(body),
        binary_offset_(json.size()),
        request_(request),
        encoding_(encoding) {}

  bool OnScalar(const Value& v);
  bool OnOpen(const Value& v);
  bool OnKey(std::string_view key);
  bool OnClose();

  /// The request's first problem, whether the reader's or the parse's (`parsed`, which stopped at
  /// byte `end`), or OkStatus once the request is complete.
  Status Finish(const rapidjson::ParseResult& parsed, std::size_t end) const;

 private:
  Slot NextSlot() const;
  // Where the bracket of the list starting or ending now is: the iterative parse calls the handler
  // before it takes the bracket, the recursive one after.
  std::size_t BracketAt(std::size_t position, char bracket) const {
    return position < json_.size() && json_[position] == bracket ? position : position - 1;
  }
  bool Fail(Error error) {
    error_ = std::move(error);
    return false;
  }
  bool Keep(const Status& status) { return status.ok() || Fail(status.error()); }
  bool OnRequestValue(Slot slot, const Value& v);
  bool OnInputValue(Slot slot, const Value& v);
  bool OnOutputValue(Slot slot, const Value& v);
  bool OnData(const Value& v);
  bool OnOpened(Frame frame);
  bool StartData();
  bool OpenInData();
  bool OnDataClosed();
  Result<InputHeader> CheckHeader(const std::string& name) const;
  Status FinishInput();
  Status ReadData(const std::string& name, const InputHeader& header);
  Status ReadDeferredData(const std::string& name, Tensor* tensor) const;
  Status ReadBinary(const std::string& name, const InputHeader& header);
  Status FinishOutput();
  Status FinishRequest() const;

  std::string_view json_;
  std::string_view body_;
  std::size_t binary_offset_;  // where the next binary input starts in body_
  InferRequest* request_;
  OutputEncoding* encoding_;
  OpenFrames frames_;
  Slot slot_ = Slot::kRoot;     // the value the last key announced
  std::uint64_t skipping_ = 0;  // containers open inside a value being skipped
  bool root_is_object_ = false;
  bool inputs_seen_ = false;
  InputEntry input_;
  OutputEntry output_;
  std::set<std::string, std::less<>> outputs_named_;
  Status error_;
};

Slot RequestReader::NextSlot() const {
  if (frames_.empty()) return Slot::kRoot;
  switch (frames_.back()) {
    case Frame::kInputs: return Slot::kInput;
    case Frame::kShape: return Slot::kDim;
    case Frame::kData: return Slot::kData;
    case Frame::kOutputs: return Slot::kOutput;
    default: return slot_;
  }
}

bool RequestReader::OnKey(std::string_view key) {
  if (skipping_ > 0) return true;
  const Frame frame = frames_.back();
  slot_ = Slot::kIgnored;
  for (std::size_t k = 0; k < std::size(kKeys); ++k) {
    if (kKeys[k].frame != frame || kKeys[k].key != key) continue;
    const std::uint32_t bit = std::uint32_t{1} << k;
    if ((frames_.seen() & bit) != 0) {
      // A second value for one key (JSON leaves it to readers): either choice would surprise someone.
      if (frame == Frame::kInput || frame == Frame::kInputParameters) {
        if (input_.twice.empty()) input_.twice = key;
        return true;
      }
      if (frame == Frame::kOutput || frame == Frame::kOutputParameters) {
        if (output_.twice.empty()) output_.twice = key;
        return true;
      }
      return Fail(Invalid(fmt::format("\"{}\" is given twice{}: give it once", key,
                                      frame == Frame::kParameters ? " in \"parameters\"" : "")));
    }
    frames_.seen() |= bit;
    slot_ = kKeys[k].slot;
    return true;
  }
  return true;
}

bool RequestReader::OnScalar(const Value& v) {
  if (skipping_ > 0) return true;
  const Slot slot = NextSlot();
  switch (slot) {
    case Slot::kRoot:  // not an object: said once the parse is over (it may not be JSON at all)
    case Slot::kIgnored: return true;
    case Slot::kData: return OnData(v);
    case Slot::kInput:
    case Slot::kName:
    case Slot::kDatatype:
    case Slot::kShape:
    case Slot::kDim:
    case Slot::kInputParameters:
    case Slot::kBinaryDataSize: return OnInputValue(slot, v);
    case Slot::kOutput:
    case Slot::kOutputName:
    case Slot::kOutputParameters:
    case Slot::kBinaryData:
    case Slot::kClassification: return OnOutputValue(slot, v);
    default: return OnRequestValue(slot, v);
  }
}

// A value of the request's own keys or of its parameters (containers of the wrong kind included).
bool RequestReader::OnRequestValue(Slot slot, const Value& v) {
  switch (slot) {
    case Slot::kId:
      if (v.kind != Value::Kind::kString) return Fail(Invalid("\"id\" must be a string"));
      if (!IsUtf8(v.text)) return Fail(Invalid("\"id\" is not valid UTF-8"));
      request_->id.assign(v.text);
      return true;
    case Slot::kParameters: return Fail(Invalid("\"parameters\" must be an object"));
    case Slot::kInputs: return Fail(Invalid("the request needs an \"inputs\" list"));
    case Slot::kOutputs: return Fail(Invalid("\"outputs\" must be a list"));
    case Slot::kBinaryDataOutput:
      if (v.kind != Value::Kind::kBool) {
        return Fail(Invalid("malformed request: parameter \"binary_data_output\" must be true or false"));
      }
      encoding_->all_binary = v.b;
      return true;
    case Slot::kPriority:
      if (v.kind != Value::Kind::kInt) return Fail(ParameterNotAnInteger("priority"));
      request_->priority = v.i;
      return true;
    case Slot::kTimeout:
      if (v.kind != Value::Kind::kInt) return Fail(ParameterNotAnInteger("timeout"));
      request_->timeout_us = v.i;
      return true;
    default: return true;
  }
}

// A value inside an input entry. Problems wait for the entry's end, where its name is known.
bool RequestReader::OnInputValue(Slot slot, const Value& v) {
  InputEntry& in = input_;
  const bool is_string = v.kind == Value::Kind::kString;
  switch (slot) {
    case Slot::kInput: return Fail(Invalid("each entry of \"inputs\" must be an object"));
    case Slot::kName:
      if (is_string) in.name.emplace(v.text);
      return true;
    case Slot::kDatatype:
      in.datatype_seen = true;
      if (is_string) in.datatype.emplace(v.text);
      return true;
    case Slot::kShape: return true;  // not a list: shape_is_list stays false
    case Slot::kDim:
      if (v.kind == Value::Kind::kInt && v.i >= 0) {
        in.shape.push_back(v.i);
      } else if (in.shape_bad.empty()) {
        in.shape_bad = Describe(v);
      }
      return true;
    case Slot::kInputParameters: in.parameters_bad = true; return true;
    case Slot::kBinaryDataSize:
      if (v.kind == Value::Kind::kInt && v.i >= 0) {
        in.binary_size = static_cast<std::uint64_t>(v.i);
      } else if (v.kind == Value::Kind::kUint) {
        in.binary_size = v.u;
      } else {
        in.binary_size_bad = Describe(v);
      }
      return true;
    default: return true;
  }
}

bool RequestReader::OnOutputValue(Slot slot, const Value& v) {
  OutputEntry& out = output_;
  switch (slot) {
    case Slot::kOutput: return Fail(Invalid("each entry of \"outputs\" needs a \"name\""));
    case Slot::kOutputName:
      if (v.kind == Value::Kind::kString) out.name.emplace(v.text);
      return true;
    case Slot::kOutputParameters: out.parameters_bad = true; return true;
    case Slot::kBinaryData:
      if (v.kind != Value::Kind::kBool) out.binary_bad = true;
      out.binary = out.binary || (v.kind == Value::Kind::kBool && v.b);
      return true;
    case Slot::kClassification: out.classification = true; return true;
    default: return true;
  }
}

// A value of "data": the whole of it when it is one value (kept for the entry's end), else one
// inside its lists.
bool RequestReader::OnData(const Value& v) {
  InputEntry& in = input_;
  if (frames_.back() != Frame::kInput) return Keep(in.filler->Add(v));
  in.data_seen = true;
  in.data_count = 1;
  in.scalar_text.assign(v.text);
  in.scalar_data = v;
  in.scalar_data->text = in.scalar_text;
  return true;
}

bool RequestReader::OnOpen(const Value& v) {
  if (skipping_ > 0) {
    ++skipping_;
    return true;
  }
  const Slot slot = NextSlot();
  const std::optional<Frame> frame = ContainerOf(slot, v.kind);
  if (slot == Slot::kRoot) root_is_object_ = frame.has_value();
  if (!frame) {
    // A container where the slot holds a scalar (or the other kind of container): the slot's
    // problem, and its contents are skipped.
    if (slot != Slot::kRoot && !OnScalar(v)) return false;
    skipping_ = 1;
    return true;
  }
  if (*frame == Frame::kData && frames_.back() == Frame::kData) return OpenInData();
  frames_.push(*frame);
  return OnOpened(*frame);
}

bool RequestReader::OnOpened(Frame frame) {
  switch (frame) {
    case Frame::kInputs: inputs_seen_ = true; return true;
    case Frame::kInput:
      if (request_->inputs.size() >= kMaxTensorsPerRequest) {
        return Fail(Invalid(fmt::format("the request lists more than {} inputs", kMaxTensorsPerRequest)));
      }
      input_ = InputEntry{};
      return true;
    case Frame::kShape: input_.shape_is_list = true; return true;
    case Frame::kData: return StartData();
    case Frame::kOutput:
      if (request_->outputs.size() >= kMaxTensorsPerRequest) {
        return Fail(Invalid(fmt::format("the request lists more than {} outputs", kMaxTensorsPerRequest)));
      }
      output_ = OutputEntry{};
      return true;
    default: return true;
  }
}

// "data" starts: read into the tensor as it comes when the entry has said what it holds, else
// only counted now (and read again at the entry's end when its count is right).
bool RequestReader::StartData() {
  InputEntry& in = input_;
  in.data_seen = true;
  in.data_begin = BracketAt(position(), '[');
  std::optional<InputHeader> header;
  if (in.name && !in.binary_size && in.twice.empty()) {
    auto checked = CheckHeader(*in.name);
    if (checked.ok()) header = *checked;
  }
  // A list of N values takes at least 2N bytes: a shape that wants more than the rest of the request
  // can hold is not allocated for (its count will not match).
  const std::uint64_t room = (json_.size() - in.data_begin) / 2 + 1;
  Tensor* into = nullptr;
  if (header && static_cast<std::uint64_t>(header->count) <= room) {
    auto tensor = Tensor::Allocate(header->info->type, in.shape);
    if (!tensor.ok()) return Fail(Invalid(fmt::format("input '{}': {}", *in.name, tensor.error().message)));
    into = &in.tensor.emplace(std::move(tensor).value());
  }
  in.filler.emplace(in.name ? std::string_view(*in.name) : std::string_view(), into);
  in.filler->Open();
  return true;
}

// A list inside "data".
bool RequestReader::OpenInData() {
  InputEntry& in = input_;
  if (in.filler->CanOpen()) {
    in.filler->Open();
    return true;
  }
  if (in.name) return Fail(NestsTooDeep(*in.name));
  in.data_too_deep = true;  // said at the entry's end, with its name; the rest of this list is skipped
  skipping_ = 1;
  return true;
}

bool RequestReader::OnClose() {
  if (skipping_ > 0) {
    --skipping_;
    return true;
  }
  const Frame frame = frames_.back();
  if (frame == Frame::kData) return OnDataClosed();
  frames_.pop();
  switch (frame) {
    case Frame::kRequest: return Keep(FinishRequest());
    case Frame::kInput: return Keep(FinishInput());
    case Frame::kOutput: return Keep(FinishOutput());
    default: return true;
  }
}

bool RequestReader::OnDataClosed() {
  InputEntry& in = input_;
  in.filler->Close();
  if (in.filler->depth() > 0) return true;
  frames_.pop();
  in.data_count = in.filler->count();
  in.data_end = BracketAt(position(), ']') + 1;
  in.filler.reset();
  return true;
}

// The entry's datatype, shape and parameters, with the messages (and in the order) of their checks.
Result<InputHeader> RequestReader::CheckHeader(const std::string& name) const {
  const InputEntry& in = input_;
  if (!in.datatype) return Invalid(fmt::format("input '{}' has no \"datatype\"", name));
  InputHeader header;
  header.info = FindDataTypeByProtocol(*in.datatype);
  if (header.info == nullptr || header.info->type == DataType::kString) {
    return Invalid(
        fmt::format("input '{}': datatype \"{}\" is not supported (use BOOL, UINT8..UINT64, INT8..INT64, "
                    "FP16, BF16, FP32 or FP64)",
                    name, *in.datatype));
  }
  if (!in.shape_is_list) return Invalid(fmt::format("input '{}' has no \"shape\" list", name));
  if (!in.shape_bad.empty()) {
    return Invalid(fmt::format("input '{}': shape must hold non-negative integers, not {}", name, in.shape_bad));
  }
  // Sizes are checked against what the request carries before anything is allocated: a shape
  // of a billion rows is refused, not reserved.
  auto count = ElementCountOf(in.shape);
  if (!count.ok() || static_cast<std::uint64_t>(*count) > UINT64_MAX / header.info->size) {
    return Invalid(fmt::format("input '{}': shape {} is too large", name, ShapeToString(in.shape)));
  }
  header.count = *count;
  header.bytes = static_cast<std::uint64_t>(*count) * header.info->size;
  if (in.parameters_bad) return Invalid(fmt::format("input '{}': \"parameters\" must be an object", name));
  if (!in.binary_size_bad.empty()) {
    return Invalid(
        fmt::format("input '{}': binary_data_size must be a non-negative integer, not {}", name, in.binary_size_bad));
  }
  return header;
}

Status RequestReader::FinishInput() {
  InputEntry& in = input_;
  if (!in.name) return Invalid("an input has no \"name\"");
  if (!IsUtf8(*in.name)) return Invalid("an input's \"name\" is not valid UTF-8");
  const std::string& name = *in.name;
  if (!in.twice.empty()) return Invalid(fmt::format("input '{}': \"{}\" is given twice: give it once", name, in.twice));
  ORTKIT_ASSIGN_OR_RETURN(InputHeader header, CheckHeader(name));
  if (in.binary_size && in.data_seen) {
    return Invalid(
        fmt::format("input '{}' has both \"data\" and binary_data_size: send the values once, in one of them", name));
  }
  if (in.binary_size) return ReadBinary(name, header);
  if (!in.data_seen) return Invalid(fmt::format("input '{}' has neither \"data\" nor binary_data_size", name));
  if (in.data_too_deep) return NestsTooDeep(name);
  return ReadData(name, header);
}

Status RequestReader::ReadData(const std::string& name, const InputHeader& header) {
  InputEntry& in = input_;
  if (in.data_count != static_cast<std::uint64_t>(header.count)) {
    return Invalid(fmt::format("input '{}': shape {} needs {} values, \"data\" holds {}", name, ShapeToString(in.shape),
                               header.count, in.data_count));
  }
  if (!in.tensor) {  // read again, now that the entry has said what it holds
    ORTKIT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(header.info->type, in.shape));
    in.tensor.emplace(std::move(tensor));
    if (in.scalar_data) {
      DataFiller filler(name, &*in.tensor);
      ORTKIT_RETURN_IF_ERROR(filler.Add(*in.scalar_data));
    } else {
      ORTKIT_RETURN_IF_ERROR(ReadDeferredData(name, &*in.tensor));
    }
  }
  request_->inputs.push_back(NamedTensor{name, std::move(*in.tensor)});
  return OkStatus();
}

Status RequestReader::ReadDeferredData(const std::string& name, Tensor* tensor) const {
  const char* begin = json_.data() + input_.data_begin;
  rapidjson::MemoryStream stream(begin, input_.data_end - input_.data_begin);
  DataReader handler(begin, &stream, name, tensor);
  alignas(16) char buffer[1024];
  rapidjson::MemoryPoolAllocator<> allocator(buffer, sizeof buffer);
  Reader reader(&allocator);
  const rapidjson::ParseResult parsed = reader.Parse<rapidjson::kParseIterativeFlag>(stream, handler);
  ORTKIT_RETURN_IF_ERROR(handler.error());
  if (!handler.refused_number().empty()) {
    return Invalid(fmt::format("the request is not valid JSON: number {} is beyond a double's range (at byte {})",
                               handler.refused_number(), input_.data_begin + parsed.Offset()));
  }
  if (parsed.IsError()) return Invalid("the request is not valid JSON");  // read once already: not reached
  return OkStatus();
}

Status RequestReader::ReadBinary(const std::string& name, const InputHeader& header) {
  const std::uint64_t size = *input_.binary_size;
  if (size != header.bytes) {
    return Invalid(fmt::format("input '{}': binary_data_size is {} but {} {} needs {} bytes", name, size,
                               *input_.datatype, ShapeToString(input_.shape), header.bytes));
  }
  if (size > body_.size() - binary_offset_) {
    return Invalid(fmt::format(
        "input '{}': binary_data_size {} runs past the end of the body ({} bytes after the JSON header, {} already "
        "used)",
        name, size, body_.size() - json_.size(), binary_offset_ - json_.size()));
  }
  ORTKIT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(header.info->type, input_.shape));
  if (size > 0) std::memcpy(tensor.data(), body_.data() + binary_offset_, size);
  binary_offset_ += size;
  request_->inputs.push_back(NamedTensor{name, std::move(tensor)});
  return OkStatus();
}

Status RequestReader::FinishOutput() {
  const OutputEntry& out = output_;
  if (!out.name) return Invalid("each entry of \"outputs\" needs a \"name\"");
  if (!IsUtf8(*out.name)) return Invalid("an output's \"name\" is not valid UTF-8");
  const std::string& name = *out.name;
  if (!out.twice.empty()) {
    return Invalid(fmt::format("output '{}': \"{}\" is given twice: give it once", name, out.twice));
  }
  if (!outputs_named_.insert(name).second) return OutputNamedTwice(name);
  if (out.parameters_bad) return Invalid(fmt::format("output '{}': \"parameters\" must be an object", name));
  if (out.binary_bad) {
    return Invalid(fmt::format("output '{}': parameter \"binary_data\" must be true or false", name));
  }
  if (out.classification) return ClassificationNotSupported(name);
  if (out.binary) encoding_->binary_outputs.push_back(name);
  request_->outputs.push_back(name);
  return OkStatus();
}

Status RequestReader::FinishRequest() const {
  if (!inputs_seen_) return Invalid("the request needs an \"inputs\" list");
  if (binary_offset_ != body_.size()) {
    return Invalid(fmt::format("the body holds {} bytes of binary data but the inputs' binary_data_size add up to {}",
                               body_.size() - json_.size(), binary_offset_ - json_.size()));
  }
  return OkStatus();
}

Status RequestReader::Finish(const rapidjson::ParseResult& parsed, std::size_t end) const {
  if (!error_.ok()) return error_;
  if (!refused_number().empty()) {
    return Invalid(fmt::format("the request is not valid JSON: number {} is beyond a double's range (at byte {})",
                               refused_number(), parsed.Offset()));
  }
  if (parsed.IsError()) {
    return Invalid(fmt::format("the request is not valid JSON: {} (at byte {})",
                               rapidjson::GetParseError_En(parsed.Code()), parsed.Offset()));
  }
  // The reader takes a NUL byte for the end of the text: bytes after one are not JSON either.
  if (end < json_.size()) {
    return Invalid(fmt::format("the request is not valid JSON: {} (at byte {})",
                               rapidjson::GetParseError_En(rapidjson::kParseErrorDocumentRootNotSingular), end));
  }
  if (!root_is_object_) return Invalid("the request must be a JSON object");
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
  const std::string_view json = body.substr(0, json_size);
  InferRequest request;
  rapidjson::MemoryStream bytes(json.data(), json.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> stream(bytes);  // skips a BOM
  RequestReader handler(json, body, &bytes, &request, encoding);
  // The reader's stack (and the pool's bookkeeping) fit here for a request of a few hundred bytes.
  alignas(16) char buffer[4096];
  rapidjson::MemoryPoolAllocator<> allocator(buffer, sizeof buffer);
  Reader reader(&allocator);
  const rapidjson::ParseResult parsed = reader.Parse<rapidjson::kParseIterativeFlag>(stream, handler);
  ORTKIT_RETURN_IF_ERROR(handler.Finish(parsed, bytes.Tell()));
  return request;
}

}  // namespace ortkit::serve::http
