#pragma once
// Text from models made safe inside HTML and SVG: a name can hold any bytes, "<script>" and quotes among them.

#include <string>
#include <string_view>

namespace ortkit {

/// `text` for an HTML or XML text node or a quoted attribute value: &, <, >, " and ' as character
/// references, and the characters a terminal acts on (ESC and the other controls, which XML forbids, and the
/// bidirectional overrides, which reorder what a reader sees) written out as EscapeForTerminal writes them
/// ("\x1b"). Newlines and tabs are kept.
std::string EscapeHtml(std::string_view text);

}  // namespace ortkit
