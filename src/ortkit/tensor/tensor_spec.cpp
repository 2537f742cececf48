#include "ortkit/tensor/tensor_spec.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ortkit {

std::string DimSpec::ToString() const {
  if (fixed()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

std::string TensorSpec::Describe() const {
  if (!is_tensor) return "(non-tensor)";
  std::vector<std::string> parts;
  for (const auto& d : dims) parts.push_back(d.ToString());
  return fmt::format("{}[{}]", DataTypeName(type), fmt::join(parts, ", "));
}

Status CheckAgainstSpec(std::string_view what, DataType type, std::span<const std::int64_t> shape,
                        const TensorSpec& spec) {
  if (!spec.is_tensor) return OkStatus();
  const std::string given = std::string(DataTypeName(type)) + ShapeToString(shape);
  if (spec.type != type) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{} is {} but the model expects {}", what, given, spec.Describe()));
  }
  if (spec.dims.size() != shape.size()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{} has rank {} ({}) but the model expects rank {} ({})", what, shape.size(), given,
                                 spec.dims.size(), spec.Describe()));
  }
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    if (spec.dims[d].fixed() && spec.dims[d].value != shape[d]) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{} dimension {} is {} but the model fixes it to {} (model expects {}, got {})",
                                   what, d, shape[d], spec.dims[d].value, spec.Describe(), given));
    }
  }
  return OkStatus();
}

HeaderCheck InputHeaderCheck(const std::vector<TensorSpec>& inputs) {
  return [&inputs](std::string_view name, DataType type, std::span<const std::int64_t> shape) -> Status {
    auto spec = std::find_if(inputs.begin(), inputs.end(), [&](const TensorSpec& s) { return s.name == name; });
    if (spec == inputs.end()) return OkStatus();  // not an input: the caller says what it is
    return CheckAgainstSpec(fmt::format("input '{}'", name), type, shape, *spec);
  };
}

}  // namespace ortkit
