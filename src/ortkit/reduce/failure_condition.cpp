#include "ortkit/reduce/failure_condition.h"

#include <fmt/format.h>

namespace ortkit {
namespace {

constexpr std::string_view kValidForms =
    "auto, load, run, nan, diverge=opt-levels, diverge=opt-levels=LEVEL,LEVEL (off, basic, extended, layout, all) "
    "diverge=providers=A,B (cpu, cuda, ...) or cmd:COMMAND (placeholders {model} and {inputs})";

Error BadCondition(std::string_view text, std::string_view why) {
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("--fails '{}' {}; valid forms: {}", text, why, kValidForms));
}

Result<FailureCondition> ParseCommand(std::string_view text, std::string_view command) {
  auto argv = SplitCommandLine(command);
  if (!argv.ok()) return BadCondition(text, argv.error().message);
  if (argv->empty()) return BadCondition(text, "names no command to run");
  FailureCondition condition;
  condition.kind = FailureKind::kCommand;
  condition.command_text = std::string(command);
  condition.command = std::move(argv).value();
  return condition;
}

}  // namespace

Result<std::vector<std::string>> SplitCommandLine(std::string_view text) {
  std::vector<std::string> argv;
  std::string current;
  bool in_argument = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        current += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_argument = true;
    } else if (c == ' ' || c == '\t') {
      if (in_argument) argv.push_back(std::move(current));
      current.clear();
      in_argument = false;
    } else {
      current += c;
      in_argument = true;
    }
  }
  if (quote != 0) return MakeError(ErrorKind::kInvalidArgument, fmt::format("has an unterminated {} quote", quote));
  if (in_argument) argv.push_back(std::move(current));
  return argv;
}

const char* ToString(FailureKind kind) {
  switch (kind) {
    case FailureKind::kAuto: return "auto";
    case FailureKind::kLoad: return "load";
    case FailureKind::kRun: return "run";
    case FailureKind::kNan: return "nan";
    case FailureKind::kDiverge: return "diverge";
    case FailureKind::kCommand: return "cmd";
  }
  return "?";
}

std::string FailureCondition::ToString() const {
  if (kind == FailureKind::kDiverge) return "diverge=" + cross_check_mode;
  if (kind == FailureKind::kCommand) return "cmd:" + command_text;
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
  constexpr std::string_view kCommand = "cmd:";
  if (text.starts_with(kCommand)) return ParseCommand(text, text.substr(kCommand.size()));
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
