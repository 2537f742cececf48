#include "ortkit/diagnose/runtime_messages.h"

#include <string>

namespace ortkit {

Diagnosis TranslateRuntimeError(std::string_view message, const Location& context, bool during_run) {
  return Diagnose(during_run ? "runtime.run-failed" : "runtime.load-failed", std::string(message), context);
}

}  // namespace ortkit
