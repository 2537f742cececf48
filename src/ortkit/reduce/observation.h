#pragma once
// Running one candidate of a reduction and saying how it fails, if it does: ONNX Runtime refuses it,
// its run fails, an output holds NaN or Inf, two configurations disagree on its outputs, or a check
// command of the user's fails on it.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ortkit/reduce/command_check.h"
#include "ortkit/reduce/failure_condition.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/tensor.h"
#include "ortkit/validate/cross_check.h"

namespace ortkit {

/// What to look for and how to run.
struct ProbeSettings {
  FailureKind kind = FailureKind::kAuto;  ///< kAuto: load, then run, then nan
  SessionConfig session;                  ///< the configuration of load, run and nan
  std::optional<CrossCheckPlan> plan;     ///< kDiverge: the two sides
  ToleranceRules tolerance;               ///< kDiverge
  std::optional<CommandCheck> command;    ///< kCommand: the check command
};

/// How a model behaved.
struct Observation {
  FailureKind seen = FailureKind::kAuto;  ///< the failure seen; kAuto when it did not fail as looked for
  std::string code;     ///< load, run: the diagnosis code (TranslateSessionError, TranslateRuntimeError)
  std::string node;     ///< load, run: the node the runtime's message names, if any
  std::string message;  ///< load, run: the runtime's message; nan, diverge, cmd: what was found; else why it passed
  std::optional<CrossCheckReport> comparison;  ///< diverge: both sides' comparison

  bool failed() const { return seen != FailureKind::kAuto; }
};

/// Loads `model_bytes` and, as `settings.kind` needs, runs it on `inputs` and judges the outputs.
/// Never fails itself: whatever ONNX Runtime does is the observation. For nan, a model fed NaN or
/// Inf does not count (the NaN came in, it was not made). For kCommand, a command that cannot be
/// started is a pass saying why (the original's check, RunCommandCheck, reports it as an error).
Observation Observe(Runtime& runtime, const ProbeSettings& settings, std::string_view model_bytes,
                    std::span<const NamedTensor> inputs);

}  // namespace ortkit
