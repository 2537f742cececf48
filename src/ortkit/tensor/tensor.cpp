#include "ortkit/tensor/tensor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ortkit {
namespace {

// clang-format off
constexpr std::array kTypes = std::to_array<DataTypeInfo>({
  {DataType::kFloat32,  "float32",  "FP32",   "<f4", 4, true,  true},
  {DataType::kFloat16,  "float16",  "FP16",   "<f2", 2, true,  true},
  {DataType::kBFloat16, "bfloat16", "BF16",   "",    2, true,  true},
  {DataType::kFloat64,  "float64",  "FP64",   "<f8", 8, true,  true},
  {DataType::kInt8,     "int8",     "INT8",   "|i1", 1, false, true},
  {DataType::kInt16,    "int16",    "INT16",  "<i2", 2, false, true},
  {DataType::kInt32,    "int32",    "INT32",  "<i4", 4, false, true},
  {DataType::kInt64,    "int64",    "INT64",  "<i8", 8, false, true},
  {DataType::kUInt8,    "uint8",    "UINT8",  "|u1", 1, false, false},
  {DataType::kUInt16,   "uint16",   "UINT16", "<u2", 2, false, false},
  {DataType::kUInt32,   "uint32",   "UINT32", "<u4", 4, false, false},
  {DataType::kUInt64,   "uint64",   "UINT64", "<u8", 8, false, false},
  {DataType::kBool,     "bool",     "BOOL",   "|b1", 1, false, false},
  {DataType::kString,   "string",   "BYTES",  "",    0, false, false},
});
// clang-format on

template <typename Pred>
const DataTypeInfo* FindIf(Pred pred) {
  auto it = std::find_if(kTypes.begin(), kTypes.end(), pred);
  return it == kTypes.end() ? nullptr : &*it;
}

}  // namespace

const DataTypeInfo* FindDataType(DataType type) {
  return FindIf([&](const DataTypeInfo& i) { return i.type == type; });
}

const DataTypeInfo* FindDataTypeByName(std::string_view name) {
  if (name == "float") name = "float32";
  if (name == "double") name = "float64";
  if (name == "half") name = "float16";
  if (name == "int" || name == "long") name = "int64";
  return FindIf([&](const DataTypeInfo& i) { return i.name == name; });
}

const DataTypeInfo* FindDataTypeByNumpy(std::string_view descr) {
  // numpy writes '|' for one-byte types and '<' for little-endian; '=' means native (little here).
  if (descr.size() == 3 && (descr[0] == '=' || descr[0] == '<' || descr[0] == '|')) {
    return FindIf(
        [&](const DataTypeInfo& i) { return !i.numpy_descr.empty() && i.numpy_descr.substr(1) == descr.substr(1); });
  }
  return nullptr;
}

const DataTypeInfo* FindDataTypeByProtocol(std::string_view name) {
  return FindIf([&](const DataTypeInfo& i) { return i.protocol == name; });
}

std::string_view DataTypeName(DataType type) {
  const DataTypeInfo* info = FindDataType(type);
  if (info != nullptr) return info->name;
  static thread_local std::string fallback;
  fallback = "type " + std::to_string(static_cast<int>(type));
  return fallback;
}

std::vector<const DataTypeInfo*> AllDataTypes() {
  std::vector<const DataTypeInfo*> out;
  for (const auto& t : kTypes) out.push_back(&t);
  return out;
}

Result<std::int64_t> ElementCountOf(std::span<const std::int64_t> shape) {
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0)
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("negative dimension {} in shape {}", d, ShapeToString(shape)));
    if (d != 0 && count > std::numeric_limits<std::int64_t>::max() / d) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("shape {} has too many elements", ShapeToString(shape)));
    }
    count *= d;
  }
  return count;
}

