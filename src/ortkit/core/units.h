#pragma once
// Quantities written for people.

#include <cstdint>
#include <string>

namespace ortkit {

/// 1536 -> "1.5 KiB"; below 1 KiB -> "123 B".
std::string HumanBytes(std::uint64_t bytes);

}  // namespace ortkit
