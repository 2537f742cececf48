#include "ortkit/reduce/command_check.h"

#include <fstream>

#include <fmt/format.h>

#include "ortkit/core/process.h"
#include "ortkit/core/scratch_folder.h"
#include "ortkit/reduce/input_folder.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

void ReplaceAll(std::string& text, std::string_view from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

/// The last non-empty line of the program's output, cut to a readable length.
std::string LastLine(const std::string& output) {
  constexpr std::size_t kMaxLine = 200;
  std::size_t end = output.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const std::size_t begin = output.rfind('\n', end);
  std::string line =
      output.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.size() > kMaxLine) line = line.substr(0, kMaxLine) + "...";
  return line;
}

CommandResult Judge(const CommandCheck& check, const ProcessOutput& run) {
  CommandResult result;
  const std::string output = run.out + run.err;
  const std::string last = LastLine(output);
  if (run.timed_out) {
    result.summary = fmt::format("timed out after {:.3g} s (a time-out is not the failure)",
                                 std::chrono::duration<double>(check.timeout).count());
    return result;
  }
  result.summary =
      run.signal != 0 ? fmt::format("killed by signal {}", run.signal) : fmt::format("exit status {}", run.exit_code);
  if (!last.empty()) result.summary += ": " + last;
  if (run.signal == 0 && run.exit_code == 0) return result;
  if (!check.message.empty() && output.find(check.message) == std::string::npos) {
    result.summary += fmt::format(" (its output does not contain '{}')", check.message);
    return result;
  }
  result.failed = true;
  return result;
}

}  // namespace

std::vector<std::string> FillPlaceholders(const std::vector<std::string>& argv, const std::string& model,
                                          const std::string& inputs) {
  std::vector<std::string> filled = argv;
  for (auto& arg : filled) {
    ReplaceAll(arg, "{model}", model);
    ReplaceAll(arg, "{inputs}", inputs);
  }
  return filled;
}

Result<CommandResult> RunCommandCheck(const CommandCheck& check, std::string_view model_bytes,
                                      std::span<const NamedTensor> inputs) {
  ORTKIT_ASSIGN_OR_RETURN(ScratchFolder folder, ScratchFolder::Create("reduce"));
  const fs::path model = folder.path() / "model.onnx";
  {
    std::ofstream file(model, std::ios::binary | std::ios::trunc);
    file.write(model_bytes.data(), static_cast<std::streamsize>(model_bytes.size()));
    if (!file) return MakeError(ErrorKind::kIo, fmt::format("writing '{}' failed", model.string()));
  }
  const fs::path input_folder = folder.path() / "inputs";
  ORTKIT_RETURN_IF_ERROR(WriteInputFolder(input_folder, inputs));
  ProcessOptions options;
  options.timeout = check.timeout;
  ORTKIT_ASSIGN_OR_RETURN(ProcessOutput run,
                          RunProcess(FillPlaceholders(check.argv, model.string(), input_folder.string()), options));
  return Judge(check, run);
}

std::string ShellCommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    if (!arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
            std::string::npos) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace ortkit