std::string ShapeToString(std::span<const std::int64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

void Tensor::AlignedFree::operator()(std::byte* p) const { std::free(p); }

Result<Tensor> Tensor::Allocate(DataType type, std::vector<std::int64_t> shape) {
  const DataTypeInfo* info = FindDataType(type);
  if (info == nullptr) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("element type {} is not supported", static_cast<int>(type)));
  }
  ORTKIT_ASSIGN_OR_RETURN(std::int64_t count, ElementCountOf(shape));
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.count_ = count;
  if (type == DataType::kString) {
    t.strings_.resize(static_cast<std::size_t>(count));
    return t;
  }
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(info->size);
  if (count != 0 && bytes / static_cast<std::uint64_t>(count) != static_cast<std::uint64_t>(info->size)) {
    return MakeError(ErrorKind::kInvalidArgument, "tensor too large: " + ShapeToString(t.shape_));
  }
  const std::uint64_t rounded = std::max<std::uint64_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) {
    return MakeError(ErrorKind::kUnavailable, fmt::format("cannot allocate {} bytes for a {}{} tensor", bytes,
                                                          info->name, ShapeToString(t.shape_)));
  }
  t.buffer_.reset(static_cast<std::byte*>(p));
  return t;
}

Result<Tensor> Tensor::View(DataType type, std::vector<std::int64_t> shape, std::shared_ptr<std::byte> data) {
  if (type == DataType::kString || FindDataType(type) == nullptr) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("a view cannot hold elements of type {}", DataTypeName(type)));
  }
  ORTKIT_ASSIGN_OR_RETURN(std::int64_t count, ElementCountOf(shape));
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.count_ = count;
  t.view_ = std::move(data);
  return t;
}

Result<Tensor> Tensor::Zeros(DataType type, std::vector<std::int64_t> shape) {
  ORTKIT_ASSIGN_OR_RETURN(Tensor t, Allocate(type, std::move(shape)));
  if (!t.is_string() && t.byte_size() > 0) std::memset(t.data(), 0, t.byte_size());
  return t;
}

Result<Tensor> Tensor::FromStrings(std::vector<std::int64_t> shape, std::vector<std::string> values) {
  ORTKIT_ASSIGN_OR_RETURN(Tensor t, Allocate(DataType::kString, std::move(shape)));
  if (static_cast<std::int64_t>(values.size()) != t.element_count()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{} strings for shape {}", values.size(), ShapeToString(t.shape())));
  }
  t.strings_ = std::move(values);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor t = std::move(Allocate(type_, shape_).value());
  if (is_string())
    t.strings_ = strings_;
  else if (byte_size() > 0)
    std::memcpy(t.data(), data(), byte_size());
  return t;
}

std::size_t Tensor::byte_size() const {
  const DataTypeInfo* info = FindDataType(type_);
  return info == nullptr ? 0 : static_cast<std::size_t>(count_) * static_cast<std::size_t>(info->size);
}

double Tensor::AsDouble(std::int64_t i) const {
  const std::byte* p = data();
  switch (type_) {
    case DataType::kFloat32: return reinterpret_cast<const float*>(p)[i];
    case DataType::kFloat64: return reinterpret_cast<const double*>(p)[i];
    case DataType::kFloat16: return HalfToFloat(reinterpret_cast<const std::uint16_t*>(p)[i]);
    case DataType::kBFloat16: return BFloat16ToFloat(reinterpret_cast<const std::uint16_t*>(p)[i]);
    case DataType::kInt8: return reinterpret_cast<const std::int8_t*>(p)[i];
    case DataType::kInt16: return reinterpret_cast<const std::int16_t*>(p)[i];
    case DataType::kInt32: return reinterpret_cast<const std::int32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(reinterpret_cast<const std::int64_t*>(p)[i]);
    case DataType::kUInt8: return reinterpret_cast<const std::uint8_t*>(p)[i];
    case DataType::kUInt16: return reinterpret_cast<const std::uint16_t*>(p)[i];
    case DataType::kUInt32: return reinterpret_cast<const std::uint32_t*>(p)[i];
    case DataType::kUInt64: return static_cast<double>(reinterpret_cast<const std::uint64_t*>(p)[i]);
    case DataType::kBool: return reinterpret_cast<const std::uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

namespace {
template <typename T>
T Saturate(double v) {
  if (std::isnan(v)) return T{0};
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  return static_cast<T>(std::clamp(std::nearbyint(v), lo, hi));
}
}  // namespace

void Tensor::SetFromDouble(std::int64_t i, double v) {
  std::byte* p = data();
  switch (type_) {
    case DataType::kFloat32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DataType::kFloat64: reinterpret_cast<double*>(p)[i] = v; break;
    case DataType::kFloat16: reinterpret_cast<std::uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v)); break;
    case DataType::kBFloat16: reinterpret_cast<std::uint16_t*>(p)[i] = FloatToBFloat16(static_cast<float>(v)); break;
    case DataType::kInt8: reinterpret_cast<std::int8_t*>(p)[i] = Saturate<std::int8_t>(v); break;
    case DataType::kInt16: reinterpret_cast<std::int16_t*>(p)[i] = Saturate<std::int16_t>(v); break;
    case DataType::kInt32: reinterpret_cast<std::int32_t*>(p)[i] = Saturate<std::int32_t>(v); break;
    case DataType::kInt64: reinterpret_cast<std::int64_t*>(p)[i] = Saturate<std::int64_t>(v); break;
    case DataType::kUInt8: reinterpret_cast<std::uint8_t*>(p)[i] = Saturate<std::uint8_t>(v); break;
    case DataType::kUInt16: reinterpret_cast<std::uint16_t*>(p)[i] = Saturate<std::uint16_t>(v); break;
    case DataType::kUInt32: reinterpret_cast<std::uint32_t*>(p)[i] = Saturate<std::uint32_t>(v); break;
    case DataType::kUInt64: reinterpret_cast<std::uint64_t*>(p)[i] = Saturate<std::uint64_t>(v); break;
    case DataType::kBool: reinterpret_cast<std::uint8_t*>(p)[i] = v != 0 ? 1 : 0; break;
    default: break;
  }
}

