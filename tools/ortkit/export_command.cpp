// ortkit export torch|tf ...: delegates to the Python export companion (python/ortkit_export), the only
// Python in ortkit, because exporting needs the framework the model was written in.
//
// Which Python, and where the package is (docs/commands/export.md):
//   package folder: $ORTKIT_PYTHONPATH, else the first of EXE/../share/ortkit/python (install tree),
//                   EXE/../../python, EXE/../python (a build folder inside the source tree) and the source
//                   tree this executable was built from, that holds ortkit_export/__init__.py
//   interpreter:    $ORTKIT_PYTHON, else ROOT/.deps/python/bin/python where ROOT is the package folder's
//                   parent (the venv scripts/setup.sh creates), else python3 on PATH
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "failure.h"
#include "ortkit/core/process.h"
#include "ortkit/diagnose/diagnosis.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

namespace fs = std::filesystem;

struct Companion {
  fs::path interpreter;               ///< a path, or a bare name searched on PATH
  fs::path package_folder;            ///< holds ortkit_export/
  std::vector<std::string> searched;  ///< what was tried, for the error message
};

bool IsFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

fs::path ExecutableFolder() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

Companion FindCompanion() {
  Companion found;
  std::vector<fs::path> candidates;
  if (const auto given = Env("ORTKIT_PYTHONPATH"); !given.empty()) {
    candidates.emplace_back(given);
  } else {
    const fs::path exe = ExecutableFolder();
    if (!exe.empty()) {
      candidates.push_back(exe / ".." / "share" / "ortkit" / "python");
      candidates.push_back(exe / ".." / ".." / "python");
      candidates.push_back(exe / ".." / "python");
    }
#ifdef ORTKIT_SOURCE_DIR
    candidates.push_back(fs::path(ORTKIT_SOURCE_DIR) / "python");
#endif
  }
  for (const auto& folder : candidates) {
    found.searched.push_back((folder / "ortkit_export").lexically_normal().string());
    if (IsFile(folder / "ortkit_export" / "__init__.py")) {
      found.package_folder = fs::weakly_canonical(folder);
      break;
    }
  }
  if (const auto given = Env("ORTKIT_PYTHON"); !given.empty()) {
    found.interpreter = given;
  } else if (!found.package_folder.empty() &&
             IsFile(found.package_folder.parent_path() / ".deps" / "python" / "bin" / "python")) {
    found.interpreter = found.package_folder.parent_path() / ".deps" / "python" / "bin" / "python";
  } else {
    found.interpreter = "python3";
  }
  return found;
}

/// The format the companion's arguments ask for: its own failures are said in it too.
Format FormatOf(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--format=json" || (args[i] == "--format" && i + 1 < args.size() && args[i + 1] == "json"))
      return Format::kJson;
  }
  return Format::kText;
}

/// The companion could not be found or started: export.python-missing, with where it looked (exit 2).
int Missing(const std::string& message, Format format) {
  return Fail("export", MakeError(ErrorKind::kUnavailable, "the Python export companion cannot run"), format,
              {Diagnose("export.python-missing", message, Location{})});
}

/// Runs `interpreter -m ortkit_export ARGS` with the package folder first on PYTHONPATH; its output is
/// the command's. The companion's exit codes are ortkit's: 0 exported, 1 the export failed, 2 usage.
int Delegate(const Companion& companion, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {companion.interpreter.string(), "-m", "ortkit_export"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.inherit_output = true;
  options.timeout = std::chrono::milliseconds(0);  // an export takes as long as the framework needs
  const std::string existing = Env("PYTHONPATH");
  options.environment = {"PYTHONPATH=" + companion.package_folder.string() + (existing.empty() ? "" : ":" + existing)};
  auto ran = RunProcess(argv, options);
  if (!ran.ok()) {
    return Missing(fmt::format("cannot start the Python interpreter '{}': {} (set ORTKIT_PYTHON, or run "
                               "scripts/setup.sh)",
                               companion.interpreter.string(), ran.error().message),
                   FormatOf(args));
  }
  // A companion that dies or exits with a status of its own failed the export (exit 1).
  if (ran->signal != 0) {
    return Fail(
        "export",
        MakeError(ErrorKind::kRuntime, fmt::format("the Python export companion was killed by signal {}", ran->signal)),
        FormatOf(args));
  }
  const int code = ran->exit_code;
  if (code == kExitOk || code == kExitFindings || code == kExitUsage) return code;
  return Fail("export",
              MakeError(ErrorKind::kRuntime, fmt::format("the Python export companion exited with status {}", code)),
              FormatOf(args));
}

int Run(const std::vector<std::string>& args) {
  const Companion companion = FindCompanion();
  if (companion.package_folder.empty()) {
    return Missing(fmt::format("the ortkit_export Python package was not found; looked in: {}",
                               fmt::join(companion.searched, ", ")),
                   FormatOf(args));
  }
  return Delegate(companion, args);
}

}  // namespace

void RegisterExport(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Export a PyTorch or TensorFlow model to ONNX with reference data (torch | tf; runs the Python companion)");
  // Every argument, --help included, belongs to the companion, whose argparse documents them.
  cmd->set_help_flag();
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->footer("ortkit export torch --help / ortkit export tf --help: the options of each exporter");
  cmd->callback([cmd, &exit_code] { exit_code = Run(cmd->remaining()); });
}

}  // namespace ortkit::cli
