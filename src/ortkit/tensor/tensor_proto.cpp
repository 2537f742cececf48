#include "ortkit/tensor/tensor_proto.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx-data.pb.h>

#include "ortkit/core/files.h"

namespace ortkit {
namespace {

// raw_data is little-endian by definition; ortkit copies it as is.
static_assert(std::endian::native == std::endian::little, "TensorProto raw_data is copied without byte swapping");

// ONNX element types that have no ortkit DataType, named as ONNX names them.
// clang-format off
constexpr std::array kUnsupportedTypes = std::to_array<std::pair<int, std::string_view>>({
  {14, "complex64"}, {15, "complex128"}, {24, "float8e8m0"}, {25, "uint2"}, {26, "int2"}, {27, "float6e2m3"}, {28, "float6e3m2"},
});
// clang-format on

enum class TypedField { kFloat, kDouble, kInt32, kInt64, kUInt64, kString };

// Where ONNX keeps each element type when raw_data is not used, and the range the stored
// integers must lie in (float16/bfloat16 are bit patterns, which some writers sign-extend).
struct FieldRule {
  DataType type;
  TypedField field;
  std::int64_t min;
  std::int64_t max;
};

// clang-format off
constexpr std::array kFieldRules = std::to_array<FieldRule>({
  {DataType::kFloat32,  TypedField::kFloat,  0, 0},
  {DataType::kFloat64,  TypedField::kDouble, 0, 0},
  {DataType::kInt8,     TypedField::kInt32,  INT8_MIN, INT8_MAX},
  {DataType::kInt16,    TypedField::kInt32,  INT16_MIN, INT16_MAX},
  {DataType::kInt32,    TypedField::kInt32,  INT32_MIN, INT32_MAX},
  {DataType::kUInt8,    TypedField::kInt32,  0, UINT8_MAX},
  {DataType::kUInt16,   TypedField::kInt32,  0, UINT16_MAX},
  {DataType::kBool,     TypedField::kInt32,  INT32_MIN, INT32_MAX},
  {DataType::kFloat16,  TypedField::kInt32,  INT16_MIN, UINT16_MAX},
  {DataType::kBFloat16, TypedField::kInt32,  INT16_MIN, UINT16_MAX},
  {DataType::kInt64,    TypedField::kInt64,  0, 0},
  {DataType::kUInt32,   TypedField::kUInt64, 0, UINT32_MAX},
  {DataType::kUInt64,   TypedField::kUInt64, 0, 0},
  {DataType::kString,   TypedField::kString, 0, 0},
  // One byte per int32 for the 8-bit floats; for the packed types one packed byte per int32.
  {DataType::kFloat8E4M3FN,   TypedField::kInt32, 0, UINT8_MAX},
  {DataType::kFloat8E4M3FNUZ, TypedField::kInt32, 0, UINT8_MAX},
  {DataType::kFloat8E5M2,     TypedField::kInt32, 0, UINT8_MAX},
  {DataType::kFloat8E5M2FNUZ, TypedField::kInt32, 0, UINT8_MAX},
  {DataType::kFloat4E2M1,     TypedField::kInt32, 0, UINT8_MAX},
  {DataType::kUInt4,          TypedField::kInt32, 0, UINT8_MAX},
  {DataType::kInt4,           TypedField::kInt32, 0, UINT8_MAX},
});
// clang-format on

std::string_view FieldName(TypedField field) {
  switch (field) {
    case TypedField::kFloat: return "float_data";
    case TypedField::kDouble: return "double_data";
    case TypedField::kInt32: return "int32_data";
    case TypedField::kInt64: return "int64_data";
    case TypedField::kUInt64: return "uint64_data";
    case TypedField::kString: return "string_data";
  }
  return "";
}

int FieldSize(const onnx::TensorProto& proto, TypedField field) {
  switch (field) {
    case TypedField::kFloat: return proto.float_data_size();
    case TypedField::kDouble: return proto.double_data_size();
    case TypedField::kInt32: return proto.int32_data_size();
    case TypedField::kInt64: return proto.int64_data_size();
    case TypedField::kUInt64: return proto.uint64_data_size();
    case TypedField::kString: return proto.string_data_size();
  }
  return 0;
}

// "int32_data holds 6, raw_data holds 24 bytes": what the proto does hold, for mismatch messages.
std::string FilledFields(const onnx::TensorProto& proto) {
  std::vector<std::string> parts;
  for (TypedField f : {TypedField::kFloat, TypedField::kDouble, TypedField::kInt32, TypedField::kInt64,
                       TypedField::kUInt64, TypedField::kString}) {
    if (FieldSize(proto, f) > 0) parts.push_back(fmt::format("{} holds {}", FieldName(f), FieldSize(proto, f)));
  }
  if (proto.has_raw_data()) parts.push_back(fmt::format("raw_data holds {} bytes", proto.raw_data().size()));
  return parts.empty() ? "no data field is set" : fmt::format("{}", fmt::join(parts, ", "));
}

template <typename T>
void StoreNarrowed(const onnx::TensorProto& proto, Tensor& tensor, std::uint32_t mask) {
  auto out = tensor.values<T>();
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<T>(static_cast<std::uint32_t>(proto.int32_data(static_cast<int>(i))) & mask);
}

Status CopyTypedField(const onnx::TensorProto& proto, const FieldRule& rule, Tensor& tensor, std::string_view label) {
  // Packed types keep one packed byte per stored value.
  const bool packed = FindDataType(rule.type)->bits > 0;
  const auto n = static_cast<int>(packed ? tensor.byte_size() : tensor.element_count());
  switch (rule.field) {
    case TypedField::kFloat: std::copy_n(proto.float_data().begin(), n, tensor.values<float>().begin()); break;
    case TypedField::kDouble: std::copy_n(proto.double_data().begin(), n, tensor.values<double>().begin()); break;
    case TypedField::kInt64: std::copy_n(proto.int64_data().begin(), n, tensor.values<std::int64_t>().begin()); break;
    case TypedField::kString: std::copy_n(proto.string_data().begin(), n, tensor.strings().begin()); break;
    case TypedField::kUInt64:
      if (rule.type == DataType::kUInt64) {
        std::copy_n(proto.uint64_data().begin(), n, tensor.values<std::uint64_t>().begin());
        break;
      }
      for (int i = 0; i < n; ++i) {
        if (proto.uint64_data(i) > static_cast<std::uint64_t>(rule.max)) {
          return MakeError(ErrorKind::kInvalidArgument,
                           fmt::format("{}: uint64_data[{}] = {} is out of range for {}", label, i,
                                       proto.uint64_data(i), DataTypeName(rule.type)));
        }
        tensor.values<std::uint32_t>()[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(proto.uint64_data(i));
      }
      break;
    case TypedField::kInt32:
      for (int i = 0; i < n; ++i) {
        const std::int64_t v = proto.int32_data(i);
        if (v < rule.min || v > rule.max) {
          return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: int32_data[{}] = {} is out of range for {}",
                                                                    label, i, v, DataTypeName(rule.type)));
        }
      }
      if (packed) {
        for (int i = 0; i < n; ++i) tensor.data()[i] = static_cast<std::byte>(proto.int32_data(i) & 0xFF);
        break;
      }
      switch (FindDataType(rule.type)->size) {
        case 1: StoreNarrowed<std::uint8_t>(proto, tensor, 0xFF); break;
        case 2: StoreNarrowed<std::uint16_t>(proto, tensor, 0xFFFF); break;
        default: StoreNarrowed<std::uint32_t>(proto, tensor, 0xFFFFFFFF); break;
      }
      if (rule.type == DataType::kBool) {
        for (int i = 0; i < n; ++i)
          tensor.values<std::uint8_t>()[static_cast<std::size_t>(i)] = proto.int32_data(i) != 0;
      }
      break;
  }
  return OkStatus();
}

std::string_view ExternalLocation(const onnx::TensorProto& proto) {
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") return entry.value();
  }
  return "";
}

