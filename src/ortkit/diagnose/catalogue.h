#pragma once
// The catalogue of diagnosis codes. Codes are stable: tools and CI scripts match on them.
// A code is "<layer>.<what>", e.g. "file.truncated" or "graph.static-batch".

#include <span>
#include <string_view>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

struct CodeInfo {
  std::string_view code;
  Severity severity;       ///< default severity
  std::string_view title;  ///< one line, for tables and the troubleshooting index
  std::string_view cause;  ///< the usual root cause
  std::string_view fix;    ///< the usual fix
};

/// Every code, in catalogue order (grouped by layer).
std::span<const CodeInfo> AllCodes();

/// nullptr when `code` is not in the catalogue.
const CodeInfo* FindCode(std::string_view code);

}  // namespace ortkit
