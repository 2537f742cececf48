#include "ortkit/perf/lengths.h"

#include <limits>

#include <fmt/format.h>

#include "ortkit/core/numbers.h"

namespace ortkit::perf {
namespace {

constexpr std::int64_t kMaxDistinctLengths = 4096;

/// A whole number of any size (the range is checked on the distribution): the one number parser's.
bool ParseInt(std::string_view text, std::int64_t* value) {
  auto parsed = ParseWholeNumber(text, "--lengths",
                                 {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
  if (parsed.ok()) *value = *parsed;
  return parsed.ok();
}

}  // namespace

std::vector<std::int64_t> LengthDistribution::Values() const {
  std::vector<std::int64_t> values;
  for (std::int64_t v = min; v <= max; ++v) values.push_back(v);
  return values;
}

std::int64_t LengthDistribution::Draw(std::mt19937_64& rng) const {
  return std::uniform_int_distribution<std::int64_t>(min, max)(rng);
}

Result<LengthDistribution> ParseLengths(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--lengths '{}': {}; expected uniform:MIN:MAX or fixed:N, e.g. uniform:4:128", text, why));
  };
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  for (auto colon = rest.find(':'); colon != std::string_view::npos; colon = rest.find(':')) {
    parts.push_back(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
  }
  parts.push_back(rest);

  LengthDistribution lengths;
  if (parts.size() == 3 && parts[0] == "uniform") {
    if (!ParseInt(parts[1], &lengths.min) || !ParseInt(parts[2], &lengths.max))
      return bad("MIN and MAX must be integers");
  } else if (parts.size() == 2 && parts[0] == "fixed") {
    if (!ParseInt(parts[1], &lengths.min)) return bad("N must be an integer");
    lengths.max = lengths.min;
  } else if (parts.size() == 1 && ParseInt(parts[0], &lengths.min)) {
    lengths.max = lengths.min;
  } else {
    return bad("unknown form");
  }
  if (lengths.min < 1) return bad(fmt::format("sizes must be at least 1, got {}", lengths.min));
  if (lengths.max < lengths.min) return bad(fmt::format("MAX {} is below MIN {}", lengths.max, lengths.min));
  if (lengths.max - lengths.min + 1 > kMaxDistinctLengths) {
    return bad(fmt::format("{} distinct sizes; at most {}", lengths.max - lengths.min + 1, kMaxDistinctLengths));
  }
  return lengths;
}

}  // namespace ortkit::perf
