// ortkit inspect MODEL: what the model contains, as Netron's model panel shows it.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "inspect_render.h"
#include "ortkit/model/model_file.h"
#include "ortkit/model/summary.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

struct InspectFlags {
  std::string model;
  std::string format = "text";
  std::size_t top = 15;  ///< rows of the operator and subgraph tables in text output
};

// As every command: 2 when the file cannot be read at all, 1 when it was read and is no model.
int ReportLoadFailure(const ModelLoad& load, const std::string& path, Format format) {
  const int exit_code = load.io_error ? kExitUsage : kExitFindings;
  if (format == Format::kJson) {
    const std::string error =
        load.diagnoses.empty() ? fmt::format("'{}' could not be read", path) : load.diagnoses.front().message;
    nlohmann::json json = {{"error", error}, {"diagnoses", load.diagnoses}};
    PrintJson(json);
    return exit_code;
  }
  const Style style = Style::ForStream(stderr);
  for (const auto& d : load.diagnoses) PrintText(stderr, RenderDiagnosis(d, style));
  return exit_code;
}

int Run(const InspectFlags& flags) {
  Format format = Format::kText;
  ParseFormat(flags.format, &format);
  ModelLoad load = LoadModelFile(flags.model);
  if (load.model == nullptr) return ReportLoadFailure(load, flags.model, format);
  ModelSummary summary = Summarize(*load.model);
  // Non-fatal file-layer findings (an odd extension) belong with the summary's own notes.
  summary.notes.insert(summary.notes.begin(), load.diagnoses.begin(), load.diagnoses.end());
  if (format == Format::kJson) {
    nlohmann::json json = summary;
    PrintJson(json);
  } else {
    PrintText(stdout, RenderInspectText(summary, flags.top, Style::ForStream(stdout)));
  }
  return kExitOk;
}

}  // namespace

void RegisterInspect(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Summarise a model: producer, opsets, inputs and outputs, weights, operators");
  cmd->add_option("model", flags->model, "the .onnx file")->required();
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--top", flags->top, "rows shown in the operator and subgraph tables (text output)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
