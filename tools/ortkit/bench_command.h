#pragma once
// The parts of `ortkit bench`: its flags, its three modes (a sweep, --compare, --tune) and what the
// modes share. bench_command.cpp registers the flags, checks them and picks the mode; each mode
// is in a file of its own (with its own report), and a sweep's report is rendered in bench_render.cpp.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "input_flags.h"
#include "model_session.h"
#include "ortkit/bench/measure_sweep.h"
#include "ortkit/bench/runner.h"
#include "ortkit/bench/shape_sweep.h"
#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "terminal.h"

namespace ortkit::cli {

/// The options of `ortkit bench`: the library's options (the session's and the measuring's), whose
/// in-class defaults are the flag defaults, and what the command itself adds. The reports echo them
/// (model, session settings, amount measured, where files went).
struct BenchFlags {
  std::filesystem::path model;
  std::vector<std::string> dims;
  std::string batch;
  InputFlags inputs;  ///< --shape, --input, --seed (the sizes of each point are set as values)
  /// --provider, --intra-threads, --inter-threads (0: the runtime's default), --execution-mode; the rest
  /// from the flags below (MakeBenchPlan).
  SessionConfig session;
  int opt_level = OptimizationLevelNumber(SessionConfig{}.optimization_level);
  bool no_mem_pattern = false;
  bool no_arena = false;
  BenchOptions run;      ///< --iterations, --warmup, --concurrency, --io-binding; duration_s from --duration
  std::string duration;  ///< "10s", "500ms"; empty: --iterations
  int sessions = 1;
  bool profile = false;
  std::string profile_prefix = "ortkit_profile";
  std::int64_t profile_runs = 20;
  Format format = Format::kText;
  std::filesystem::path plot;
  std::filesystem::path report_page;  ///< --report: the HTML page (with --profile, the time over the graph)
  std::vector<std::filesystem::path> compare;
  double min_change = 5;  ///< percent: run-to-run drift on a shared machine exceeds the in-run noise band
  bool tune = false;
  std::string latency_budget;
  std::string time_budget = "60s";
  std::filesystem::path write_config;
  int max_instances = 4;

  /// "sequential" or "parallel", as --execution-mode names it.
  const char* ExecutionMode() const { return session.sequential_execution ? "sequential" : "parallel"; }
};

/// Registers bench's flags on `cmd` into `flags`, the defaults read from it (bench_flags.cpp).
void RegisterBenchFlags(CLI::App* cmd, BenchFlags& flags);

/// The flags that measure a model, checked and parsed.
struct BenchPlan {
  SessionConfig config;
  BenchOptions run;                   ///< the flags' with --duration; checked (BenchOptions::Validate)
  std::vector<std::int64_t> batches;  ///< --batch; empty: the model's default
  std::vector<SweepAxis> sweeps;      ///< --dim
  double latency_budget_ms = 0;       ///< --latency-budget, with --tune
  double time_budget_s = 0;           ///< --time-budget, with --tune
};

/// Checks the flags that measure a model (those with --compare are checked by RunCompare's caller)
/// in a fixed order and parses them (bench_plan.cpp); `cmd` says which flags were given. Errors are
/// the message for the user, naming the flag and its value.
Result<BenchPlan> MakeBenchPlan(const BenchFlags& flags, const CLI::App& cmd);

/// The sweep of shapes (bench_sweep_command.cpp); returns the exit code.
int RunBenchSweep(const BenchFlags& flags, const BenchPlan& plan);

/// --compare BASE.json NEW.json (bench_compare_command.cpp); returns the exit code.
int RunCompare(const BenchFlags& flags);

/// --tune (bench_tune_command.cpp); returns the exit code.
int RunTune(const BenchFlags& flags, const BenchPlan& plan);

/// Writes `text` to `path`, replacing it (kIo when it cannot).
Status WriteTextFile(const std::filesystem::path& path, const std::string& text);

// The inputs of one shape point (bench_inputs.cpp) ----------------------------------------------

/// Where the inputs of every shape point come from: the flags' sources (--shape, --input, --seed), and
/// sizes for the dimensions neither the flags nor the points set, found once by running the model.
struct BenchInputSources {
  InputSources sources;
  std::map<std::string, std::int64_t> found_sizes;
};

/// The sources of `flags` (--shape, --input, --seed), checked; then SettleBenchSizes finds the sizes the
/// flags and `first` leave open by running the model, and returns what it found, for the report.
Result<BenchInputSources> ParseBenchInputs(const BenchFlags& flags);
Result<std::vector<std::string>> SettleBenchSizes(OpenedModel& opened, const ShapePoint& first,
                                                  BenchInputSources& inputs);

/// Makes the inputs of a point (files or synthesised, at the point's sizes) for the model `opened` holds.
/// `opened` and `inputs` must outlive the returned function.
InputsForPoint PointInputMaker(const OpenedModel& opened, const BenchInputSources& inputs);

/// Progress on a terminal only: stderr, overwritten in place, erased when done.
class ProgressBar {
 public:
  ProgressBar() : enabled_(::isatty(::fileno(stderr)) != 0) {}
  ~ProgressBar() { Clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Show(const std::string& what, double fraction);
  void Clear();

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace ortkit::cli
