#include "ortkit/core/markup_text.h"

#include "ortkit/core/terminal_text.h"

namespace ortkit {

std::string EscapeHtml(std::string_view text) {
  const std::string safe = SafeForTerminal(text, /*keep_colour=*/false);
  std::string out;
  out.reserve(safe.size() + safe.size() / 8);
  for (char c : safe) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace ortkit
