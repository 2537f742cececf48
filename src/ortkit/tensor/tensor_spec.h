#pragma once
// What a model says a tensor is: its name, element type and dimensions, fixed or symbolic, as a
// session or the file declares them; and the check of a tensor against it.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// One dimension as a session declares it: a fixed size, or symbolic (named or not).
struct DimSpec {
  std::int64_t value = -1;  ///< >= 0 when fixed
  std::string symbol;       ///< the dim_param name when symbolic; empty when unnamed

  bool fixed() const { return value >= 0; }
  /// "4", "batch" or "?"
  std::string ToString() const;
};

/// A session input or output.
struct TensorSpec {
  std::string name;
  bool is_tensor = true;  ///< false for sequences, maps, optionals
  DataType type = DataType::kUndefined;
  std::vector<DimSpec> dims;

  /// "float32[batch, 3, 224, 224]"
  std::string Describe() const;
};

/// Whether a tensor of `type` and `shape` fits `spec` (element type, rank, fixed dimensions);
/// kInvalidArgument naming `what` ("input 'x'") otherwise. Always OK for non-tensor specs.
Status CheckAgainstSpec(std::string_view what, DataType type, std::span<const std::int64_t> shape,
                        const TensorSpec& spec);

/// A HeaderCheck for tensor files that feed the model: a tensor named after an input must fit it
/// (CheckAgainstSpec); other names pass, for the caller to place or refuse. Keeps a reference to
/// `inputs`, which must outlive it.
HeaderCheck InputHeaderCheck(const std::vector<TensorSpec>& inputs);

}  // namespace ortkit
