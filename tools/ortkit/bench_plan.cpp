// The flags of `ortkit bench` that measure a model, checked before any time is spent measuring and
// parsed into a BenchPlan: each failure is a specific message (and exit code 2 in the command).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench_command.h"
#include "ortkit/bench/runner.h"
#include "ortkit/core/cpus.h"
#include "ortkit/core/files.h"
#include "ortkit/core/numbers.h"

namespace ortkit::cli {
namespace {

constexpr int kMaxThreads = 1024;
constexpr std::int64_t kMostProfiledRuns = 10'000;

Status CheckThreads(const char* flag, int value, bool given) {
  if (!given) return OkStatus();
  if (value < 1 || value > kMaxThreads) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{} {}: a thread count must be between 1 and {} (this process may use {})", flag,
                                 value, kMaxThreads, UsableCpus().Describe()));
  }
  return OkStatus();
}

/// Checks that `path` can be written before any time is spent measuring.
Status CheckWritable(const std::filesystem::path& path, const char* flag) {
  if (path.empty()) return OkStatus();
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(path, flag));  // before the probe: opening a pipe to write blocks
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  std::ofstream probe(path, std::ios::app);
  if (!probe) {
    return MakeError(ErrorKind::kIo,
                     fmt::format("{} {}: cannot write there ({})", flag, path.string(),
                                 std::filesystem::exists(path.parent_path().empty() ? "." : path.parent_path())
                                     ? "permission denied or a directory"
                                     : "no such directory"));
  }
  probe.close();
  if (!existed) std::filesystem::remove(path, ec);
  return OkStatus();
}

Result<SessionConfig> MakeConfig(const BenchFlags& flags) {
  SessionConfig config = flags.session;
  config.enable_memory_pattern = !flags.no_mem_pattern;
  config.enable_cpu_arena = !flags.no_arena;
  const auto level = OptimizationLevelOfNumber(flags.opt_level);
  if (!level) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--opt-level {}: expected 0, 1, 2 or 99", flags.opt_level));
  }
  config.optimization_level = *level;
  if (Status available = CheckProviderAvailable(config.provider); !available.ok())
    return MakeError(available.error().kind, fmt::format("--provider: {}", available.error().message));
  return config;
}

/// The measuring options: the flags' with --duration, in the library's ranges (BenchOptions::Validate),
/// said with the flag's name and value.
Result<BenchOptions> MakeRunOptions(const BenchFlags& flags) {
  BenchOptions run = flags.run;
  if (!flags.duration.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(run.duration_s, ParseDuration(flags.duration, "--duration", {1e-3, 86400}));
  }
  if (auto valid = run.Validate(); !valid.ok()) {
    const bool runs = !CheckRange("", run.iterations, {1, BenchOptions::kMostIterations}).ok();
    return MakeError(ErrorKind::kInvalidArgument,
                     runs ? fmt::format("--iterations {}: expected 1 to {} (the time of every run is kept)",
                                        run.iterations, BenchOptions::kMostIterations)
                          : fmt::format("--warmup {}: expected 0 to {}", run.warmup, BenchOptions::kMostWarmup));
  }
  return run;
}

}  // namespace

Result<BenchPlan> MakeBenchPlan(const BenchFlags& flags, const CLI::App& cmd) {
  for (const auto& [flag, value] : {std::pair{"--intra-threads", flags.session.intra_op_threads},
                                    {"--inter-threads", flags.session.inter_op_threads},
                                    {"--concurrency", flags.run.concurrency},
                                    {"--sessions", flags.sessions},
                                    {"--max-instances", flags.max_instances}}) {
    ORTKIT_RETURN_IF_ERROR(CheckThreads(flag, value, cmd.count(flag) > 0));
  }
  // Each profiled run writes its events to a trace the profiler holds in memory.
  ORTKIT_RETURN_IF_ERROR(CheckRange("--profile-runs", flags.profile_runs, {1, kMostProfiledRuns}));
  BenchPlan plan;
  ORTKIT_ASSIGN_OR_RETURN(plan.run, MakeRunOptions(flags));
  ORTKIT_ASSIGN_OR_RETURN(plan.config, MakeConfig(flags));
  if (!flags.batch.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(plan.batches, ParseSizeList(flags.batch, "--batch"));
  }
  ORTKIT_ASSIGN_OR_RETURN(plan.sweeps, ParseSweepAxes(flags.dims));
  for (const auto& [path, flag] :
       {std::pair{flags.plot, "--plot"}, {flags.write_config, "--write-config"}, {flags.report_page, "--report"}}) {
    ORTKIT_RETURN_IF_ERROR(CheckWritable(path, flag));
  }
  // The runtime adds a timestamp and .json to the prefix: probe a file of that form before measuring.
  if (flags.profile && !CheckWritable(flags.profile_prefix + "_ortkit_probe.json", "--profile-prefix").ok()) {
    return MakeError(ErrorKind::kIo, fmt::format("--profile-prefix {}: the profiler cannot write its trace there "
                                                 "(no such folder, or not writable)",
                                                 flags.profile_prefix));
  }
  if (!std::filesystem::exists(flags.model))
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: no such file", flags.model.string()));
  if (flags.tune) {
    if (flags.latency_budget.empty())
      return MakeError(ErrorKind::kInvalidArgument, "--tune needs --latency-budget (e.g. --latency-budget 50ms)");
    ORTKIT_ASSIGN_OR_RETURN(const double latency_s,
                            ParseDuration(flags.latency_budget, "--latency-budget", {1e-6, 3600}, 1e-3));
    plan.latency_budget_ms = latency_s * 1000;
    ORTKIT_ASSIGN_OR_RETURN(plan.time_budget_s, ParseDuration(flags.time_budget, "--time-budget", {1, 86400}));
  } else if (!flags.write_config.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "--write-config writes the configuration --tune picks; add --tune");
  }
  return plan;
}

}  // namespace ortkit::cli