// ONNX test cases store sequence, optional and map inputs as SequenceProto, OptionalProto and
// MapProto. Their bytes often parse as a (nonsensical) TensorProto, so they are recognised when
// the TensorProto reading fails and the bytes parse cleanly, with no unknown field, as one of them.
std::string DescribeOtherMessage(std::string_view bytes) {
  constexpr std::array kElemTypes =
      std::to_array<std::string_view>({"undefined", "tensor", "sparse tensor", "sequence", "map", "optional"});
  onnx::SequenceProto sequence;
  if (sequence.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && sequence.unknown_fields().empty() &&
      sequence.has_elem_type() && sequence.elem_type() >= 0 &&
      sequence.elem_type() < static_cast<int>(kElemTypes.size())) {
    const int values = sequence.tensor_values_size() + sequence.sparse_tensor_values_size() +
                       sequence.sequence_values_size() + sequence.map_values_size() + sequence.optional_values_size();
    // The two share field numbers, so the bytes cannot tell an optional from a one-element sequence.
    if (sequence.elem_type() == 0 && values == 0) {
      return fmt::format("an empty ONNX OptionalProto or SequenceProto named '{}'", sequence.name());
    }
    return fmt::format("an ONNX SequenceProto or OptionalProto named '{}' with {} {} value(s)", sequence.name(), values,
                       kElemTypes[static_cast<std::size_t>(sequence.elem_type())]);
  }
  onnx::MapProto map;
  if (map.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && map.unknown_fields().empty() &&
      map.has_values() && map.keys_size() + map.string_keys_size() > 0) {
    return fmt::format("an ONNX MapProto named '{}' with {} keys", map.name(),
                       map.keys_size() + map.string_keys_size());
  }
  return "";
}

