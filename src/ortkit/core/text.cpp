#include "ortkit/core/text.h"

#include <algorithm>
#include <cctype>

namespace ortkit {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool NameHas(std::string_view text, std::initializer_list<std::string_view> parts) {
  const std::string lower = Lower(text);
  return std::any_of(parts.begin(), parts.end(),
                     [&](std::string_view part) { return lower.find(part) != std::string::npos; });
}

}  // namespace ortkit
