#pragma once
// Tensors in memory: a dense, C-ordered array of one element type, or an array of strings.
// The element buffer is 64-byte aligned and owned by the tensor; copies are explicit (Clone).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit {

/// Element types. The numeric values are ONNX's TensorProto.DataType (and so ONNX Runtime's
/// ONNXTensorElementDataType), which lets files and the runtime share them without tables. Past 23
/// the two part ways (ONNX 25/26 are uint2/int2, which ONNX Runtime 1.29 numbers 24/25 in its
/// header and mixes up at run time): ortkit does not handle int2, uint2 and float8e8m0.
enum class DataType : int {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,  ///< packed two to a byte, the first element in the low nibble (as ONNX and ONNX Runtime store them)
  kInt4 = 22,
  kFloat4E2M1 = 23,
};

struct DataTypeInfo {
  DataType type;
  std::string_view name;         ///< "float32": numpy's name, used in every output
  std::string_view protocol;     ///< "FP32": the Open Inference Protocol's name
  std::string_view numpy_descr;  ///< "<f4": .npy header descr (empty for strings)
  int size;                      ///< bytes per element; 0 for strings; 1 for packed types (see bits)
  bool is_float;
  bool is_signed;
  int bits = 0;  ///< 4 for types packed two to a byte; 0 otherwise

  /// Bytes that `count` elements take (packed types round up to whole bytes).
  std::uint64_t BytesFor(std::uint64_t count) const {
    return bits > 0 ? (count * static_cast<std::uint64_t>(bits) + 7) / 8 : count * static_cast<std::uint64_t>(size);
  }
};

/// nullptr for types ortkit does not handle (complex, float8e8m0, 6-bit floats).
const DataTypeInfo* FindDataType(DataType type);
const DataTypeInfo* FindDataTypeByName(std::string_view name);      ///< "float32", also "float", "int"
const DataTypeInfo* FindDataTypeByNumpy(std::string_view descr);    ///< "<f4", "|b1", "<i8"
const DataTypeInfo* FindDataTypeByProtocol(std::string_view name);  ///< "FP32"
std::string_view DataTypeName(DataType type);                       ///< "float32", or "type N"
std::vector<const DataTypeInfo*> AllDataTypes();

/// Number of elements for `shape`; fails on negative dimensions or overflow.
Result<std::int64_t> ElementCountOf(std::span<const std::int64_t> shape);

/// "[2, 3, 224, 224]" (a scalar is "[]").
std::string ShapeToString(std::span<const std::int64_t> shape);

class Tensor {
 public:
  Tensor() = default;
  /// Allocates an uninitialised tensor. Fails for bad shapes or unsupported types.
  static Result<Tensor> Allocate(DataType type, std::vector<std::int64_t> shape);
  /// Allocates and zero-fills (empty strings for kString).
  static Result<Tensor> Zeros(DataType type, std::vector<std::int64_t> shape);
  /// Copies `values` into a new tensor of matching element type.
  template <typename T>
  static Result<Tensor> FromVector(const std::vector<std::int64_t>& shape, const std::vector<T>& values);
  static Result<Tensor> FromStrings(std::vector<std::int64_t> shape, std::vector<std::string> values);
  /// A tensor over bytes it does not own: `data` (an aliasing shared_ptr) keeps their owner alive,
  /// e.g. a runtime's output answered without a copy. `data` must hold the shape's elements of
  /// `type` (not kString). Fails for bad shapes or unsupported types.
  static Result<Tensor> View(DataType type, std::vector<std::int64_t> shape, std::shared_ptr<std::byte> data);

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor Clone() const;

