#pragma once
// Runs another program and collects what it prints: the probes of `ortkit env` ask a Python
// interpreter about its packages this way, so that a crash or a hang in that interpreter (an
// import of a broken ONNX Runtime) stays in the child.

#include <chrono>
#include <string>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit {

struct ProcessOutput {
  int exit_code = -1;  ///< the program's exit status; -1 when a signal ended it
  int signal = 0;      ///< the signal that ended it (SIGSEGV, ...), 0 otherwise
  bool timed_out = false;
  std::string out;  ///< standard output, cut at ProcessOptions::max_output bytes
  std::string err;  ///< standard error, cut the same way
};

struct ProcessOptions {
  std::chrono::milliseconds timeout{60'000};  ///< then SIGKILL, and timed_out is set; 0: no limit
  std::size_t max_output = 4 << 20;           ///< bytes kept of each stream; the rest is read and dropped
  /// The child writes to this process's standard output and error (nothing is collected), as a
  /// command that hands its work to another program does.
  bool inherit_output = false;
  /// NAME=VALUE entries set in the child's environment, over this process's own.
  std::vector<std::string> environment;
};

/// Runs `argv` (argv[0] searched on PATH when it has no slash) with the current environment (and
/// options.environment) and
/// standard input from /dev/null, and waits for it. Fails only when the program cannot be started (kNotFound for a
/// missing program); a non-zero exit, a signal or the timeout come back in ProcessOutput. Thread-safe.
Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace ortkit
