#pragma once
// The range check of the server's options (CoreOptions, HttpOptions, GrpcOptions: their
// Validate()), one message for every one of them and whichever flag or caller set it.

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "ortkit/core/numbers.h"

namespace ortkit::serve {

/// kInvalidArgument unless least <= value <= most: "idle_timeout_s (--http-idle-timeout-s):
/// expected 1 to 86400, got 0" (`unit`, when given, follows the range: "bytes").
inline Status CheckOptionRange(std::string_view field, std::string_view flag, std::int64_t value, std::int64_t least,
                               std::int64_t most, std::string_view unit = "") {
  return CheckRange(fmt::format("{} ({})", field, flag), value, {least, most, unit});
}

}  // namespace ortkit::serve
