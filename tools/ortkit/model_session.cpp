#include "model_session.h"

#include <fmt/format.h>

#include "commands.h"
#include "ortkit/diagnose/runtime_messages.h"

namespace ortkit::cli {

Result<OpenedModel> OpenModel(const std::filesystem::path& path, const SessionConfig& config, Format format,
                              const std::string& command, int* exit_code) {
  OpenedModel opened;
  ModelLoad load = LoadModelFile(path);
  if (!load.model) {
    // kIo (2) when the file cannot be read at all, kInvalidModel (1) when it is no model.
    const Error error = MakeError(load.failure->kind, "cannot read " + path.string());
    *exit_code = Fail(command, error, format, load.diagnoses);
    return error;
  }
  opened.model = std::move(load.model);
  auto runtime = Runtime::Create();
  if (!runtime.ok()) {
    // Exit 3, as ever: an ONNX Runtime that cannot start here is not the model's fault nor the call's.
    *exit_code = Fail(command, MakeError(ErrorKind::kInternal, runtime.error().message), format);
    return runtime.error();
  }
  opened.runtime = std::move(runtime).value();
  auto session = Session::Create(*opened.runtime, path, config);
  if (!session.ok()) {
    Location where;
    where.file = path.string();
    const Error& error = session.error();
    // An unknown or unavailable provider is the call's (2); anything else the runtime refuses is the model's (1).
    const bool provider = error.kind == ErrorKind::kUnavailable || error.kind == ErrorKind::kInvalidArgument;
    *exit_code = Fail(
        command, MakeError(provider ? error.kind : ErrorKind::kRuntime, "ONNX Runtime cannot load " + path.string()),
        format, {TranslateSessionError(error, where)});
    return error;
  }
  opened.session = std::move(session).value();
  auto inputs = DescribeInputs(*opened.session);
  auto outputs = DescribeOutputs(*opened.session);
  if (!inputs.ok() || !outputs.ok()) {
    const Error& error = inputs.ok() ? outputs.error() : inputs.error();
    *exit_code = Fail(
        command, MakeError(ErrorKind::kRuntime, "cannot describe the session's inputs and outputs: " + error.message),
        format);
    return error;
  }
  opened.inputs = std::move(inputs).value();
  opened.outputs = std::move(outputs).value();
  return opened;
}

}  // namespace ortkit::cli
