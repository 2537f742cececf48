// ortkit bench MODEL: latency and throughput over a sweep of shapes in one session; --profile,
// --compare BASE.json NEW.json and --tune --latency-budget.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "input_flags.h"
#include "model_session.h"
#include "ortkit/bench/compare.h"
#include "ortkit/bench/plot.h"
#include "ortkit/bench/profile.h"
#include "ortkit/bench/runner.h"
#include "ortkit/bench/shape_sweep.h"
#include "ortkit/bench/tune.h"
#include "ortkit/core/units.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxThreads = 1024;
/// Samples a JSON report keeps per shape: enough for --compare to bootstrap a noise band.
constexpr std::size_t kSavedSamples = 10000;

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
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{} {}: a thread count must be between 1 and {} (this machine has {} hardware threads)", flag,
                    value, kMaxThreads, std::thread::hardware_concurrency()));
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

struct PointResult {
  ShapePoint point;
  std::vector<PreparedInput> sources;
  std::vector<std::vector<std::int64_t>> shapes;
  BenchResult result;
};

struct Measurement {
  std::vector<PointResult> points;
  double session_create_ms = 0;
  std::optional<std::string> stopped;  ///< why the sweep ended early
  int stop_exit_code = kExitOk;
  std::optional<ProfileReport> profile;
};

std::string F(double v, int decimals = 3) { return fmt::format("{:.{}f}", v, decimals); }

std::string Ms(double v) { return v >= 100 ? F(v, 1) : v >= 10 ? F(v, 2) : F(v, 3); }

InputFlags InputsForPoint(const BenchFlags& flags, const ShapePoint& point) {
  InputFlags inputs = flags.inputs;
  inputs.dims.clear();
  for (const auto& [name, value] : point.dims) inputs.dims.push_back(fmt::format("{}={}", name, value));
  return inputs;
}

/// Throughput relative to batch 1 with the other dimensions equal; 0 when there is no such point.
double RelativeToBatchOne(const std::vector<PointResult>& points, const PointResult& p, const std::string& batch_dim) {
  for (const auto& other : points) {
    if (other.point.batch != 1 || other.result.samples_per_s <= 0) continue;
    bool same = true;
    for (const auto& [name, value] : p.point.dims) {
      if (name != batch_dim && other.point.dims.count(name) && other.point.dims.at(name) != value) same = false;
    }
    if (same) return p.result.samples_per_s / other.result.samples_per_s;
  }
  return 0;
}

