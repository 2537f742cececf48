// ortkit bench MODEL: latency and throughput over a sweep of shapes in one session; --profile,
// --compare BASE.json NEW.json and --tune --latency-budget. The flags and the choice of mode are
// here; the flags are checked in bench_plan.cpp, and the modes are bench_sweep_command.cpp,
// bench_compare_command.cpp and bench_tune_command.cpp.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "bench_command.h"
#include "commands.h"
#include "number_flags.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

int Run(const BenchFlags& flags, const CLI::App& cmd) {
  Format format = Format::kText;
  ParseFormat(flags.format, &format);
  auto usage = [&](const std::string& message) { return FailBench(message, format, kExitUsage); };

  if (!flags.compare.empty()) {
    if (flags.compare.size() != 2) return usage("--compare takes two files: BASE.json NEW.json");
    if (flags.min_change < 0 || flags.min_change >= 100)
      return usage(fmt::format("--min-change {}: a percentage in [0, 100)", flags.min_change));
    return RunCompare(flags, format);
  }
  if (flags.model.empty()) return usage("a MODEL is required (or --compare BASE.json NEW.json)");
  auto plan = MakeBenchPlan(flags, cmd);
  if (!plan.ok()) return usage(plan.error().message);
  return flags.tune ? RunTune(flags, format, *plan) : RunBenchSweep(flags, format, *plan);
}

}  // namespace

int FailBench(const std::string& summary, Format format, int exit_code) {
  ReportFailure("bench", {}, summary, format);
  return exit_code;
}

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
  const int filled = static_cast<int>(fraction * width + 0.5);
  // The bar is ortkit's own escapes on a terminal (enabled_): only `what`, a shape's sizes, is escaped.
  const std::string bar =
      fmt::format("\r  [{}{}] {:3d}%  {}\033[K", std::string(filled, '#'), std::string(width - filled, '.'),
                  static_cast<int>(fraction * 100 + 0.5), EscapeForTerminal(what));
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
  cmd->add_option("model", flags->model, "the .onnx file (not needed with --compare)");
  cmd->add_option(
         "--dim", flags->dims,
         "sizes of a symbolic dimension, swept: --dim seq_len=16,64,256 (repeatable; several dims are crossed)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--batch", flags->batch,
                  "batch sizes to sweep, e.g. 1,8,32 (the inputs' shared symbolic first dimension)");
  cmd->add_option("--shape", flags->inputs.shapes, "full shape of one input, e.g. --shape x=1x3x224x224 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--input", flags->inputs.files,
                  "input values: NAME=FILE or FILE/DIR, as in `ortkit run` (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed", flags->inputs.seed, "seed for synthesised inputs")
      ->capture_default_str()
      ->check(SeedValidator());
  cmd->add_option("--intra-threads", flags->intra_threads,
                  "intra-op threads per session (default: the runtime's choice)");
  cmd->add_option("--inter-threads", flags->inter_threads, "inter-op threads per session (parallel mode)");
  cmd->add_option("--execution-mode", flags->execution_mode, "sequential | parallel")
      ->check(CLI::IsMember({"sequential", "parallel"}))
      ->capture_default_str();
  cmd->add_option("--opt-level", flags->opt_level, "graph optimisation level: 0, 1, 2 or 99")->capture_default_str();
  cmd->add_option("--provider", flags->provider, "execution provider")->capture_default_str();
  auto* iterations =
      cmd->add_option("--iterations", flags->iterations, "measured runs per shape (all threads together)")
          ->capture_default_str();
  cmd->add_option("--duration", flags->duration, "measure each shape for this long instead, e.g. 10s, 500ms")
      ->excludes(iterations);
  cmd->add_option("--warmup", flags->warmup, "untimed runs per session before measuring (after the timed first run)")
      ->capture_default_str();
  cmd->add_option("--concurrency", flags->concurrency, "threads calling Run on each session")->capture_default_str();
  cmd->add_option("--sessions", flags->sessions, "sessions of the model, each called by --concurrency threads")
      ->capture_default_str();
  cmd->add_flag("--io-binding", flags->io_binding, "bind inputs and outputs once and run the binding");
  cmd->add_flag("--no-mem-pattern", flags->no_mem_pattern, "disable the memory pattern optimisation");
  cmd->add_flag("--no-arena", flags->no_arena, "disable the CPU memory arena");
  cmd->add_flag(
      "--profile", flags->profile,
      "profile every shape in a separate profiled session and report top ops, op types, providers, copies and "
      "CPU fallbacks");
  cmd->add_option("--profile-prefix", flags->profile_prefix,
                  "file prefix of the kept trace (the runtime appends a timestamp)")
      ->capture_default_str();
  cmd->add_option("--profile-runs", flags->profile_runs, "profiled runs per shape")->capture_default_str();
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"text", "json", "csv", "markdown"}))
      ->capture_default_str();
  cmd->add_option("--plot", flags->plot, "write an SVG of latency and throughput against batch size");
  cmd->add_option("--compare", flags->compare,
                  "compare two saved --format json reports: BASE.json NEW.json; exit 1 if slower")
      ->expected(2);
  cmd->add_option("--min-change", flags->min_change, "with --compare: changes below this percentage are noise")
      ->check(RealNumberIn(0, 99.999, "%"))
      ->capture_default_str();
  cmd->add_flag("--tune", flags->tune,
                "sweep threads, execution mode, batch size and instances; recommend a configuration");
  cmd->add_option("--latency-budget", flags->latency_budget, "with --tune: the p99 latency to stay within, e.g. 50ms");
  cmd->add_option("--time-budget", flags->time_budget, "with --tune: time for the whole sweep")->capture_default_str();
  cmd->add_option("--max-instances", flags->max_instances, "with --tune: most session instances to try")
      ->capture_default_str();
  cmd->add_option("--write-config", flags->write_config, "with --tune: write the serving configuration (JSON) here");
  cmd->callback([flags, cmd, &exit_code] { exit_code = Run(*flags, *cmd); });
}

}  // namespace ortkit::cli
