#include "ortkit/core/terminal_text.h"

#include <utility>

#include <fmt/format.h>

namespace ortkit {
namespace {

/// The length of the colour escape Style writes at `text[i]` ("\x1b[" digits "m"), or 0.
std::size_t OwnColourEscape(std::string_view text, std::size_t i) {
  static constexpr std::string_view kCodes[] = {"0", "1", "2", "31", "32", "33", "36"};
  for (std::string_view code : kCodes) {
    const std::size_t length = code.size() + 3;
    if (text.compare(i, length, fmt::format("\033[{}m", code)) == 0) return length;
  }
  return 0;
}

/// The escape for the character at `text[i]` when a terminal would act on it, with its length in
/// bytes; an empty escape for a character shown as it is.
std::pair<std::string, std::size_t> TerminalEscape(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x20) {
    switch (c) {
      case '\n': return {"\\n", 1};
      case '\r': return {"\\r", 1};
      case '\t': return {"\\t", 1};
      default: return {fmt::format("\\x{:02x}", c), 1};
    }
  }
  // What follows is written as \u escapes, which read the same inside a JSON string (JSON escapes C0).
  if (c == 0x7f) return {"\\u007f", 1};
  // C1 controls (U+0080 to U+009F; U+009B is a CSI to some terminals) are C2 80 to C2 9F in UTF-8.
  if (c == 0xC2 && i + 1 < text.size()) {
    const auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9F) return {fmt::format("\\u{:04x}", next), 2};
  }
  // U+202A to U+202E (embeddings and overrides) and U+2066 to U+2069 (isolates): E2 80 AA-AE, E2 81 A6-A9.
  if (c == 0xE2 && i + 2 < text.size()) {
    const auto b1 = static_cast<unsigned char>(text[i + 1]);
    const auto b2 = static_cast<unsigned char>(text[i + 2]);
    if ((b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9)) {
      const unsigned code_point = 0x2000u + ((b1 & 0x3Fu) << 6) + (b2 & 0x3Fu);
      return {fmt::format("\\u{:04x}", code_point), 3};
    }
  }
  return {"", 1};
}

std::string Escape(std::string_view text, bool keep_layout, bool colour) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (keep_layout && (text[i] == '\n' || text[i] == '\t')) {
      out += text[i++];
      continue;
    }
    if (colour && text[i] == '\033') {
      if (const std::size_t length = OwnColourEscape(text, i)) {
        out.append(text.substr(i, length));
        i += length;
        continue;
      }
    }
    auto [escape, length] = TerminalEscape(text, i);
    if (escape.empty())
      out.append(text.substr(i, length));
    else
      out += escape;
    i += length;
  }
  return out;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text, bool keep_colour) { return Escape(text, false, keep_colour); }

std::string SafeForTerminal(std::string_view rendered, bool colour) { return Escape(rendered, true, colour); }

}  // namespace ortkit
