#include "ortkit/serve/request_values.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace ortkit::serve {
namespace {

template <typename T>
std::string RangeOf() {
  return fmt::format("{}..{}", std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
}

}  // namespace

Error ParameterNotAnInteger(std::string_view parameter) {
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("malformed request: parameter \"{}\" must be an integer{}", parameter,
                               parameter == "timeout" ? " (microseconds)" : ""));
}

Error ClassificationNotSupported(std::string_view output) {
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("output '{}': parameter \"classification\" (the classification extension) is not "
                               "supported: ask for the output itself and take its top classes in the client",
                               output));
}

Error OutputNamedTwice(std::string_view output) {
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("output '{}' is asked for twice: name each output once", output));
}

std::string DataTypeRange(DataType type) {
  switch (type) {
    case DataType::kInt8: return RangeOf<std::int8_t>();
    case DataType::kInt16: return RangeOf<std::int16_t>();
    case DataType::kInt32: return RangeOf<std::int32_t>();
    case DataType::kInt64: return RangeOf<std::int64_t>();
    case DataType::kUInt8: return RangeOf<std::uint8_t>();
    case DataType::kUInt16: return RangeOf<std::uint16_t>();
    case DataType::kUInt32: return RangeOf<std::uint32_t>();
    case DataType::kUInt64: return RangeOf<std::uint64_t>();
    case DataType::kFloat16: return "-65504..65504";
    case DataType::kBFloat16: return "-3.3895314e+38..3.3895314e+38";
    case DataType::kFloat32: return RangeOf<float>();
    case DataType::kFloat64: return RangeOf<double>();
    default: return "";  // not a numeric datatype
  }
}

Error ElementOutOfRange(std::string_view input, std::size_t element, std::string_view value, DataType type) {
  const DataTypeInfo* info = FindDataType(type);
  return MakeError(
      ErrorKind::kInvalidArgument,
      fmt::format("input '{}': element {} is {}, outside {}'s range {}", input, element, value,
                  info != nullptr ? info->protocol : std::string_view("its datatype"), DataTypeRange(type)));
}

}  // namespace ortkit::serve
