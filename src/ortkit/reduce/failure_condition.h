#pragma once
// What `ortkit reduce` looks for: the way a model fails (ONNX Runtime refuses it, a run fails, an
// output holds NaN, two configurations disagree, a check command of the user's exits non-zero),
// parsed from --fails.

#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit {

/// The kinds of failure a reduction keeps.
enum class FailureKind {
  kAuto,     ///< whichever of load, run, nan the original shows first (resolved against the original)
  kLoad,     ///< ONNX Runtime refuses to create a session
  kRun,      ///< the session loads but Run fails
  kNan,      ///< an output holds NaN or Inf while no fed input does
  kDiverge,  ///< outputs differ beyond tolerance between two configurations
  kCommand,  ///< a check command exits non-zero or is killed by a signal (a time-out does not count)
};

/// "auto", "load", "run", "nan", "diverge", "cmd".
const char* ToString(FailureKind kind);

/// A parsed --fails value.
struct FailureCondition {
  FailureKind kind = FailureKind::kAuto;
  /// kDiverge only: the cross-check mode, as ParseCrossCheckMode takes it ("opt-levels",
  /// "opt-levels=off,all", "providers=cpu,cuda").
  std::string cross_check_mode;
  /// kCommand only: the command as given after "cmd:", and split into arguments (quotes removed),
  /// each possibly holding the placeholders {model} and {inputs}.
  std::string command_text;
  std::vector<std::string> command;

  /// "run", "diverge=opt-levels=off,all", "cmd:python3 check.py {model}": the text --fails accepts.
  std::string ToString() const;
};

/// Parses --fails: auto, load, run, nan, diverge=opt-levels, diverge=opt-levels=LEVEL,LEVEL,
/// diverge=providers=A,B or cmd:COMMAND (split as SplitCommandLine does; empty is an error). The cross-check mode
/// itself is checked by ParseCrossCheckMode when the reduction starts. Errors are kInvalidArgument naming --fails and
/// listing the valid forms.
Result<FailureCondition> ParseFailureCondition(std::string_view text);

/// Splits a command line into arguments without a shell: on spaces and tabs, where text inside
/// '...' or "..." (quotes removed) keeps its spaces; no escapes, variables or globs. kInvalidArgument
/// for an unterminated quote.
Result<std::vector<std::string>> SplitCommandLine(std::string_view text);

}  // namespace ortkit