  DataType type() const { return type_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::int64_t element_count() const { return count_; }
  std::size_t byte_size() const;  ///< 0 for strings
  bool is_string() const { return type_ == DataType::kString; }
  bool is_view() const { return view_ != nullptr; }  ///< made by View(): its bytes belong to another owner

  std::byte* data() { return view_ ? view_.get() : buffer_.get(); }
  const std::byte* data() const { return view_ ? view_.get() : buffer_.get(); }
  template <typename T>
  std::span<T> values() {
    return {reinterpret_cast<T*>(data()), static_cast<std::size_t>(count_)};
  }
  template <typename T>
  std::span<const T> values() const {
    return {reinterpret_cast<const T*>(data()), static_cast<std::size_t>(count_)};
  }
  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

  /// Element `i` converted to double (float16/bfloat16 decoded; bool as 0/1). Not for strings.
  double AsDouble(std::int64_t i) const;
  /// Stores `value` at `i`, converted to the element type (rounded for integers).
  void SetFromDouble(std::int64_t i, double value);

  /// Rows [begin, end) along the first axis, copied. Fails for scalars or a bad range.
  Result<Tensor> SliceRows(std::int64_t begin, std::int64_t end) const;
  /// Same data, new shape with the same element count.
  Status Reshape(std::vector<std::int64_t> shape);

  /// "float32[2, 3]"
  std::string Describe() const;

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const;
  };
  DataType type_ = DataType::kUndefined;
  std::vector<std::int64_t> shape_;
  std::int64_t count_ = 0;
  std::unique_ptr<std::byte[], AlignedFree> buffer_;
  std::shared_ptr<std::byte> view_;  // instead of buffer_: View()'s bytes
  std::vector<std::string> strings_;
};

/// A tensor with the graph input or output name it belongs to.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// IEEE half and bfloat16 conversions.
float HalfToFloat(std::uint16_t h);
std::uint16_t FloatToHalf(float f);
float BFloat16ToFloat(std::uint16_t b);
std::uint16_t FloatToBFloat16(float f);

/// The 8-bit and 4-bit floats of ONNX (float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz,
/// float4e2m1): decoding, and encoding with round-to-nearest-even and saturation to the largest
/// finite value (ONNX's Cast with saturate=1). `type` must be one of them.
float SmallFloatToFloat(DataType type, std::uint8_t bits);
std::uint8_t FloatToSmallFloat(DataType type, float value);

/// The DataType for a C++ element type.
template <typename T>
constexpr DataType DataTypeOf();
template <>
constexpr DataType DataTypeOf<float>() {
  return DataType::kFloat32;
}
template <>
constexpr DataType DataTypeOf<double>() {
  return DataType::kFloat64;
}
template <>
constexpr DataType DataTypeOf<std::int8_t>() {
  return DataType::kInt8;
}
template <>
constexpr DataType DataTypeOf<std::int16_t>() {
  return DataType::kInt16;
}
template <>
constexpr DataType DataTypeOf<std::int32_t>() {
  return DataType::kInt32;
}
template <>
constexpr DataType DataTypeOf<std::int64_t>() {
  return DataType::kInt64;
}
template <>
constexpr DataType DataTypeOf<std::uint8_t>() {
  return DataType::kUInt8;
}
template <>
constexpr DataType DataTypeOf<std::uint16_t>() {
  return DataType::kUInt16;
}
template <>
constexpr DataType DataTypeOf<std::uint32_t>() {
  return DataType::kUInt32;
}
template <>
constexpr DataType DataTypeOf<std::uint64_t>() {
  return DataType::kUInt64;
}
template <>
constexpr DataType DataTypeOf<bool>() {
  return DataType::kBool;
}

template <typename T>
Result<Tensor> Tensor::FromVector(const std::vector<std::int64_t>& shape, const std::vector<T>& values) {
  ORTKIT_ASSIGN_OR_RETURN(Tensor t, Allocate(DataTypeOf<T>(), shape));
  if (static_cast<std::int64_t>(values.size()) != t.element_count()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "FromVector: " + std::to_string(values.size()) + " values for shape " + ShapeToString(t.shape()));
  }
  auto out = t.values<T>();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace ortkit
