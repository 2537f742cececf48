#include "model_session.h"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "ortkit/diagnose/runtime_messages.h"

namespace ortkit::cli {

Result<OpenedModel> OpenModel(const std::filesystem::path& path, const SessionConfig& config, Format format,
                              const std::string& command, int* exit_code) {
  OpenedModel opened;
  ModelLoad load = LoadModelFile(path);
  if (!load.model) {
    *exit_code = load.io_error ? kExitUsage : kExitFindings;
    ReportFailure(command, load.diagnoses, "cannot read " + path.string(), format);
    return MakeError(ErrorKind::kInvalidModel, "cannot read model");
  }
  opened.model = std::move(load.model);
  auto runtime = Runtime::Create();
  if (!runtime.ok()) {
    *exit_code = kExitInternal;
    ReportFailure(command, {}, runtime.error().message, format);
    return runtime.error();
  }
  opened.runtime = std::move(runtime).value();
  auto session = Session::Create(*opened.runtime, path, config);
  if (!session.ok()) {
    Location where;
    where.file = path.string();
    const Error& error = session.error();
    const bool provider = error.kind == ErrorKind::kUnavailable || error.kind == ErrorKind::kInvalidArgument;
    *exit_code = provider ? kExitUsage : kExitFindings;
    Diagnosis d = TranslateSessionError(error, where);
    ReportFailure(command, {d}, "ONNX Runtime cannot load " + path.string(), format);
    return error;
  }
  opened.session = std::move(session).value();
  auto inputs = DescribeInputs(*opened.session);
  auto outputs = DescribeOutputs(*opened.session);
  if (!inputs.ok() || !outputs.ok()) {
    *exit_code = kExitFindings;
    const Error& error = inputs.ok() ? outputs.error() : inputs.error();
    ReportFailure(command, {}, "cannot describe the session's inputs and outputs: " + error.message, format);
    return error;
  }
  opened.inputs = std::move(inputs).value();
  opened.outputs = std::move(outputs).value();
  return opened;
}

}  // namespace ortkit::cli
