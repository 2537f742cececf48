#pragma once
// Data for a page's script, carried inside the page itself.

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ortkit {

/// `json` as the body of a <script type="application/json"> element: compact, ASCII only (invalid UTF-8
/// replaced), and every <, > and & as a \u escape, so that no string in it can close the element.
std::string JsonForScript(const nlohmann::json& json);

}  // namespace ortkit
