#pragma once
// Numbers read from text someone else wrote (a flag, a config file, a request): the one parser for
// all of them. Decimal only, the whole text, within a range the caller states; NaN and infinities
// never; a value past the range is refused, never wrapped, clamped or saturated.

#include <cstdint>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit {

/// An inclusive range, and the unit a message names after it ("1 to 3600 s").
template <typename T>
struct NumberRange {
  T least;
  T most;
  std::string_view unit = {};
};

/// kInvalidArgument unless `value` lies in `range`: "--iterations: expected 1 to 10000000 runs, got 0".
Status CheckRange(std::string_view what, std::int64_t value, NumberRange<std::int64_t> range);

/// The same for a real number; NaN and infinities are outside every range.
Status CheckRange(std::string_view what, double value, NumberRange<double> range);

/// A whole number in `range`, e.g. "128" or "+128". `what` names it in the error: "--iterations 1e30:
/// expected a whole number from 1 to 10000000".
Result<std::int64_t> ParseWholeNumber(std::string_view text, std::string_view what, NumberRange<std::int64_t> range);

/// A finite real number in `range`, e.g. "0.5", "1e-3".
Result<double> ParseRealNumber(std::string_view text, std::string_view what, NumberRange<double> range);

/// A duration in seconds: a number with a unit of us, ms, s, m or h ("500ms", "1.5s"), or a bare number
/// in `bare_unit_s` seconds; finite and in `range` (seconds).
Result<double> ParseDuration(std::string_view text, std::string_view what, NumberRange<double> range,
                             double bare_unit_s = 1);

/// A size in bytes: a number with a unit of B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers
/// of 1024), or bare bytes ("8GiB", "512MB", "1.5GB"); a whole number of bytes in `range`.
Result<std::uint64_t> ParseByteSize(std::string_view text, std::string_view what, NumberRange<double> range);

/// A comma-separated list of whole numbers ("1,8,32"), each in `range`; at most `most_items` of them.
Result<std::vector<std::int64_t>> ParseWholeNumberList(std::string_view text, std::string_view what,
                                                       NumberRange<std::int64_t> range, std::size_t most_items = 1024);

/// A comma-separated list of finite real numbers, each in `range`.
Result<std::vector<double>> ParseRealNumberList(std::string_view text, std::string_view what, NumberRange<double> range,
                                                std::size_t most_items = 1024);

}  // namespace ortkit