Result<Tensor> Tensor::SliceRows(std::int64_t begin, std::int64_t end) const {
  if (shape_.empty()) return MakeError(ErrorKind::kInvalidArgument, "cannot slice rows of a scalar");
  if (begin < 0 || end > shape_[0] || begin > end) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("rows [{}, {}) out of range for {}", begin, end, Describe()));
  }
  std::vector<std::int64_t> shape = shape_;
  shape[0] = end - begin;
  ORTKIT_ASSIGN_OR_RETURN(Tensor out, Allocate(type_, std::move(shape)));
  const std::int64_t row = shape_[0] == 0 ? 0 : count_ / shape_[0];
  if (is_string()) {
    std::copy(strings_.begin() + begin * row, strings_.begin() + end * row, out.strings_.begin());
  } else {
    const std::size_t row_bytes = static_cast<std::size_t>(row) * static_cast<std::size_t>(FindDataType(type_)->size);
    if (out.byte_size() > 0) std::memcpy(out.data(), data() + begin * row_bytes, out.byte_size());
  }
  return out;
}

Status Tensor::Reshape(std::vector<std::int64_t> shape) {
  ORTKIT_ASSIGN_OR_RETURN(std::int64_t count, ElementCountOf(shape));
  if (count != count_) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("cannot reshape {} to {}: element counts differ", Describe(), ShapeToString(shape)));
  }
  shape_ = std::move(shape);
  return OkStatus();
}

std::string Tensor::Describe() const { return std::string(DataTypeName(type_)) + ShapeToString(shape_); }

float HalfToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1F;
  std::uint32_t mantissa = h & 0x3FF;
  std::uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3FF;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1F) {
    bits = sign | 0x7F800000 | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t FloatToHalf(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000) return sign | (abs > 0x7F800000 ? 0x7E00 : 0x7C00);  // NaN / Inf
  if (abs >= 0x477FF000) return sign | 0x7C00;                                // overflow to Inf
  if (abs < 0x38800000) {                                                     // subnormal or zero
    if (abs < 0x33000000) return sign;
    const std::uint32_t mantissa = (abs & 0x7FFFFF) | 0x800000;
    const int shift = 113 - static_cast<int>(abs >> 23) + 13;
    std::uint32_t value = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (value & 1))) ++value;
    return static_cast<std::uint16_t>(sign | value);
  }
  std::uint32_t value = ((abs >> 13) - (112u << 10));
  const std::uint32_t rest = abs & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (value & 1))) ++value;  // round half to even
  return static_cast<std::uint16_t>(sign | value);
}

float BFloat16ToFloat(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t FloatToBFloat16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return static_cast<std::uint16_t>((x >> 16) | 0x40);  // keep NaN a NaN
  const std::uint32_t rounding = 0x7FFF + ((x >> 16) & 1);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

}  // namespace ortkit
