#include "ortkit/reduce/failure_condition.h"

#include <fmt/format.h>

namespace ortkit {
namespace {

constexpr std::string_view kValidForms =
    "auto, load, run, nan, diverge=opt-levels, diverge=opt-levels=LEVEL,LEVEL (off, basic, extended, layout, all) "
    "or diverge=providers=A,B (cpu, cuda, ...)";

Error BadCondition(std::string_view text, std::string_view why) {
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("--fails '{}' {}; valid forms: {}", text, why, kValidForms));
}

}  // namespace

const char* ToString(FailureKind kind) {
  switch (kind) {
    case FailureKind::kAuto: return "auto";
    case FailureKind::kLoad: return "load";
    case FailureKind::kRun: return "run";
    case FailureKind::kNan: return "nan";
    case FailureKind::kDiverge: return "diverge";
  }
  return "?";
}

std::string FailureCondition::ToString() const {
  if (kind == FailureKind::kDiverge) return "diverge=" + cross_check_mode;
  return ortkit::ToString(kind);
}

Result<FailureCondition> ParseFailureCondition(std::string_view text) {
  FailureCondition condition;
  for (FailureKind kind : {FailureKind::kAuto, FailureKind::kLoad, FailureKind::kRun, FailureKind::kNan}) {
    if (text == ToString(kind)) {
      condition.kind = kind;
      return condition;
    }
  }
  constexpr std::string_view kDiverge = "diverge";
  if (text == kDiverge) return BadCondition(text, "needs the two sides to compare");
  if (!text.starts_with("diverge=")) return BadCondition(text, "is not a failure kind");
  const std::string_view mode = text.substr(kDiverge.size() + 1);
  if (mode != "opt-levels" && !mode.starts_with("opt-levels=") && !mode.starts_with("providers=")) {
    return BadCondition(text, fmt::format("compares '{}', which is neither opt-levels nor providers", mode));
  }
  condition.kind = FailureKind::kDiverge;
  condition.cross_check_mode = std::string(mode);
  return condition;
}

}  // namespace ortkit
