// ortkit inspect MODEL: what the model contains, as Netron's model panel shows it.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "failure.h"
#include "inspect_render.h"
#include "ortkit/model/model_file.h"
#include "ortkit/model/summary.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

struct InspectFlags {
  std::string model;
  Format format = Format::kText;
  std::size_t top = 15;  ///< rows of the operator and subgraph tables in text output
};

int Run(const InspectFlags& flags) {
  ModelLoad load = LoadModelFile(flags.model);
  // 2 when the file cannot be read at all, 1 when it was read and is no model (ExitCodeFor).
  if (load.model == nullptr) return Fail("inspect", *load.failure, flags.format, load.diagnoses);
  ModelSummary summary = Summarize(*load.model);
  // Non-fatal file-layer findings (an odd extension) belong with the summary's own notes.
  summary.notes.insert(summary.notes.begin(), load.diagnoses.begin(), load.diagnoses.end());
  if (flags.format == Format::kJson) {
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
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  cmd->add_option("--top", flags->top, "rows shown in the operator and subgraph tables (text output)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
