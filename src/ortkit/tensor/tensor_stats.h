#pragma once
// Summary statistics of a tensor's values, for run reports.

#include <cstdint>

#include "ortkit/tensor/tensor.h"

namespace ortkit {

struct TensorStats {
  std::int64_t count = 0;   ///< elements
  std::int64_t finite = 0;  ///< elements that are neither NaN nor Inf
  std::int64_t nan = 0;
  std::int64_t inf = 0;
  double min = 0;  ///< over finite elements; 0 when none
  double max = 0;
  double mean = 0;
};

/// Statistics over every element (strings: count only).
TensorStats ComputeStats(const Tensor& tensor);

}  // namespace ortkit
