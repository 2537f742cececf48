#pragma once
// Opening a model for the commands that run it: parse the file (for diagnoses and input hints),
// create the runtime and a session, and turn each failure into a printed diagnosis and exit code.

#include <filesystem>
#include <memory>
#include <string>

#include "failure.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "terminal.h"

namespace ortkit::cli {

struct OpenedModel {
  std::unique_ptr<ModelFile> model;
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Session> session;
  std::vector<TensorSpec> inputs;   ///< the session's declared inputs
  std::vector<TensorSpec> outputs;  ///< the session's declared outputs
};

/// Opens `path` on `config`. On failure reports it through Fail (the diagnoses as text on stderr, or
/// JSON on stdout) and sets `exit_code`: 2 for unreadable files and unknown or unavailable providers, 1
/// for a model that the runtime refuses, 3 when ONNX Runtime itself cannot start.
Result<OpenedModel> OpenModel(const std::filesystem::path& path, const SessionConfig& config, Format format,
                              const std::string& command, int* exit_code);

}  // namespace ortkit::cli
