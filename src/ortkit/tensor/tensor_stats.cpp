#include "ortkit/tensor/tensor_stats.h"

#include <algorithm>
#include <cmath>

namespace ortkit {

TensorStats ComputeStats(const Tensor& tensor) {
  TensorStats s;
  s.count = tensor.element_count();
  if (tensor.is_string()) return s;
  double sum = 0;
  bool first = true;
  for (std::int64_t i = 0; i < s.count; ++i) {
    const double v = tensor.AsDouble(i);
    if (std::isnan(v)) {
      ++s.nan;
    } else if (std::isinf(v)) {
      ++s.inf;
    } else {
      ++s.finite;
      sum += v;
      s.min = first ? v : std::min(s.min, v);
      s.max = first ? v : std::max(s.max, v);
      first = false;
    }
  }
  s.mean = s.finite > 0 ? sum / static_cast<double>(s.finite) : 0;
  return s;
}

}  // namespace ortkit
