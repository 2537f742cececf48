#pragma once
// The reports of `ortkit bench`: a finished sweep, --compare and --tune turned into text, JSON, CSV
// or markdown (and the sweep into an SVG plot). Each returns the text for stdout; nothing here
// measures, prints or decides an exit code.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "commands.h"
#include "input_flags.h"
#include "ortkit/bench/profile.h"
#include "ortkit/bench/run_comparison.h"
#include "ortkit/bench/runner.h"
#include "ortkit/bench/shape_sweep.h"
#include "ortkit/bench/tune.h"
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

/// One measured shape point of the sweep, with the inputs it ran on.
struct PointResult {
  ShapePoint point;
  std::vector<PreparedInput> sources;
  std::vector<std::vector<std::int64_t>> shapes;
  BenchResult result;
};

/// A finished sweep: the points measured before it ended, and why it ended early if it did.
struct Measurement {
  std::vector<PointResult> points;
  double session_create_ms = 0;
  std::optional<std::string> stopped;  ///< why the sweep ended early
  int stop_exit_code = kExitOk;
  std::optional<ProfileReport> profile;
  std::vector<std::string> size_notes;  ///< sizes found by running (SettleSizes)
};

/// The sweep's report in `format`. `batch_dim` is the inputs' batch symbol ("" when none): points
/// are compared with batch 1 along it. Text is coloured with `style`; the JSON keeps up to 10,000
/// samples per point so that --compare can read it back.
std::string RenderBenchReport(const BenchFlags& flags, const SessionConfig& config, const Measurement& m,
                              const std::string& batch_dim, Format format, const Style& style);

/// The SVG of latency and throughput against batch size, one series per size of the other dims.
std::string RenderBenchPlot(const Measurement& m, const std::string& batch_dim, const std::string& title);

/// The --compare report of `flags.compare[0]` (base) against `flags.compare[1]` in `format`.
std::string RenderCompareReport(const BenchFlags& flags, const CompareOptions& options, const RunComparison& report,
                                Format format, const Style& style);

/// The --tune report: every candidate with why it was or was not chosen; with --format json also
/// the serving configuration `serving` (null when nothing fits the budget). CSV and markdown get
/// the text table.
std::string RenderTuneReport(const BenchFlags& flags, const TuneOptions& options, const TuneReport& report,
                             const nlohmann::json& serving, Format format, const Style& style);

}  // namespace ortkit::cli
