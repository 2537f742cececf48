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
  // No numpy or Open Inference Protocol names: .npy files and v2 requests cannot carry these.
  {DataType::kFloat8E4M3FN,   "float8e4m3fn",   "", "", 1, true,  true},
  {DataType::kFloat8E4M3FNUZ, "float8e4m3fnuz", "", "", 1, true,  true},
  {DataType::kFloat8E5M2,     "float8e5m2",     "", "", 1, true,  true},
  {DataType::kFloat8E5M2FNUZ, "float8e5m2fnuz", "", "", 1, true,  true},
  {DataType::kFloat4E2M1,     "float4e2m1",     "", "", 1, true,  true,  4},
  {DataType::kUInt4,          "uint4",          "", "", 1, false, false, 4},
  {DataType::kInt4,           "int4",           "", "", 1, false, true,  4},
});
// clang-format on

template <typename Pred>
const DataTypeInfo* FindIf(Pred pred) {
  auto it = std::find_if(kTypes.begin(), kTypes.end(), pred);
  return it == kTypes.end() ? nullptr : &*it;
}

/// The layout of one of ONNX's small float types.
struct SmallFloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  enum class Nan { kIeee, kAllOnes, kNegativeZero, kNone } nan;  ///< how NaN is spelt (and whether inf exists)
};

const SmallFloatFormat& FormatOf(DataType type) {
  static constexpr SmallFloatFormat kE4M3FN{4, 3, 7, SmallFloatFormat::Nan::kAllOnes};
  static constexpr SmallFloatFormat kE4M3FNUZ{4, 3, 8, SmallFloatFormat::Nan::kNegativeZero};
  static constexpr SmallFloatFormat kE5M2{5, 2, 15, SmallFloatFormat::Nan::kIeee};
  static constexpr SmallFloatFormat kE5M2FNUZ{5, 2, 16, SmallFloatFormat::Nan::kNegativeZero};
  static constexpr SmallFloatFormat kE2M1{2, 1, 1, SmallFloatFormat::Nan::kNone};
  switch (type) {
    case DataType::kFloat8E4M3FNUZ: return kE4M3FNUZ;
    case DataType::kFloat8E5M2: return kE5M2;
    case DataType::kFloat8E5M2FNUZ: return kE5M2FNUZ;
    case DataType::kFloat4E2M1: return kE2M1;
    default: return kE4M3FN;
  }
}

/// Whether the magnitude bits `magnitude` (sign excluded) spell NaN or infinity in `f`.
bool IsSpecial(const SmallFloatFormat& f, std::uint32_t magnitude) {
  const std::uint32_t all_ones = (1u << (f.exponent_bits + f.mantissa_bits)) - 1;
  switch (f.nan) {
    case SmallFloatFormat::Nan::kIeee: return (magnitude >> f.mantissa_bits) == (1u << f.exponent_bits) - 1;
    case SmallFloatFormat::Nan::kAllOnes: return magnitude == all_ones;
    default: return false;
  }
}

double DecodeMagnitude(const SmallFloatFormat& f, std::uint32_t magnitude) {
  const std::uint32_t exponent = magnitude >> f.mantissa_bits;
  const std::uint32_t mantissa = magnitude & ((1u << f.mantissa_bits) - 1);
  if (exponent == 0) return std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  return std::ldexp(static_cast<double>((1u << f.mantissa_bits) + mantissa),
                    static_cast<int>(exponent) - f.bias - f.mantissa_bits);
}

/// Element `i` of a packed integer tensor, sign-extended for signed types.
std::int32_t PackedAt(const std::byte* data, const DataTypeInfo& info, std::int64_t i) {
  const auto bit = static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(info.bits);
  const std::uint32_t mask = (1u << info.bits) - 1;
  const auto raw = static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(data[bit / 8]) >> (bit % 8)) & mask;
  if (info.is_signed && !info.is_float && (raw & (1u << (info.bits - 1))) != 0) {
    return static_cast<std::int32_t>(raw) - (1 << info.bits);
  }
  return static_cast<std::int32_t>(raw);
}