std::string SeriesLabel(const ShapePoint& point, const std::string& batch_dim) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : point.dims) {
    if (name != batch_dim) parts.push_back(fmt::format("{}={}", name, value));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

// ---------------------------------------------------------------------------------------------
// Reports.

nlohmann::json LatencyJson(const LatencyStats& s) {
  return {{"min", s.min}, {"mean", s.mean},  {"p50", s.p50}, {"p90", s.p90},      {"p95", s.p95},
          {"p99", s.p99}, {"p99_9", s.p999}, {"max", s.max}, {"stddev", s.stddev}};
}

nlohmann::json ProfileJson(const ProfileReport& p) {
  auto node = [](const NodeProfile& n) {
    return nlohmann::json{{"node", n.node},   {"op_type", n.op_type},   {"provider", n.provider},
                          {"calls", n.calls}, {"total_us", n.total_us}, {"share", n.share}};
  };
  auto group = [](const GroupProfile& g) {
    return nlohmann::json{
        {"name", g.name}, {"nodes", g.nodes}, {"calls", g.calls}, {"total_us", g.total_us}, {"share", g.share}};
  };
  nlohmann::json json = {{"trace", p.trace.string()},
                         {"runs", p.runs},
                         {"run_total_us", p.run_total_us},
                         {"node_total_us", p.node_total_us},
                         {"session_initialization_us", p.session_initialization_us}};
  json["top_nodes"] = nlohmann::json::array();
  for (std::size_t i = 0; i < p.nodes.size() && i < 20; ++i) json["top_nodes"].push_back(node(p.nodes[i]));
  json["op_types"] = nlohmann::json::array();
  for (const auto& g : p.op_types) json["op_types"].push_back(group(g));
  json["providers"] = nlohmann::json::array();
  for (const auto& g : p.providers) json["providers"].push_back(group(g));
  json["memory_copies"] = nlohmann::json::array();
  for (const auto& n : p.memory_copies) json["memory_copies"].push_back(node(n));
  json["cpu_fallbacks"] = nlohmann::json::array();
  for (const auto& n : p.cpu_fallbacks) json["cpu_fallbacks"].push_back(node(n));
  return json;
}

nlohmann::json ReportJson(const BenchFlags& flags, const SessionConfig& config, const Measurement& m,
                          const std::string& batch_dim) {
  nlohmann::json json = {
      {"model", flags.model.string()},
      {"onnxruntime", Runtime::Version()},
      {"provider", flags.provider},
      {"config",
       {{"intra_op_threads", config.intra_op_threads},
        {"inter_op_threads", config.inter_op_threads},
        {"execution_mode", flags.execution_mode},
        {"optimization_level", flags.opt_level},
        {"memory_pattern", config.enable_memory_pattern},
        {"cpu_arena", config.enable_cpu_arena},
        {"io_binding", flags.io_binding},
        {"concurrency", flags.concurrency},
        {"sessions", flags.sessions},
        {"warmup", flags.warmup},
        {"hardware_threads", std::thread::hardware_concurrency()}}},
      {"session_create_ms", m.session_create_ms},
      {"peak_rss_bytes", PeakResidentBytes()},
  };
  if (flags.duration.empty())
    json["config"]["iterations"] = flags.iterations;
  else
    json["config"]["duration"] = flags.duration;
  json["results"] = nlohmann::json::array();
  for (const auto& p : m.points) {
    const BenchResult& r = p.result;
    nlohmann::json point = {{"label", p.point.label},
                            {"dims", p.point.dims},
                            {"batch", p.point.batch},
                            {"first_run_ms", r.first_run_ms},
                            {"runs", r.runs},
                            {"wall_s", r.wall_s},
                            {"latency_ms", LatencyJson(r.latency)},
                            {"runs_per_s", r.runs_per_s},
                            {"samples_per_s", r.samples_per_s},
                            {"cpu_seconds", r.usage.cpu_seconds},
                            {"cpu_utilisation", r.usage.cpu_utilisation},
                            {"peak_rss_bytes", r.usage.peak_rss_bytes}};
    const double relative = RelativeToBatchOne(m.points, p, batch_dim);
    if (relative > 0) point["throughput_vs_batch1"] = relative;
    for (std::size_t i = 0; i < p.sources.size(); ++i) {
      point["inputs"].push_back({{"name", p.sources[i].name}, {"shape", p.shapes[i]}, {"source", p.sources[i].source}});
    }
    const auto kept = Thin(r.samples_ms, kSavedSamples);
    point["samples_kept"] = kept.size();
    point["samples_ms"] = kept;
    if (r.failure) point["failure"] = r.failure->message;
    json["results"].push_back(std::move(point));
  }
  if (m.stopped) json["stopped"] = *m.stopped;
  if (m.profile) json["profile"] = ProfileJson(*m.profile);
  return json;
}

std::vector<std::string> RowHeaders() {
  return {"shape", "first run", "min", "mean",   "p50",       "p90",        "p95", "p99",
          "p99.9", "max",       "std", "runs/s", "samples/s", "vs batch 1", "CPU"};
}

std::vector<std::string> RowCells(const std::vector<PointResult>& points, const PointResult& p,
                                  const std::string& batch_dim) {
  const BenchResult& r = p.result;
  const LatencyStats& s = r.latency;
  const double relative = RelativeToBatchOne(points, p, batch_dim);
  return {p.point.label,
          Ms(r.first_run_ms),
          Ms(s.min),
          Ms(s.mean),
          Ms(s.p50),
          Ms(s.p90),
          Ms(s.p95),
          Ms(s.p99),
          Ms(s.p999),
          Ms(s.max),
          Ms(s.stddev),
          F(r.runs_per_s, 1),
          F(r.samples_per_s, 1),
          relative > 0 ? fmt::format("{:.2f}x", relative) : "-",
          fmt::format("{:.0f}%", r.usage.cpu_utilisation * 100)};
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string RenderCsv(const Measurement& m, const std::string& batch_dim) {
  std::string out =
      "shape,batch,first_run_ms,min_ms,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,p99_9_ms,max_ms,stddev_ms,runs,runs_per_s,"
      "samples_per_s,throughput_vs_batch1,cpu_utilisation,peak_rss_bytes\n";
  for (const auto& p : m.points) {
    const BenchResult& r = p.result;
    const LatencyStats& s = r.latency;
    out += fmt::format(
        "{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{:.3f},{:.3f},{:.4f},{:.3f},{}"
        "\n",
        CsvField(p.point.label), p.point.batch, r.first_run_ms, s.min, s.mean, s.p50, s.p90, s.p95, s.p99, s.p999,
        s.max, s.stddev, r.runs, r.runs_per_s, r.samples_per_s, RelativeToBatchOne(m.points, p, batch_dim),
        r.usage.cpu_utilisation, r.usage.peak_rss_bytes);
  }
  return out;
}

std::string RenderMarkdown(const BenchFlags& flags, const Measurement& m, const std::string& batch_dim) {
  const auto headers = RowHeaders();
  std::string out =
      fmt::format("**ortkit bench** `{}` — provider {}, ONNX Runtime {}, session creation {} ms, peak RSS {}\n\n",
                  flags.model.string(), flags.provider, Runtime::Version(), Ms(m.session_create_ms),
                  HumanBytes(static_cast<std::uint64_t>(PeakResidentBytes())));
  out += "| " + fmt::format("{}", fmt::join(headers, " | ")) + " |\n|";
  for (std::size_t i = 0; i < headers.size(); ++i) out += i == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& p : m.points)
    out += "| " + fmt::format("{}", fmt::join(RowCells(m.points, p, batch_dim), " | ")) + " |\n";
  out += "\nLatencies in ms.\n";
  if (m.stopped) out += fmt::format("\n**Stopped early:** {}\n", *m.stopped);
  return out;
}

std::string RenderProfileText(const ProfileReport& p, const Style& style) {
  std::string out = fmt::format("\n{} {} profiled runs, {} ms of node time; trace kept at {}\n", style.Bold("profile:"),
                                p.runs, Ms(p.node_total_us / 1000), p.trace.string());
  Table top({"node", "op type", "provider", "calls", "total ms", "share"}, {false, false, false, true, true, true});
  for (std::size_t i = 0; i < p.nodes.size() && i < 10; ++i) {
    const auto& n = p.nodes[i];
    top.AddRow({n.node, n.op_type, n.provider, std::to_string(n.calls), Ms(n.total_us / 1000),
                fmt::format("{:.1f}%", n.share * 100)});
  }
  out += "\n  top nodes\n" + top.Render(style);
  Table types({"op type", "nodes", "calls", "total ms", "share"}, {false, true, true, true, true});
  for (const auto& g : p.op_types) {
    types.AddRow({g.name, std::to_string(g.nodes), std::to_string(g.calls), Ms(g.total_us / 1000),
                  fmt::format("{:.1f}%", g.share * 100)});
  }
  out += "\n  time per op type\n" + types.Render(style);
  Table providers({"provider", "nodes", "total ms", "share"}, {false, true, true, true});
  for (const auto& g : p.providers) {
    providers.AddRow({g.name, std::to_string(g.nodes), Ms(g.total_us / 1000), fmt::format("{:.1f}%", g.share * 100)});
  }
  out += "\n  nodes per execution provider\n" + providers.Render(style);
  if (p.memory_copies.empty()) {
    out += "\n  memory copies between devices: none\n";
  } else {
    Table copies({"node", "op type", "calls", "total ms", "share"}, {false, false, true, true, true});
    for (const auto& n : p.memory_copies) {
      copies.AddRow(
          {n.node, n.op_type, std::to_string(n.calls), Ms(n.total_us / 1000), fmt::format("{:.1f}%", n.share * 100)});
    }
    out += "\n  memory copies between devices\n" + copies.Render(style);
  }
  if (p.cpu_fallbacks.empty()) {
    out += "  CPU fallbacks: none\n";
  } else {
    Table fallbacks({"node", "op type", "total ms"}, {false, false, true});
    for (const auto& n : p.cpu_fallbacks) fallbacks.AddRow({n.node, n.op_type, Ms(n.total_us / 1000)});
    out += "\n  " + style.Yellow(fmt::format("{} nodes fell back to the CPU", p.cpu_fallbacks.size())) + "\n" +
           fallbacks.Render(style);
  }
  return out;
}

std::string RenderText(const BenchFlags& flags, const SessionConfig& config, const Measurement& m,
                       const std::string& batch_dim) {
  const Style style = Style::ForStream(stdout);
  auto threads = [](int n) { return n == 0 ? std::string("default") : std::to_string(n); };
  std::string out = fmt::format("{} {}  (provider {}, ONNX Runtime {}; intra {}, inter {}, {}, opt level {}{}{}{})\n",
                                style.Bold("ortkit bench"), flags.model.string(), flags.provider, Runtime::Version(),
                                threads(config.intra_op_threads), threads(config.inter_op_threads),
                                flags.execution_mode, flags.opt_level, flags.io_binding ? ", IO binding" : "",
                                flags.no_mem_pattern ? ", no memory pattern" : "", flags.no_arena ? ", no arena" : "");
  const bool bare_seconds = flags.duration.find_first_not_of("0123456789.") == std::string::npos;
  const std::string amount =
      flags.duration.empty() ? fmt::format("{} runs", flags.iterations) : flags.duration + (bare_seconds ? " s" : "");
  out += fmt::format(
      "session creation {} ms · peak RSS {} · {} per shape after {} warm-up · {} thread{} × {} session{}\n\n",
      Ms(m.session_create_ms), HumanBytes(static_cast<std::uint64_t>(PeakResidentBytes())), amount, flags.warmup,
      flags.concurrency, flags.concurrency == 1 ? "" : "s", flags.sessions, flags.sessions == 1 ? "" : "s");
  std::vector<bool> right(RowHeaders().size(), true);
  right[0] = false;
  Table table(RowHeaders(), right);
  for (const auto& p : m.points) table.AddRow(RowCells(m.points, p, batch_dim));
  out += table.Render(style);
  out += style.Dim("  latencies in ms; CPU: process CPU time / wall time while measuring (100% = one core)") + "\n";
  for (const auto& p : m.points) {
    if (p.result.failure)
      out += style.Red(fmt::format("  {}: stopped after {} runs: {}", p.point.label, p.result.runs,
                                   p.result.failure->message)) +
             "\n";
  }
  if (m.stopped) out += "\n" + style.Red("stopped early: ") + *m.stopped + "\n";
  if (m.profile) out += RenderProfileText(*m.profile, style);
  if (!flags.plot.empty()) out += fmt::format("\nplot written to {}\n", flags.plot.string());
  return out;
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

  auto points = ExpandShapePoints(opened->inputs, batches, sweeps);
  if (!points.ok()) return Fail(points.error().message, format, kExitUsage);
  const std::string batch_dim = FindBatchSymbol(opened->inputs);

  ProgressBar progress;
  for (std::size_t i = 0; i < points->size(); ++i) {
    const ShapePoint& point = (*points)[i];
    auto prepared = PrepareInputs(opened->inputs, opened->model->proto.get(), InputsForPoint(flags, point));
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
    auto profile = Profile(*opened->runtime, flags, config, m.points, opened->inputs, opened->model->proto.get());
    if (!profile.ok()) {
      m.stopped = "profiling failed: " + profile.error().message;
      m.stop_exit_code = kExitFindings;
    } else {
      m.profile = std::move(profile).value();
    }
  }

  if (!flags.plot.empty()) {
    std::vector<PlotPoint> plot;
    for (const auto& p : m.points) {
      plot.push_back({SeriesLabel(p.point, batch_dim), p.point.batch, p.result.latency.p50, p.result.latency.p99,
                      p.result.samples_per_s});
    }
    auto written = WriteFile(flags.plot, RenderSweepSvg(plot, "ortkit bench " + flags.model.filename().string()));
    if (!written.ok()) return Fail(written.error().message, format, kExitUsage);
  }

  std::string out;
  switch (format) {
    case Format::kJson: out = JsonText(ReportJson(flags, config, m, batch_dim)) + "\n"; break;
    case Format::kCsv: out = RenderCsv(m, batch_dim); break;
    case Format::kMarkdown: out = RenderMarkdown(flags, m, batch_dim); break;
    case Format::kText: out = RenderText(flags, config, m, batch_dim); break;
  }
  std::fputs(out.c_str(), stdout);
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

  if (format == Format::kJson) {
    nlohmann::json json = {{"base", flags.compare[0].string()},
                           {"candidate", flags.compare[1].string()},
                           {"min_change", options.min_change},
                           {"verdict", ToString(report->verdict)},
                           {"unmatched", report->unmatched}};
    json["points"] = nlohmann::json::array();
    for (const auto& p : report->points) {
      nlohmann::json point = {{"label", p.label}, {"verdict", ToString(p.verdict)}};
      for (const auto& f : p.figures) {
        point["figures"].push_back({{"figure", f.figure},
                                    {"base", f.base},
                                    {"candidate", f.candidate},
                                    {"ratio", f.ratio},
                                    {"noise_low", f.low},
                                    {"noise_high", f.high},
                                    {"gates", f.gates},
                                    {"verdict", ToString(f.verdict)}});
      }
      json["points"].push_back(std::move(point));
    }
    std::cout << JsonText(json) << "\n";
    return exit_code;
  }
  const Style style = Style::ForStream(stdout);
  auto colour = [&](ChangeVerdict v, const std::string& s) {
    return v == ChangeVerdict::kSlower ? style.Red(s) : v == ChangeVerdict::kFaster ? style.Green(s) : s;
  };
  std::vector<std::string> headers = {"shape", "figure", "base", "new", "ratio", "noise band (95%)", "verdict"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : report->points) {
    for (const auto& f : p.figures) {
      const bool throughput = f.figure == "throughput";
      rows.push_back({p.label, f.figure + (f.gates ? "" : " (info)"),
                      throughput ? F(f.base, 1) + "/s" : Ms(f.base) + " ms",
                      throughput ? F(f.candidate, 1) + "/s" : Ms(f.candidate) + " ms", fmt::format("{:.3f}", f.ratio),
                      fmt::format("{:.3f} .. {:.3f}", f.low, f.high), ToString(f.verdict)});
    }
  }
  std::string out;
  if (format == Format::kCsv) {
    out = "shape,figure,base,new,ratio,noise_low,noise_high,verdict\n";
    for (const auto& p : report->points) {
      for (const auto& f : p.figures) {
        out += fmt::format("{},{},{:.6f},{:.6f},{:.4f},{:.4f},{:.4f},{}\n", CsvField(p.label), f.figure, f.base,
                           f.candidate, f.ratio, f.low, f.high, ToString(f.verdict));
      }
    }
  } else if (format == Format::kMarkdown) {
    out = "| " + fmt::format("{}", fmt::join(headers, " | ")) + " |\n|---|---|---:|---:|---:|---|---|\n";
    for (const auto& row : rows) out += "| " + fmt::format("{}", fmt::join(row, " | ")) + " |\n";
    out += fmt::format("\n**ChangeVerdict: {}**\n", ToString(report->verdict));
  } else {
    Table table(headers, {false, false, true, true, true, false, false});
    std::size_t i = 0;
    for (const auto& p : report->points) {
      for (const auto& f : p.figures) {
        auto row = rows[i++];
        row.back() = colour(f.verdict, row.back());
        table.AddRow(row);
      }
    }
    out = fmt::format("{} {} -> {}\n\n", style.Bold("ortkit bench --compare"), flags.compare[0].string(),
                      flags.compare[1].string());
    out += table.Render(style);
    out += style.Dim(
               fmt::format("  ratio = new / base; the p50 latency and throughput decide; changes under {}% are noise",
                           flags.min_change)) +
           "\n";
    for (const auto& u : report->unmatched)
      out += style.Yellow(fmt::format("  {} is in only one of the runs", u)) + "\n";
    out += "\nverdict: " + colour(report->verdict, style.Bold(ToString(report->verdict))) + "\n";
  }
  std::fputs(out.c_str(), stdout);
  return exit_code;
}

// --tune ---------------------------------------------------------------------------------------

int RunTune(const BenchFlags& flags, Format format, const SessionConfig& config,
            const std::vector<std::int64_t>& batches, const std::vector<DimSweep>& sweeps, double latency_budget_ms,
            double time_budget_s) {
  int exit_code = kExitOk;
  auto opened = OpenModel(flags.model, config, format, "bench", &exit_code);
  if (!opened.ok()) return exit_code;
  const std::string batch_dim = FindBatchSymbol(opened->inputs);
  std::vector<std::int64_t> tune_batches = batches;
  if (tune_batches.empty())
    tune_batches = batch_dim.empty() ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1, 2, 4, 8, 16, 32};
  std::sort(tune_batches.begin(), tune_batches.end());
  // Other dimensions: the first size of each --dim sweep, so the tuner measures one workload.
  std::vector<DimSweep> fixed_dims;
  for (const auto& s : sweeps) fixed_dims.push_back({s.name, {s.values.front()}});
  auto points = ExpandShapePoints(opened->inputs, tune_batches, fixed_dims);
  if (!points.ok()) return Fail(points.error().message, format, kExitUsage);
  if (tune_batches.empty()) tune_batches.push_back(points->front().batch);
  std::map<std::string, std::int64_t> other_dims;
  for (const auto& [name, value] : points->front().dims) {
    if (name != batch_dim) other_dims[name] = value;
  }
  // Check the inputs once before spending the time budget.
  auto first_inputs = PrepareInputs(opened->inputs, opened->model->proto.get(), InputsForPoint(flags, points->front()));
  if (!first_inputs.ok()) return Fail(first_inputs.error().message, format, kExitUsage);

  TuneOptions options;
  options.latency_budget_ms = latency_budget_ms;
  options.time_budget_s = time_budget_s;
  options.base = config;
  options.space.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
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
    ORTKIT_ASSIGN_OR_RETURN(auto prepared, PrepareInputs(specs, model, InputsForPoint(flags, point)));
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
  if (format == Format::kJson) {
    nlohmann::json json = {{"model", flags.model.string()},
                           {"latency_budget_ms", latency_budget_ms},
                           {"time_budget_s", time_budget_s},
                           {"elapsed_s", report->elapsed_s}};
    json["measurements"] = nlohmann::json::array();
    for (std::size_t i = 0; i < report->measurements.size(); ++i) {
      const auto& t = report->measurements[i];
      nlohmann::json row = {{"intra_op_threads", t.candidate.intra_op_threads},
                            {"inter_op_threads", t.candidate.inter_op_threads},
                            {"execution_mode", t.candidate.parallel ? "parallel" : "sequential"},
                            {"instances", t.candidate.instances},
                            {"batch", t.candidate.batch},
                            {"measured", t.measured},
                            {"chosen", report->best == i}};
      if (t.measured) {
        row["latency_ms"] = LatencyJson(t.latency);
        row["samples_per_s"] = t.samples_per_s;
        row["within_budget"] = t.latency.p99 <= latency_budget_ms;
      }
      if (!t.note.empty()) row["note"] = t.note;
      json["measurements"].push_back(std::move(row));
    }
    json["config"] = report->best ? serving : nlohmann::json();
    if (!flags.write_config.empty() && report->best) json["written_to"] = flags.write_config.string();
    std::cout << JsonText(json) << "\n";
    return result_code;
  }
  const Style style = Style::ForStream(stdout);
  Table table({"", "intra", "inter", "mode", "instances", "batch", "p50 ms", "p99 ms", "samples/s", "CPU", "why"},
              {false, true, true, false, true, true, true, true, true, true, false});
  for (std::size_t i = 0; i < report->measurements.size(); ++i) {
    const auto& t = report->measurements[i];
    const bool chosen = report->best == i;
    std::string why = t.note;
    if (t.measured && why.empty()) {
      why = t.latency.p99 > latency_budget_ms ? fmt::format("p99 over the {} ms budget", latency_budget_ms)
            : chosen
                ? "highest throughput within the budget"
                : fmt::format(
                      "{:.0f}% of the best's throughput",
                      report->best ? 100 * t.samples_per_s / report->measurements[*report->best].samples_per_s : 0.0);
    }
    auto cell = [&](const std::string& s) { return chosen ? style.Green(s) : t.measured ? s : style.Dim(s); };
    table.AddRow({chosen ? style.Green("→") : "", cell(std::to_string(t.candidate.intra_op_threads)),
                  cell(std::to_string(t.candidate.inter_op_threads)),
                  cell(t.candidate.parallel ? "parallel" : "sequential"), cell(std::to_string(t.candidate.instances)),
                  cell(std::to_string(t.candidate.batch)), t.measured ? cell(Ms(t.latency.p50)) : "-",
                  t.measured ? cell(Ms(t.latency.p99)) : "-", t.measured ? cell(F(t.samples_per_s, 1)) : "-",
                  t.measured ? cell(fmt::format("{:.0f}%", t.cpu_utilisation * 100)) : "-", cell(why)});
  }
  std::string out = fmt::format("{} {}: p99 within {} ms, {} hardware threads, {:.1f} s of {} s spent\n\n",
                                style.Bold("ortkit bench --tune"), flags.model.string(), latency_budget_ms,
                                options.space.cores, report->elapsed_s, time_budget_s);
  out += table.Render(style);
  if (report->best) {
    const auto& best = report->measurements[*report->best];
    out += fmt::format("\nrecommended: {} — {:.1f} samples/s at p99 {} ms\n", best.candidate.Describe(),
                       best.samples_per_s, Ms(best.latency.p99));
    if (!flags.write_config.empty())
      out += fmt::format("serving configuration written to {}\n", flags.write_config.string());
  } else {
    out +=
        style.Red(fmt::format("\nno configuration keeps p99 within {} ms; nothing written", latency_budget_ms)) + "\n";
  }
  std::fputs(out.c_str(), stdout);
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
