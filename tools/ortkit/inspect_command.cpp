// ortkit inspect MODEL: what the model contains.
#include "commands.h"

namespace ortkit::cli {

void RegisterInspect(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("inspect", "Summarise a model: producer, opsets, inputs and outputs, weights, operators");
  auto path = std::make_shared<std::string>();
  cmd->add_option("model", *path, "the .onnx file")->required();
  cmd->callback([&exit_code] { exit_code = kExitInternal; });
}

}  // namespace ortkit::cli