Error RefuseOtherMessage(std::string_view name, std::string_view other) {
  return MakeError(
      ErrorKind::kInvalidArgument,
      fmt::format("{}: holds {}, not a TensorProto; ortkit reads tensor inputs and outputs only", name, other));
}

}  // namespace

Result<Tensor> TensorFromProto(const onnx::TensorProto& proto, std::string_view where) {
  const std::string label =
      proto.name().empty() ? std::string(where) : fmt::format("{} (tensor '{}')", where, proto.name().substr(0, 100));
  const int data_type = proto.data_type();
  const DataTypeInfo* info = FindDataType(static_cast<DataType>(data_type));
  if (info == nullptr || data_type == 0) {
    const auto* known = std::find_if(kUnsupportedTypes.begin(), kUnsupportedTypes.end(),
                                     [&](const auto& t) { return t.first == data_type; });
    const std::string type =
        known != kUnsupportedTypes.end() ? std::string(known->second) : fmt::format("data_type {}", data_type);
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: element type {} is not one ortkit handles{}", label, type,
                                 data_type == 0 ? " (UNDEFINED: the proto sets no data_type)" : ""));
  }
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: keeps its data in an external file ('{}'); ortkit reads TensorProtos that hold their "
                    "data inline: save it without external data (onnx.save_tensor / numpy_helper.from_array)",
                    label, ExternalLocation(proto)));
  }
  if (proto.has_segment()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: holds segment [{}, {}) of a larger tensor; ortkit reads whole tensors only",
                                 label, proto.segment().begin(), proto.segment().end()));
  }
  std::vector<std::int64_t> dims(proto.dims().begin(), proto.dims().end());
  auto count = ElementCountOf(dims);
  if (!count.ok()) return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: {}", label, count.error().message));
  const std::string described = fmt::format("dims {} {}", ShapeToString(dims), info->name);
  const FieldRule& rule =
      *std::find_if(kFieldRules.begin(), kFieldRules.end(), [&](const FieldRule& r) { return r.type == info->type; });
  // Sizes are checked against the data the proto holds before anything is allocated, so absurd
  // dims cannot make ortkit allocate more than the file's size.
  if (proto.has_raw_data() && info->type == DataType::kString) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: a string tensor with raw_data; ONNX keeps strings in string_data", label));
  }
  const auto elements = static_cast<std::uint64_t>(*count);
  const bool too_many = elements > std::numeric_limits<std::uint64_t>::max() / 8;
  const std::uint64_t need = too_many ? 0 : info->BytesFor(elements);
  if (proto.has_raw_data()) {
    const std::uint64_t held = proto.raw_data().size();
    if (too_many || need != held) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{}: {} need {} bytes but raw_data holds {}", label, described,
                                   too_many ? std::string("more than 2^64") : std::to_string(need), held));
    }
  } else if (const std::uint64_t values = info->bits > 0 ? need : elements;
             too_many || static_cast<std::uint64_t>(FieldSize(proto, rule.field)) != values) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: {} need {} values{} but {} holds {} ({})", label, described,
                                 too_many ? std::string("more than 2^61") : std::to_string(values),
                                 info->bits > 0 ? " (packed bytes)" : "", FieldName(rule.field),
                                 FieldSize(proto, rule.field), FilledFields(proto)));
  }
  auto allocated = Tensor::Allocate(info->type, dims);
  if (!allocated.ok())
    return MakeError(allocated.error().kind, fmt::format("{}: {}", label, allocated.error().message));
  Tensor tensor = std::move(allocated).value();
  if (proto.has_raw_data()) {
    if (tensor.byte_size() > 0) std::memcpy(tensor.data(), proto.raw_data().data(), tensor.byte_size());
    if (info->type == DataType::kBool) {
      for (auto& b : tensor.values<std::uint8_t>()) b = b != 0 ? 1 : 0;
    }
    return tensor;
  }
  ORTKIT_RETURN_IF_ERROR(CopyTypedField(proto, rule, tensor, label));
  return tensor;
}

