#pragma once
// Text from models, files and requests, made safe to show on a terminal: a name can hold any bytes,
// and a terminal acts on some of them (clear the screen, move the cursor, set the title, make a
// hyperlink, ring the bell, overwrite a line, reorder what follows).

#include <string>
#include <string_view>

namespace ortkit {

/// `text` with every character a terminal acts on written out instead: C0 controls as "\x1b", "\r",
/// "\n" or "\t"; DEL, the C1 controls and the bidirectional embeddings, overrides and isolates as
/// "\u007f", "\u009b" or "\u202e" (JSON reads those the same, so JSON text stays exact through it).
/// With `keep_colour`, the colour escapes ortkit's own styles write ("\x1b[1m", "\x1b[0m", "\x1b[31m",
/// ...) are kept: a table cell that ortkit coloured stays coloured, whatever else it holds.
std::string EscapeForTerminal(std::string_view text, bool keep_colour = false);

/// Rendered text made safe for a terminal: as EscapeForTerminal, but newlines and tabs are kept (the
/// layout is the renderer's). Every text a command prints goes through this.
std::string SafeForTerminal(std::string_view rendered, bool keep_colour);

}  // namespace ortkit
