// ortkit bench MODEL: latency and throughput over a sweep of shapes in one session; --profile,
// --compare BASE.json NEW.json and --tune --latency-budget. Flags, their checks, the runs and the exit
// codes are here; the reports are rendered in bench_report.cpp.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bench_report.h"
#include "commands.h"
#include "input_flags.h"
#include "model_session.h"
#include "ortkit/bench/profile.h"
#include "ortkit/bench/run_comparison.h"
#include "ortkit/bench/runner.h"
#include "ortkit/bench/shape_sweep.h"
#include "ortkit/bench/tune.h"
#include "ortkit/core/cpus.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxThreads = 1024;
// ---------------------------------------------------------------------------------------------
// Flag checks: each failure is a specific message and exit code 2.

/// "50ms", "0.5s", "2m", or a bare number in `default_unit` -> seconds.
Result<double> ParseDuration(const std::string& text, const std::string& flag, double default_unit_s) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {{"ms", 1e-3}, {"us", 1e-6}, {"s", 1}, {"m", 60}};
  std::string number = text;
  double unit = default_unit_s;
  for (const auto& [suffix, scale] : kUnits) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      number = text.substr(0, text.size() - suffix.size());
      unit = scale;
      break;
    }
  }
  try {
    std::size_t used = 0;
    const double v = std::stod(number, &used);
    if (used == number.size() && std::isfinite(v) && v > 0) return v * unit;
    if (used == number.size() && std::isfinite(v)) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{} {}: a duration must be greater than zero", flag, text));
    }
  } catch (const std::exception&) {
  }
  return MakeError(ErrorKind::kInvalidArgument, fmt::format("{} '{}': not a duration (e.g. 10s, 500ms)", flag, text));
}

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
  static constexpr std::pair<int, GraphOptimizationLevel> kLevels[] = {
      {0, ORT_DISABLE_ALL}, {1, ORT_ENABLE_BASIC}, {2, ORT_ENABLE_EXTENDED}, {99, ORT_ENABLE_ALL}};
  SessionConfig config;
  config.provider = flags.provider;
  config.intra_op_threads = flags.intra_threads;
  config.inter_op_threads = flags.inter_threads;
  config.sequential_execution = flags.execution_mode == "sequential";
  config.enable_memory_pattern = !flags.no_mem_pattern;
  config.enable_cpu_arena = !flags.no_arena;
  auto level =
      std::find_if(std::begin(kLevels), std::end(kLevels), [&](const auto& l) { return l.first == flags.opt_level; });
  if (level == std::end(kLevels)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--opt-level {}: expected 0, 1, 2 or 99", flags.opt_level));
  }
  config.optimization_level = level->second;
  const ProviderInfo* provider = FindProvider(flags.provider);
  if (provider == nullptr) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--provider {}: unknown; known providers: {}",
                                                              flags.provider, fmt::join(KnownProviderNames(), ", ")));
  }
  const auto available = Runtime::AvailableProviders();
  if (std::find(available.begin(), available.end(), provider->ort_name) == available.end()) {
    return MakeError(ErrorKind::kUnavailable,
                     fmt::format("--provider {}: {} is not available in this ONNX Runtime build ({}); available: {}",
                                 flags.provider, provider->ort_name, Runtime::Version(), fmt::join(available, ", ")));
  }
  return config;
}

// ---------------------------------------------------------------------------------------------
// Progress on a terminal only: stderr, overwritten in place, erased when done.

