#pragma once
// The subcommands. Each registers its options on the CLI11 app (defaults from its config
// struct) and runs through a callback that stores the exit code.

#include <CLI/CLI.hpp>

#include "ortkit/core/result.h"

namespace ortkit::cli {

/// Stable exit codes, shared by every command (docs/commands/README.md lists them).
enum ExitCode : int {
  kExitOk = 0,        ///< no errors (warnings allowed unless --strict)
  kExitFindings = 1,  ///< the model or run has errors (check failed, validation failed, ...)
  kExitUsage = 2,     ///< bad flags, unreadable or missing files, unavailable provider
  kExitInternal = 3,  ///< a bug in ortkit
};

/// The exit code for an error the library returned: usage for what the user fixes by changing the
/// call (flags, paths, an unavailable provider or resource), internal for ortkit's bugs, findings for
/// the rest (the model or the runtime failed).
constexpr int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
    case ErrorKind::kNotFound:
    case ErrorKind::kIo:
    case ErrorKind::kUnavailable: return kExitUsage;
    case ErrorKind::kInternal: return kExitInternal;
    case ErrorKind::kInvalidModel:
    case ErrorKind::kRuntime: return kExitFindings;
  }
  return kExitInternal;
}

/// Accepts the ONNX Runtime releases of check/target_runtime.h ("1.16", also "1.16.3"); the
/// message lists them. Shared by every command that takes --target-ort.
CLI::Validator TargetOrtValidator();

/// Accepts a seed: a whole number from 0 (CLI11 would otherwise wrap -1 into an unsigned seed).
CLI::Validator SeedValidator();

void RegisterInspect(CLI::App& app, int& exit_code);
void RegisterCheck(CLI::App& app, int& exit_code);
void RegisterExplain(CLI::App& app, int& exit_code);
void RegisterRun(CLI::App& app, int& exit_code);
void RegisterValidate(CLI::App& app, int& exit_code);
void RegisterServe(CLI::App& app, int& exit_code);
void RegisterExport(CLI::App& app, int& exit_code);
void RegisterDoctor(CLI::App& app, int& exit_code);
void RegisterPerf(CLI::App& app, int& exit_code);
void RegisterBench(CLI::App& app, int& exit_code);
void RegisterConvert(CLI::App& app, int& exit_code);
void RegisterEnv(CLI::App& app, int& exit_code);
void RegisterFix(CLI::App& app, int& exit_code);
void RegisterReduce(CLI::App& app, int& exit_code);
void RegisterOptimize(CLI::App& app, int& exit_code);

}  // namespace ortkit::cli
