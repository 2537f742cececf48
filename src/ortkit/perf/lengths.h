#pragma once
// The per-request size of one dynamic dimension (--lengths uniform:4:128): how perf sends
// requests of mixed sequence lengths to exercise the server's bucketing.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit::perf {

/// Sizes drawn uniformly from [min, max] (both inclusive); min == max is a fixed size.
struct LengthDistribution {
  std::int64_t min = 0;
  std::int64_t max = 0;

  /// Every size the distribution can draw, ascending.
  std::vector<std::int64_t> Values() const;
  std::int64_t Draw(std::mt19937_64& rng) const;
};

/// Parses "uniform:MIN:MAX" or "fixed:N" (also a bare "N"). Sizes are >= 1 and a range holds at
/// most 4096 sizes, because perf prepares one request per size before it starts sending.
Result<LengthDistribution> ParseLengths(const std::string& text);

}  // namespace ortkit::perf
