#pragma once
// A check command of the user's as the judge of a candidate (`--fails cmd:COMMAND`): the candidate
// and its inputs are written to a temporary folder, the command runs there without a shell, and a
// non-zero exit or a signal (the checked program crashed) is the failure; a time-out is not.

#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// The command and what its failure must show.
struct CommandCheck {
  std::vector<std::string> argv;              ///< with {model} and {inputs} placeholders
  std::string message;                        ///< the combined stdout and stderr must contain it (empty: any)
  std::chrono::milliseconds timeout{60'000};  ///< a run that takes longer is killed and does not count
};

/// How one run of the command went.
struct CommandResult {
  bool failed = false;  ///< non-zero exit or a signal, not timed out, the message found
  std::string summary;  ///< "exit status 1: <last output line>", "timed out after 60 s", ...
};

/// `argv` with every {model} and {inputs} replaced by the paths given.
std::vector<std::string> FillPlaceholders(const std::vector<std::string>& argv, const std::string& model,
                                          const std::string& inputs);

/// Writes `model_bytes` as model.onnx and `inputs` as inputs/ (WriteInputFolder) in a fresh temporary
/// folder, runs the command on them and removes the folder. Fails only when the folder cannot be
/// written (kIo) or the program cannot be started (kNotFound, kIo); everything the program does is
/// the result. Thread-safe.
Result<CommandResult> RunCommandCheck(const CommandCheck& check, std::string_view model_bytes,
                                      std::span<const NamedTensor> inputs);

/// A command line a shell reads back as `argv`: arguments quoted where they need it.
std::string ShellCommandLine(const std::vector<std::string>& argv);

}  // namespace ortkit
