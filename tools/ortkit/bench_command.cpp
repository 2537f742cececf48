// ortkit bench MODEL: latency and throughput over a sweep of shapes in one session; --profile,
// --compare BASE.json NEW.json and --tune --latency-budget. The choice of mode is here; the flags are
// registered in bench_flags.cpp and checked in bench_plan.cpp, and the modes are bench_sweep_command.cpp,
// bench_compare_command.cpp and bench_tune_command.cpp.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "bench_command.h"
#include "commands.h"
#include "failure.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

int Run(const BenchFlags& flags, const CLI::App& cmd) {
  if (!flags.compare.empty()) {
    if (flags.compare.size() != 2)
      return FailUsage("bench", "--compare takes two files: BASE.json NEW.json", flags.format);
    if (flags.min_change < 0 || flags.min_change >= 100)
      return FailUsage("bench", fmt::format("--min-change {}: a percentage in [0, 100)", flags.min_change),
                       flags.format);
    return RunCompare(flags);
  }
  if (flags.model.empty())
    return FailUsage("bench", "a MODEL is required (or --compare BASE.json NEW.json)", flags.format);
  auto plan = MakeBenchPlan(flags, cmd);
  if (!plan.ok()) return Fail("bench", plan.error(), flags.format);
  return flags.tune ? RunTune(flags, *plan) : RunBenchSweep(flags, *plan);
}

}  // namespace

Status WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return MakeError(ErrorKind::kIo, fmt::format("cannot write {}", path.string()));
  return OkStatus();
}

void ProgressBar::Show(const std::string& what, double fraction) {
  if (!enabled_) return;
  const int width = 30;
  const int filled = static_cast<int>(std::lround(fraction * width));
  // The bar is ortkit's own escapes on a terminal (enabled_): only `what`, a shape's sizes, is escaped.
  const std::string bar =
      fmt::format("\r  [{}{}] {:3d}%  {}\033[K", std::string(filled, '#'), std::string(width - filled, '.'),
                  std::lround(fraction * 100), EscapeForTerminal(what));
  std::fwrite(bar.data(), 1, bar.size(), stderr);
  std::fflush(stderr);
  shown_ = true;
}

void ProgressBar::Clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

void RegisterBench(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Measure latency and throughput over a sweep of shapes; --profile, --compare BASE.json NEW.json, --tune");
  RegisterBenchFlags(cmd, *flags);
  cmd->callback([flags, cmd, &exit_code] { exit_code = Run(*flags, *cmd); });
}

}  // namespace ortkit::cli
