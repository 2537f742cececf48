#include "ortkit/core/result.h"

namespace ortkit {

const char* ToString(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kIo: return "I/O error";
    case ErrorKind::kInvalidModel: return "invalid model";
    case ErrorKind::kRuntime: return "runtime error";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kInternal: return "internal error";
  }
  return "error";
}

}  // namespace ortkit