void SetPacked(std::byte* data, const DataTypeInfo& info, std::int64_t i, std::uint32_t raw) {
  const auto bit = static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(info.bits);
  const std::uint32_t mask = (1u << info.bits) - 1;
  auto byte = std::to_integer<std::uint32_t>(data[bit / 8]);
  byte = (byte & ~(mask << (bit % 8))) | ((raw & mask) << (bit % 8));
  data[bit / 8] = static_cast<std::byte>(byte);
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
  if (name.empty()) return nullptr;
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
  if (static_cast<std::uint64_t>(count) > std::numeric_limits<std::uint64_t>::max() / 8) {
    return MakeError(ErrorKind::kInvalidArgument, "tensor too large: " + ShapeToString(t.shape_));
  }
  const std::uint64_t bytes = info->BytesFor(static_cast<std::uint64_t>(count));
  if (info->bits == 0 && count != 0 &&
      bytes / static_cast<std::uint64_t>(count) != static_cast<std::uint64_t>(info->size)) {
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
  return info == nullptr ? 0 : static_cast<std::size_t>(info->BytesFor(static_cast<std::uint64_t>(count_)));
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
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: return SmallFloatToFloat(type_, reinterpret_cast<const std::uint8_t*>(p)[i]);
    case DataType::kFloat4E2M1: {
      const DataTypeInfo& info = *FindDataType(type_);
      return SmallFloatToFloat(type_, static_cast<std::uint8_t>(PackedAt(p, info, i)));
    }
    case DataType::kUInt4:
    case DataType::kInt4: return PackedAt(p, *FindDataType(type_), i);
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
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      reinterpret_cast<std::uint8_t*>(p)[i] = FloatToSmallFloat(type_, static_cast<float>(v));
      break;
    case DataType::kFloat4E2M1:
      SetPacked(p, *FindDataType(type_), i, FloatToSmallFloat(type_, static_cast<float>(v)));
      break;
    case DataType::kUInt4:
    case DataType::kInt4: {
      const DataTypeInfo& info = *FindDataType(type_);
      const double lo = info.is_signed ? -(1 << (info.bits - 1)) : 0;
      const double hi = info.is_signed ? (1 << (info.bits - 1)) - 1 : (1 << info.bits) - 1;
      const double clamped = std::isnan(v) ? 0 : std::clamp(std::nearbyint(v), lo, hi);
      SetPacked(p, info, i, static_cast<std::uint32_t>(static_cast<std::int32_t>(clamped)));
      break;
    }
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
  } else if (FindDataType(type_)->bits > 0) {  // packed: rows need not start on a byte
    for (std::int64_t i = 0; i < out.count_; ++i) out.SetFromDouble(i, AsDouble(begin * row + i));
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

float SmallFloatToFloat(DataType type, std::uint8_t bits) {
  const SmallFloatFormat& f = FormatOf(type);
  const std::uint32_t sign = 1u << (f.exponent_bits + f.mantissa_bits);
  const std::uint32_t magnitude = bits & (sign - 1);
  const bool negative = (bits & sign) != 0;
  if (f.nan == SmallFloatFormat::Nan::kNegativeZero && negative && magnitude == 0) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  if (IsSpecial(f, magnitude)) {
    const bool infinite = f.nan == SmallFloatFormat::Nan::kIeee && (magnitude & ((1u << f.mantissa_bits) - 1)) == 0;
    if (!infinite) return std::numeric_limits<float>::quiet_NaN();
    return negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  const double value = DecodeMagnitude(f, magnitude);
  return static_cast<float>(negative ? -value : value);
}

std::uint8_t FloatToSmallFloat(DataType type, float value) {
  const SmallFloatFormat& f = FormatOf(type);
  const std::uint32_t sign = 1u << (f.exponent_bits + f.mantissa_bits);
  if (std::isnan(value)) {
    switch (f.nan) {
      case SmallFloatFormat::Nan::kIeee:  // exponent and mantissa all ones
      case SmallFloatFormat::Nan::kAllOnes: return static_cast<std::uint8_t>(sign - 1);
      case SmallFloatFormat::Nan::kNegativeZero: return static_cast<std::uint8_t>(sign);
      case SmallFloatFormat::Nan::kNone: return 0;
    }
  }
  // The largest finite magnitude: the codes below it are finite and increase with their value.
  std::uint32_t largest = sign - 1;
  while (IsSpecial(f, largest)) --largest;
  const double magnitude = std::fabs(static_cast<double>(value));
  std::uint32_t code = largest;  // saturation, infinity included
  if (magnitude < DecodeMagnitude(f, largest)) {
    std::uint32_t lo = 0;
    std::uint32_t hi = largest;  // DecodeMagnitude(lo) <= magnitude < DecodeMagnitude(hi)
    while (hi - lo > 1) {
      const std::uint32_t mid = (lo + hi) / 2;
      (DecodeMagnitude(f, mid) <= magnitude ? lo : hi) = mid;
    }
    const double below = magnitude - DecodeMagnitude(f, lo);
    const double above = DecodeMagnitude(f, hi) - magnitude;
    code = below < above ? lo : above < below ? hi : ((lo & 1u) == 0 ? lo : hi);  // ties to even
  }
  const bool negative = std::signbit(value);
  if (code == 0 && f.nan == SmallFloatFormat::Nan::kNegativeZero) return 0;  // no negative zero there
  return static_cast<std::uint8_t>(negative ? code | sign : code);
}

}  // namespace ortkit
