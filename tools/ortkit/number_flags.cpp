#include "number_flags.h"

#include <limits>
#include <string>

#include <fmt/format.h>

#include "ortkit/core/numbers.h"

namespace ortkit::cli {
namespace {

template <typename Parsed>
std::string Message(const Parsed& parsed) {
  return parsed.ok() ? "" : parsed.error().message;
}

}  // namespace

CLI::Validator WholeNumberIn(std::int64_t least, std::int64_t most, std::string_view unit) {
  return CLI::Validator(
      [least, most, unit = std::string(unit)](std::string& value) {
        return Message(ParseWholeNumber(value, "", {least, most, unit}));
      },
      fmt::format("INT in [{}, {}]", least, most));
}

CLI::Validator RealNumberIn(double least, double most, std::string_view unit) {
  return CLI::Validator(
      [least, most, unit = std::string(unit)](std::string& value) {
        return Message(ParseRealNumber(value, "", {least, most, unit}));
      },
      fmt::format("FLOAT in [{:g}, {:g}]", least, most));
}

namespace {

/// Any number of the option's kind, said without the limits of its type: "'1e30': expected a whole number
/// (decimal digits, at most 9223372036854775807)".
CLI::Validator AnyNumber(bool whole, bool negative) {
  return CLI::Validator(
      [whole, negative](std::string& value) -> std::string {
        constexpr auto kHighest = std::numeric_limits<std::int64_t>::max();
        constexpr double kFinite = std::numeric_limits<double>::max();
        const bool ok = whole ? ParseWholeNumber(value, "", {negative ? -kHighest : 0, kHighest}).ok()
                              : ParseRealNumber(value, "", {-kFinite, kFinite}).ok();
        if (ok) return "";
        const std::string shown = value.size() > 40 ? value.substr(0, 40) + "..." : value;
        if (!whole) return fmt::format("'{}': expected a finite number (not NaN or infinite)", shown);
        return fmt::format("'{}': expected a whole number{} (decimal digits, at most {})", shown,
                           negative ? "" : " from 0", kHighest);
      },
      "");
}

}  // namespace

void CheckEveryNumber(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type == "INT") option->check(AnyNumber(true, true));
    if (type == "UINT") option->check(AnyNumber(true, false));
    if (type == "FLOAT") option->check(AnyNumber(false, true));
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) CheckEveryNumber(*command);
}

}  // namespace ortkit::cli