class ProgressBar {
 public:
  ProgressBar() : enabled_(::isatty(::fileno(stderr)) != 0) {}
  ~ProgressBar() { Clear(); }
  void Show(const std::string& what, double fraction) {
    if (!enabled_) return;
    const int width = 30;
    const int filled = static_cast<int>(fraction * width + 0.5);
    std::fprintf(stderr, "\r  [%s%s] %3d%%  %s\033[K", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), static_cast<int>(fraction * 100 + 0.5), what.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (!shown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

// ---------------------------------------------------------------------------------------------
// Measuring.

InputFlags InputsForPoint(const BenchFlags& flags, const ShapePoint& point) {
  InputFlags inputs = flags.inputs;
  inputs.dims.clear();
  for (const auto& [name, value] : point.dims) inputs.dims.push_back(fmt::format("{}={}", name, value));
  return inputs;
}

// Sizes for the dimensions neither the flags nor the shape points set, found by running the model at
// `first` (SettleSizes), kept in `flags` for every later InputsForPoint; what was found, for the report.
Result<std::vector<std::string>> SettleBenchSizes(OpenedModel& opened, const ShapePoint& first, BenchFlags& flags) {
  InputFlags inputs = InputsForPoint(flags, first);
  ORTKIT_ASSIGN_OR_RETURN(auto notes, SettleSizes(*opened.session, opened.inputs, opened.model->proto.get(), inputs));
  flags.inputs.found_sizes = inputs.found_sizes;
  std::vector<std::string> sizes;
  for (const auto& [dim, size] : inputs.found_sizes) sizes.push_back(fmt::format("{}={}", dim, size));
  if (!sizes.empty())
    notes.insert(notes.begin(), fmt::format("dimensions no flag sets are at {} (typical of the inputs, or the smallest "
                                            "that run; --dim sets them)",
                                            fmt::join(sizes, " ")));
  return notes;
}

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return MakeError(ErrorKind::kIo, fmt::format("cannot write {}", path.string()));
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// The three modes.

int Fail(const std::string& summary, Format format, int exit_code) {
  ReportFailure("bench", {}, summary, format);
  return exit_code;
}

Result<std::unique_ptr<Session>> CreateProfiledSession(Runtime& runtime, const BenchFlags& flags,
                                                       SessionConfig config) {
  config.enable_profiling = true;
  config.profile_prefix = flags.profile_prefix;
  return Session::Create(runtime, flags.model, config);
}

/// Profiles every shape point in one profiled session (a separate session, so that the
/// profiler's overhead stays out of the figures above).
Result<ProfileReport> Profile(Runtime& runtime, const BenchFlags& flags, const SessionConfig& config,
                              const std::vector<PointResult>& points, const std::vector<TensorSpec>& specs,
                              const onnx::ModelProto* model) {
  ORTKIT_ASSIGN_OR_RETURN(auto session, CreateProfiledSession(runtime, flags, config));
  for (const auto& p : points) {
    ORTKIT_ASSIGN_OR_RETURN(auto prepared, PrepareInputs(specs, model, InputsForPoint(flags, p.point)));
    BenchOptions options;
    options.iterations = flags.profile_runs;
    options.warmup = 0;
    auto profiled = RunBenchmark(*session, prepared.tensors, options);
    if (!profiled.ok()) {
      (void)EndProfiling(*session);
      return profiled.error();
    }
  }
  ORTKIT_ASSIGN_OR_RETURN(auto trace, EndProfiling(*session));
  return ReadProfileTrace(trace, flags.provider);
}

int RunBench(const BenchFlags& flags, Format format, const SessionConfig& config,
             const std::vector<std::int64_t>& batches, const std::vector<DimSweep>& sweeps,
             std::optional<double> duration_s) {
  int exit_code = kExitOk;
  Measurement m;
  const auto create_start = Clock::now();
  auto opened = OpenModel(flags.model, config, format, "bench", &exit_code);
  if (!opened.ok()) return exit_code;
  m.session_create_ms = std::chrono::duration<double, std::milli>(Clock::now() - create_start).count();
  std::vector<std::unique_ptr<Session>> extra;
  std::vector<Session*> sessions = {opened->session.get()};
  for (int i = 1; i < flags.sessions; ++i) {
    auto session = Session::Create(*opened->runtime, flags.model, config);
    if (!session.ok())
      return Fail(fmt::format("creating session {} of {}: {}", i + 1, flags.sessions, session.error().message), format,
                  kExitFindings);
    sessions.push_back(session->get());
    extra.push_back(std::move(session).value());
  }

  // Unnamed dimensions are INPUT:AXIS, and sizes no flag sets are found by running (SettleSizes).
  const std::vector<TensorSpec> named = NameUnnamedAxes(opened->inputs);
  auto points = ExpandShapePoints(named, batches, sweeps);
  if (!points.ok()) return Fail(points.error().message, format, kExitUsage);
  const std::string batch_dim = FindBatchSymbol(named);
  BenchFlags settled = flags;
  if (auto notes = SettleBenchSizes(*opened, points->front(), settled); notes.ok())
    m.size_notes = std::move(notes).value();
  else
    return Fail(notes.error().message, format, kExitUsage);

  ProgressBar progress;
  for (std::size_t i = 0; i < points->size(); ++i) {
    const ShapePoint& point = (*points)[i];
    auto prepared = PrepareInputs(opened->inputs, opened->model->proto.get(), InputsForPoint(settled, point));
    if (!prepared.ok()) {
      if (m.points.empty()) return Fail(prepared.error().message, format, kExitUsage);
      m.stopped = fmt::format("{}: cannot make inputs: {}", point.label, prepared.error().message);
      m.stop_exit_code = kExitUsage;
      break;
    }
    BenchOptions options;
    options.iterations = flags.iterations;
    options.duration_s = duration_s.value_or(0);
    options.warmup = flags.warmup;
    options.concurrency = flags.concurrency;
    options.io_binding = flags.io_binding;
    options.rows_per_run = point.batch;
    const std::string what = fmt::format("{} ({}/{})", point.label, i + 1, points->size());
    options.progress = [&](double fraction) { progress.Show(what, fraction); };
    auto result = RunBenchmark(std::span<Session* const>(sessions), prepared->tensors, options);
    progress.Clear();
    if (!result.ok()) {
      const bool input_problem = result.error().kind == ErrorKind::kInvalidArgument;
      Location where;
      where.file = flags.model.string();
      Diagnosis d = input_problem ? Diagnose("runtime.invalid-input", result.error().message, where)
                                  : TranslateRuntimeError(result.error().message, where, /*during_run=*/true);
      if (m.points.empty()) {
        ReportFailure("bench", {d}, fmt::format("the model does not run at {}", point.label), format);
        return input_problem ? kExitUsage : kExitFindings;
      }
      m.stopped = fmt::format("{}: {}", point.label, d.message);
      m.stop_exit_code = input_problem ? kExitUsage : kExitFindings;
      break;
    }
    PointResult p{point, prepared->sources, {}, std::move(result).value()};
    for (const auto& t : prepared->tensors) p.shapes.push_back(t.tensor.shape());
    const bool failed = p.result.failure.has_value();
    if (failed) {
      m.stopped = fmt::format("{}: a run failed after {} measured runs: {}", point.label, p.result.runs,
                              p.result.failure->message);
      m.stop_exit_code = kExitFindings;
    }
    m.points.push_back(std::move(p));
    if (failed) break;
  }

  if (flags.profile && !m.points.empty()) {
    auto profile = Profile(*opened->runtime, settled, config, m.points, opened->inputs, opened->model->proto.get());
    if (!profile.ok()) {
      m.stopped = "profiling failed: " + profile.error().message;
      m.stop_exit_code = kExitFindings;
    } else {
      m.profile = std::move(profile).value();
    }
  }

  if (!flags.plot.empty()) {
    auto written =
        WriteFile(flags.plot, RenderBenchPlot(m, batch_dim, "ortkit bench " + flags.model.filename().string()));
    if (!written.ok()) return Fail(written.error().message, format, kExitUsage);
  }

  std::fputs(RenderBenchReport(flags, config, m, batch_dim, format, Style::ForStream(stdout)).c_str(), stdout);
  if (m.stopped && format != Format::kText && format != Format::kJson)
    std::fprintf(stderr, "ortkit bench: stopped early: %s\n", m.stopped->c_str());
  return m.stop_exit_code;
}

// --compare ------------------------------------------------------------------------------------

Result<std::vector<ComparablePoint>> ReadSavedRun(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return MakeError(ErrorKind::kIo, fmt::format("--compare {}: cannot read the file", path.string()));
  nlohmann::json json;
  try {
    in >> json;
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--compare {}: not JSON: {}", path.string(), e.what()));
  }
  if (!json.is_object() || !json.contains("results") || !json["results"].is_array()) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--compare {}: not an `ortkit bench --format json` report (no \"results\" array)", path.string()));
  }
  std::vector<ComparablePoint> points;
  try {
    for (const auto& r : json["results"]) {
      ComparablePoint p;
      p.label = r.at("label").get<std::string>();
      p.samples_ms = r.at("samples_ms").get<std::vector<double>>();
      p.runs_per_s = r.at("runs_per_s").get<double>();
      points.push_back(std::move(p));
    }
  } catch (const std::exception& e) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--compare {}: a result lacks label, samples_ms or runs_per_s: {}", path.string(), e.what()));
  }
  return points;
}

