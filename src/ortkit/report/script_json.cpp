#include "ortkit/report/script_json.h"

#include <nlohmann/json.hpp>

namespace ortkit {

std::string JsonForScript(const nlohmann::json& json) {
  const std::string text = json.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {  // outside strings JSON has none of these, so escaping them changes no value
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace ortkit
