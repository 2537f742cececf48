#pragma once
// The parts of `ortkit bench`: its flags, its three modes (a sweep, --compare, --tune) and what the
// modes share. bench_command.cpp registers the flags, checks them and picks the mode; each mode
// is in a file of its own (with its own report), and a sweep's report is rendered in bench_render.cpp.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "input_flags.h"
#include "model_session.h"
#include "ortkit/bench/measure_sweep.h"
#include "ortkit/bench/shape_sweep.h"
#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "terminal.h"

namespace ortkit::cli {

/// The options of `ortkit bench`; the in-class defaults are the flag defaults. The reports echo
/// them (model, session settings, amount measured, where files went).
struct BenchFlags {
  std::filesystem::path model;
  std::vector<std::string> dims;
  std::string batch;
  InputFlags inputs;      ///< --shape, --input, --seed (its dims are set per shape point)
  int intra_threads = 0;  ///< 0: the runtime's default
  int inter_threads = 0;
  std::string execution_mode = "sequential";
  int opt_level = 99;
  std::string provider = "cpu";
  std::int64_t iterations = 100;
  std::string duration;  ///< "10s", "500ms"; empty: --iterations
  std::int64_t warmup = 5;
  int concurrency = 1;
  int sessions = 1;
  bool io_binding = false;
  bool no_mem_pattern = false;
  bool no_arena = false;
  bool profile = false;
  std::string profile_prefix = "ortkit_profile";
  std::int64_t profile_runs = 20;
  std::string format = "text";
  std::filesystem::path plot;
  std::vector<std::filesystem::path> compare;
  double min_change = 5;  ///< percent: run-to-run drift on a shared machine exceeds the in-run noise band
  bool tune = false;
  std::string latency_budget;
  std::string time_budget = "60s";
  std::filesystem::path write_config;
  int max_instances = 4;
};

/// The flags that measure a model, checked and parsed.
struct BenchPlan {
  SessionConfig config;
  std::vector<std::int64_t> batches;  ///< --batch; empty: the model's default
  std::vector<SweepAxis> sweeps;      ///< --dim
  std::optional<double> duration_s;   ///< --duration
  double latency_budget_ms = 0;       ///< --latency-budget, with --tune
  double time_budget_s = 0;           ///< --time-budget, with --tune
};

/// Checks the flags that measure a model (those with --compare are checked by RunCompare's caller)
/// in a fixed order and parses them (bench_plan.cpp); `cmd` says which flags were given. Errors are
/// the message for the user, naming the flag and its value.
Result<BenchPlan> MakeBenchPlan(const BenchFlags& flags, const CLI::App& cmd);

/// The sweep of shapes (bench_sweep_command.cpp); returns the exit code.
int RunBenchSweep(const BenchFlags& flags, Format format, const BenchPlan& plan);

/// --compare BASE.json NEW.json (bench_compare_command.cpp); returns the exit code.
int RunCompare(const BenchFlags& flags, Format format);

/// --tune (bench_tune_command.cpp); returns the exit code.
int RunTune(const BenchFlags& flags, Format format, const BenchPlan& plan);

/// Reports `summary` as bench's failure (ReportFailure) and returns `exit_code`.
int FailBench(const std::string& summary, Format format, int exit_code);

/// Writes `text` to `path`, replacing it (kIo when it cannot).
Status WriteTextFile(const std::filesystem::path& path, const std::string& text);

// The inputs of one shape point (bench_inputs.cpp) ----------------------------------------------

/// The input flags for `point`: `flags.inputs` with --dim set to the point's sizes.
InputFlags InputFlagsAt(const BenchFlags& flags, const ShapePoint& point);

/// Sizes for the dimensions neither the flags nor the shape points set, found by running the model at
/// `first` (SettleSizes) and kept in `flags` for every later InputFlagsAt; what was found, for the report.
Result<std::vector<std::string>> SettleBenchSizes(OpenedModel& opened, const ShapePoint& first, BenchFlags& flags);

/// Makes the inputs of a point from `flags` (files or synthesised) for the model `opened` holds.
/// `opened` and `flags` must outlive the returned function.
InputsForPoint PointInputMaker(const OpenedModel& opened, const BenchFlags& flags);

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
