#include "ortkit/core/numbers.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace ortkit {
namespace {

/// The text as quoted in a message: at most 40 characters of it, so that a megabyte of digits
/// cannot fill the terminal.
std::string Quoted(std::string_view text) {
  constexpr std::size_t kMost = 40;
  if (text.size() <= kMost) return fmt::format("'{}'", text);
  return fmt::format("'{}...' ({} characters)", text.substr(0, kMost), text.size());
}

std::string Unit(std::string_view unit) { return unit.empty() ? "" : fmt::format(" {}", unit); }

std::string_view WithoutPlus(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  return text;
}

Error OutOfRange(std::string_view what, std::string_view text, const std::string& expected) {
  const std::string subject = what.empty() ? Quoted(text) : fmt::format("{} {}", what, Quoted(text));
  return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: expected {}", subject, expected));
}

std::string DescribeWhole(NumberRange<std::int64_t> range) {
  return fmt::format("a whole number from {} to {}{}", range.least, range.most, Unit(range.unit));
}

std::string DescribeReal(NumberRange<double> range) {
  return fmt::format("a number from {:g} to {:g}{}", range.least, range.most, Unit(range.unit));
}

template <typename T, typename Parse>
Result<std::vector<T>> ParseList(std::string_view text, std::string_view what, std::size_t most_items, Parse parse) {
  std::vector<T> values;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (values.size() == most_items) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: at most {} values", what, most_items));
    }
    ORTKIT_ASSIGN_OR_RETURN(T value, parse(item));
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return values;
}

}  // namespace

Status CheckRange(std::string_view what, std::int64_t value, NumberRange<std::int64_t> range) {
  if (value >= range.least && value <= range.most) return OkStatus();
  return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: expected {} to {}{}, got {}", what, range.least,
                                                            range.most, Unit(range.unit), value));
}

Status CheckRange(std::string_view what, double value, NumberRange<double> range) {
  if (std::isfinite(value) && value >= range.least && value <= range.most) return OkStatus();
  return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: expected {:g} to {:g}{}, got {:g}", what, range.least,
                                                            range.most, Unit(range.unit), value));
}

Result<std::int64_t> ParseWholeNumber(std::string_view text, std::string_view what, NumberRange<std::int64_t> range) {
  const std::string_view digits = WithoutPlus(text);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || end != digits.data() + digits.size()) return OutOfRange(what, text, DescribeWhole(range));
  if (ec == std::errc::result_out_of_range || value < range.least || value > range.most) {
    return OutOfRange(what, text, DescribeWhole(range));
  }
  return value;
}

Result<double> ParseRealNumber(std::string_view text, std::string_view what, NumberRange<double> range) {
  const std::string_view digits = WithoutPlus(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || end != digits.data() + digits.size() || ec != std::errc() || !std::isfinite(value) ||
      value < range.least || value > range.most) {
    return OutOfRange(what, text, DescribeReal(range));
  }
  return value;
}

Result<double> ParseDuration(std::string_view text, std::string_view what, NumberRange<double> range,
                             double bare_unit_s) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  std::string_view number = text;
  double unit = bare_unit_s;
  for (const auto& [suffix, seconds] : kUnits) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      number = text.substr(0, text.size() - suffix.size());
      unit = seconds;
      break;
    }
  }
  const std::string expected =
      fmt::format("a duration from {:g} s to {:g} s, e.g. 500ms, 10s or 2m", range.least, range.most);
  auto value = ParseRealNumber(number, what, {0, std::numeric_limits<double>::max()});
  if (!value.ok() || *value * unit < range.least || *value * unit > range.most) {
    return OutOfRange(what, text, expected);
  }
  return *value * unit;
}

Result<std::uint64_t> ParseByteSize(std::string_view text, std::string_view what, NumberRange<double> range) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
      {"B", 1}};
  std::string_view number = text;
  double unit = 1;
  for (const auto& [suffix, bytes] : kUnits) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      number = text.substr(0, text.size() - suffix.size());
      unit = bytes;
      break;
    }
  }
  const std::string expected =
      fmt::format("a size from {:g} to {:g} bytes, e.g. 512MiB, 8GiB or 2GB", range.least, range.most);
  auto value = ParseRealNumber(number, what, {0, std::numeric_limits<double>::max()});
  if (!value.ok() || *value * unit < range.least || *value * unit > range.most) return OutOfRange(what, text, expected);
  return static_cast<std::uint64_t>(*value * unit);
}

Result<std::vector<std::int64_t>> ParseWholeNumberList(std::string_view text, std::string_view what,
                                                       NumberRange<std::int64_t> range, std::size_t most_items) {
  return ParseList<std::int64_t>(text, what, most_items,
                                 [&](std::string_view item) { return ParseWholeNumber(item, what, range); });
}

Result<std::vector<double>> ParseRealNumberList(std::string_view text, std::string_view what, NumberRange<double> range,
                                                std::size_t most_items) {
  return ParseList<double>(text, what, most_items,
                           [&](std::string_view item) { return ParseRealNumber(item, what, range); });
}

}  // namespace ortkit