int RunCompare(const BenchFlags& flags, Format format) {
  auto base = ReadSavedRun(flags.compare[0]);
  if (!base.ok()) return Fail(base.error().message, format, kExitUsage);
  auto candidate = ReadSavedRun(flags.compare[1]);
  if (!candidate.ok()) return Fail(candidate.error().message, format, kExitUsage);
  CompareOptions options;
  options.min_change = flags.min_change / 100;
  auto report = CompareRuns(*base, *candidate, options);
  if (!report.ok()) return Fail(report.error().message, format, kExitUsage);
  const int exit_code = report->verdict == ChangeVerdict::kSlower ? kExitFindings : kExitOk;

  std::fputs(RenderCompareReport(flags, options, *report, format, Style::ForStream(stdout)).c_str(), stdout);
  return exit_code;
}

// --tune ---------------------------------------------------------------------------------------

int RunTune(const BenchFlags& flags, Format format, const SessionConfig& config,
            const std::vector<std::int64_t>& batches, const std::vector<DimSweep>& sweeps, double latency_budget_ms,
            double time_budget_s) {
  int exit_code = kExitOk;
  auto opened = OpenModel(flags.model, config, format, "bench", &exit_code);
  if (!opened.ok()) return exit_code;
  const std::vector<TensorSpec> named = NameUnnamedAxes(opened->inputs);
  const std::string batch_dim = FindBatchSymbol(named);
  std::vector<std::int64_t> tune_batches = batches;
  if (tune_batches.empty())
    tune_batches = batch_dim.empty() ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1, 2, 4, 8, 16, 32};
  std::sort(tune_batches.begin(), tune_batches.end());
  // Other dimensions: the first size of each --dim sweep, so the tuner measures one workload.
  std::vector<DimSweep> fixed_dims;
  for (const auto& s : sweeps) fixed_dims.push_back({s.name, {s.values.front()}});
  auto points = ExpandShapePoints(named, tune_batches, fixed_dims);
  if (!points.ok()) return Fail(points.error().message, format, kExitUsage);
  if (tune_batches.empty()) tune_batches.push_back(points->front().batch);
  BenchFlags settled = flags;
  if (auto notes = SettleBenchSizes(*opened, points->front(), settled); !notes.ok())
    return Fail(notes.error().message, format, kExitUsage);
  std::map<std::string, std::int64_t> other_dims;
  for (const auto& [name, value] : points->front().dims) {
    if (name != batch_dim) other_dims[name] = value;
  }
  // Check the inputs once before spending the time budget.
  auto first_inputs =
      PrepareInputs(opened->inputs, opened->model->proto.get(), InputsForPoint(settled, points->front()));
  if (!first_inputs.ok()) return Fail(first_inputs.error().message, format, kExitUsage);

  TuneOptions options;
  options.latency_budget_ms = latency_budget_ms;
  options.time_budget_s = time_budget_s;
  options.base = config;
  options.space.cores = UsableCpus().cores;
  options.space.batches = tune_batches;
  options.space.max_instances = flags.max_instances;
  ProgressBar progress;
  options.progress = [&](std::size_t done, std::size_t total) {
    progress.Show(fmt::format("tuning {}/{}", done, total), static_cast<double>(done) / static_cast<double>(total));
  };
  const std::vector<TensorSpec> specs = opened->inputs;
  const onnx::ModelProto* model = opened->model->proto.get();
  InputsForBatch inputs_for_batch = [&](std::int64_t batch) -> Result<std::vector<NamedTensor>> {
    ShapePoint point;
    point.dims = other_dims;
    if (!batch_dim.empty()) point.dims[batch_dim] = batch;
    ORTKIT_ASSIGN_OR_RETURN(auto prepared, PrepareInputs(specs, model, InputsForPoint(settled, point)));
    return std::move(prepared.tensors);
  };
  opened->session.reset();  // the tuner creates its own sessions; this one would only hold memory
  auto report = Tune(*opened->runtime, flags.model, inputs_for_batch, options);
  progress.Clear();
  if (!report.ok()) return Fail("tuning failed: " + report.error().message, format, kExitFindings);

  const std::string name = flags.model.stem().string();
  const nlohmann::json serving =
      ServingConfigJson(*report, options, name, batch_dim.empty() ? "batch" : batch_dim, other_dims);
  if (report->best && !flags.write_config.empty()) {
    auto written = WriteFile(flags.write_config, JsonText(serving) + "\n");
    if (!written.ok()) return Fail(written.error().message, format, kExitUsage);
  }
  const int result_code = report->best ? kExitOk : kExitFindings;
  std::fputs(RenderTuneReport(flags, options, *report, serving, format, Style::ForStream(stdout)).c_str(), stdout);
  return result_code;
}

