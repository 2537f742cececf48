#pragma once
// What `ortkit reduce` looks for: the way a model fails (ONNX Runtime refuses it, a run fails, an
// output holds NaN, two configurations disagree), parsed from --fails.

#include <string>
#include <string_view>

#include "ortkit/core/result.h"

namespace ortkit {

/// The kinds of failure a reduction keeps.
enum class FailureKind {
  kAuto,     ///< whichever of load, run, nan the original shows first (resolved against the original)
  kLoad,     ///< ONNX Runtime refuses to create a session
  kRun,      ///< the session loads but Run fails
  kNan,      ///< an output holds NaN or Inf while no fed input does
  kDiverge,  ///< outputs differ beyond tolerance between two configurations
};

/// "auto", "load", "run", "nan", "diverge".
const char* ToString(FailureKind kind);

/// A parsed --fails value.
struct FailureCondition {
  FailureKind kind = FailureKind::kAuto;
  /// kDiverge only: the cross-check mode, as ParseCrossCheckMode takes it ("opt-levels",
  /// "opt-levels=off,all", "providers=cpu,cuda").
  std::string cross_check_mode;

  /// "run", "diverge=opt-levels=off,all": the text --fails accepts for this condition.
  std::string ToString() const;
};

/// Parses --fails: auto, load, run, nan, diverge=opt-levels, diverge=opt-levels=LEVEL,LEVEL or
/// diverge=providers=A,B. The cross-check mode itself is checked by ParseCrossCheckMode when the
/// reduction starts. Errors are kInvalidArgument naming --fails and listing the valid forms.
Result<FailureCondition> ParseFailureCondition(std::string_view text);

}  // namespace ortkit
