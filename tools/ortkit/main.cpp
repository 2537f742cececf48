// ortkit: from an exported ONNX model to production on ONNX Runtime.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "failure.h"
#include "number_flags.h"

namespace {

// Whether the command line asks for JSON (--format json or --format=json): a flag CLI11 refuses is then
// reported as JSON on stdout too, so that a script reads every failure the same way.
bool AsksForJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--format=json" || (word == "--format" && i + 1 < argc && std::string_view(argv[i + 1]) == "json"))
      return true;
  }
  return false;
}

// The first word that is not a flag names the command (the main flags, --help and --version, take no
// value). One ortkit does not have is a usage error that names it and lists the commands, with --help
// too: CLI11 would print the main help for `ortkit frobnicate --help` and exit 0, and say only "A
// subcommand is required" without it, so a script that mistypes a command would pass or not know why.
std::optional<int> RefuseUnknownCommand(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.empty() || word.front() == '-') continue;
    std::vector<std::string> names;
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
      names.push_back(command->get_name());
    if (std::find(names.begin(), names.end(), word) != names.end()) return std::nullopt;
    std::string list;
    for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
    return ortkit::cli::FailUsage("",
                                  "unknown command '" + std::string(word) + "'\nthe commands are: " + list +
                                      "\n(ortkit --help says what each does)",
                                  AsksForJson(argc, argv) ? ortkit::cli::Format::kJson : ortkit::cli::Format::kText);
  }
  return std::nullopt;
}

// The command a refused command line was for: its first word that names one, or "".
std::string CommandOf(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
      if (command->get_name() == argv[i]) return command->get_name();
  }
  return "";
}

int Main(int argc, char** argv) {
  CLI::App app{"ortkit: check, validate, benchmark and serve ONNX models on ONNX Runtime", "ortkit"};
  app.set_version_flag("--version", std::string("ortkit ") + ORTKIT_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  int exit_code = ortkit::cli::kExitOk;
  // In the order of the chain: export, look, validate, measure, serve.
  ortkit::cli::RegisterExport(app, exit_code);
  ortkit::cli::RegisterInspect(app, exit_code);
  ortkit::cli::RegisterCheck(app, exit_code);
  ortkit::cli::RegisterRun(app, exit_code);
  ortkit::cli::RegisterValidate(app, exit_code);
  ortkit::cli::RegisterConvert(app, exit_code);
  ortkit::cli::RegisterFix(app, exit_code);
  ortkit::cli::RegisterDoctor(app, exit_code);
  ortkit::cli::RegisterReduce(app, exit_code);
  ortkit::cli::RegisterOptimize(app, exit_code);
  ortkit::cli::RegisterBench(app, exit_code);
  ortkit::cli::RegisterServe(app, exit_code);
  ortkit::cli::RegisterPerf(app, exit_code);
  ortkit::cli::RegisterEnv(app, exit_code);
  ortkit::cli::RegisterExplain(app, exit_code);

  ortkit::cli::CheckEveryNumber(app);

  if (auto refused = RefuseUnknownCommand(app, argc, argv)) return *refused;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's message quotes what was given: through the one failure path, escaped for a terminal.
    const std::string command = CommandOf(app, argc, argv);
    const auto format = AsksForJson(argc, argv) ? ortkit::cli::Format::kJson : ortkit::cli::Format::kText;
    const std::string help = command.empty() ? "ortkit --help" : "ortkit " + command + " --help";
    return ortkit::cli::FailUsage(command.empty() ? "" : command,
                                  std::string(e.what()) + " (" + help + " lists the flags)", format);
  } catch (const std::exception& e) {
    const auto format = AsksForJson(argc, argv) ? ortkit::cli::Format::kJson : ortkit::cli::Format::kText;
    return ortkit::cli::Fail(
        CommandOf(app, argc, argv),
        ortkit::MakeError(ortkit::ErrorKind::kInternal, std::string("internal error: ") + e.what()), format);
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (...) {  // registering the commands, or reporting a failure, threw (out of memory): exit 3, silently
    return ortkit::cli::kExitInternal;
  }
}