// ---------------------------------------------------------------------------------------------

int Run(const BenchFlags& flags, const CLI::App& cmd) {
  Format format = Format::kText;
  ParseFormat(flags.format, &format);
  auto usage = [&](const std::string& message) { return Fail(message, format, kExitUsage); };

  if (!flags.compare.empty()) {
    if (flags.compare.size() != 2) return usage("--compare takes two files: BASE.json NEW.json");
    if (flags.min_change < 0 || flags.min_change >= 100)
      return usage(fmt::format("--min-change {}: a percentage in [0, 100)", flags.min_change));
    return RunCompare(flags, format);
  }
  if (flags.model.empty()) return usage("a MODEL is required (or --compare BASE.json NEW.json)");
  for (const auto& [flag, value] : {std::pair{"--intra-threads", flags.intra_threads},
                                    {"--inter-threads", flags.inter_threads},
                                    {"--concurrency", flags.concurrency},
                                    {"--sessions", flags.sessions},
                                    {"--max-instances", flags.max_instances}}) {
    auto checked = CheckThreads(flag, value, cmd.count(flag) > 0);
    if (!checked.ok()) return usage(checked.error().message);
  }
  if (flags.iterations < 1)
    return usage(fmt::format("--iterations {}: at least one run must be measured", flags.iterations));
  if (flags.warmup < 0) return usage(fmt::format("--warmup {}: cannot be negative", flags.warmup));
  if (flags.profile_runs < 1) return usage(fmt::format("--profile-runs {}: at least one run", flags.profile_runs));
  std::optional<double> duration_s;
  if (!flags.duration.empty()) {
    auto d = ParseDuration(flags.duration, "--duration", 1);
    if (!d.ok()) return usage(d.error().message);
    duration_s = *d;
  }
  auto config = MakeConfig(flags);
  if (!config.ok()) return usage(config.error().message);
  std::vector<std::int64_t> batches;
  if (!flags.batch.empty()) {
    auto parsed = ParseSizeList(flags.batch, "--batch");
    if (!parsed.ok()) return usage(parsed.error().message);
    batches = *parsed;
  }
  auto sweeps = ParseDimSweeps(flags.dims);
  if (!sweeps.ok()) return usage(sweeps.error().message);
  for (const auto& [path, flag] : {std::pair{flags.plot, "--plot"}, {flags.write_config, "--write-config"}}) {
    auto writable = CheckWritable(path, flag);
    if (!writable.ok()) return usage(writable.error().message);
  }
  if (!std::filesystem::exists(flags.model)) return usage(fmt::format("{}: no such file", flags.model.string()));

  if (flags.tune) {
    if (flags.latency_budget.empty()) return usage("--tune needs --latency-budget (e.g. --latency-budget 50ms)");
    auto latency = ParseDuration(flags.latency_budget, "--latency-budget", 1e-3);
    if (!latency.ok()) return usage(latency.error().message);
    auto time = ParseDuration(flags.time_budget, "--time-budget", 1);
    if (!time.ok()) return usage(time.error().message);
    return RunTune(flags, format, *config, batches, *sweeps, *latency * 1000, *time);
  }
  if (!flags.write_config.empty()) return usage("--write-config writes the configuration --tune picks; add --tune");
  return RunBench(flags, format, *config, batches, *sweeps, duration_s);
}

}  // namespace

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
  cmd->add_option("--seed", flags->inputs.seed, "seed for synthesised inputs")->capture_default_str();
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