Result<onnx::TensorProto> TensorToProto(const Tensor& tensor, const std::string& name) {
  if (FindDataType(tensor.type()) == nullptr) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("tensor '{}' has no element type to write", name));
  }
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(static_cast<int>(tensor.type()));
  for (std::int64_t d : tensor.shape()) proto.add_dims(d);
  if (tensor.is_string()) {
    for (const std::string& s : tensor.strings()) proto.add_string_data(s);
  } else {
    proto.set_raw_data(reinterpret_cast<const char*>(tensor.data()), tensor.byte_size());
  }
  return proto;
}

Result<NamedTensor> ParseTensorProto(std::string_view bytes, std::string_view name) {
  if (bytes.empty()) return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: the file is empty", name));
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: {} bytes; protobuf cannot parse messages over 2 GB (use .npy for large tensors)",
                                 name, bytes.size()));
  }
  onnx::TensorProto proto;
  if (proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    auto tensor = TensorFromProto(proto, name);
    if (tensor.ok()) return NamedTensor{proto.name(), std::move(tensor).value()};
    const std::string other = DescribeOtherMessage(bytes);
    if (!other.empty()) return RefuseOtherMessage(name, other);
    return tensor.error();
  }
  const std::string other = DescribeOtherMessage(bytes);
  if (!other.empty()) return RefuseOtherMessage(name, other);
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("{}: not a TensorProto: protobuf cannot parse its {} bytes (truncated, or not protobuf)",
                               name, bytes.size()));
}

Result<NamedTensor> ReadTensorProto(const std::filesystem::path& path) {
  const std::string name = path.string();
  ORTKIT_ASSIGN_OR_RETURN(const std::uint64_t size, RegularFileSize(path, "a .pb file"));
  if (size > static_cast<std::uint64_t>(INT_MAX)) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: {} bytes; protobuf cannot parse messages over 2 GB (use .npy for large tensors)", name, size));
  }
  // The happy path parses from the descriptor, so the file's bytes are never held twice.
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(ErrorKind::kIo, fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  onnx::TensorProto proto;
  const bool parsed = size > 0 && proto.ParseFromFileDescriptor(fd);
  ::close(fd);
  if (parsed) {
    auto tensor = TensorFromProto(proto, name);
    if (tensor.ok()) return NamedTensor{proto.name(), std::move(tensor).value()};
  }
  // Failures are explained from the bytes, which also recognises sequence and map protos.
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return MakeError(ErrorKind::kIo, fmt::format("{}: read failed", name));
  }
  return ParseTensorProto(bytes, name);
}

Status WriteTensorProto(const std::filesystem::path& path, const Tensor& tensor, const std::string& name) {
  const std::string file = path.string();
  auto proto = TensorToProto(tensor, name);
  if (!proto.ok()) return MakeError(proto.error().kind, fmt::format("{}: {}", file, proto.error().message));
  if (proto->ByteSizeLong() > static_cast<std::size_t>(INT_MAX)) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: tensor '{}' ({}) is too large for a .pb file: protobuf limits messages to 2 GB; write .npy",
                    file, name, tensor.Describe()));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return MakeError(ErrorKind::kIo, fmt::format("{}: cannot create: {}", file, std::strerror(errno)));
  if (!proto->SerializeToOstream(&out) || !out.flush()) {
    return MakeError(ErrorKind::kIo, fmt::format("{}: write failed: {}", file, std::strerror(errno)));
  }
  return OkStatus();
}

}  // namespace ortkit
