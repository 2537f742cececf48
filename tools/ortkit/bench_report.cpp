// The reports of `ortkit bench`: tables, JSON, CSV and markdown for a sweep, --compare and --tune.
#include "bench_report.h"

#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/bench/plot.h"
#include "ortkit/core/cpus.h"
#include "ortkit/core/sample_stats.h"
#include "ortkit/core/units.h"

namespace ortkit::cli {
namespace {

/// Samples a JSON report keeps per shape: enough for --compare to bootstrap a noise band.
constexpr std::size_t kSavedSamples = 10000;

std::string F(double v, int decimals = 3) { return fmt::format("{:.{}f}", v, decimals); }

std::string Ms(double v) { return v >= 100 ? F(v, 1) : v >= 10 ? F(v, 2) : F(v, 3); }

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
        {"hardware_threads", std::thread::hardware_concurrency()},
        {"cores", UsableCpus().cores}}},
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
  json["size_notes"] = m.size_notes;
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
                       const std::string& batch_dim, const Style& style) {
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
  const CpuBudget cpus = UsableCpus();
  const auto machine = static_cast<int>(std::thread::hardware_concurrency());
  if (config.intra_op_threads == 0 && flags.provider == "cpu" && cpus.cores < machine) {
    out += style.Yellow(fmt::format("  note: ONNX Runtime sizes its default thread pool to the machine ({} hardware "
                                    "threads), but this process may use {}: --intra-threads {} measures what it gets",
                                    machine, cpus.Describe(), cpus.cores)) +
           "\n";
  }
  for (const auto& note : m.size_notes) out += style.Dim(fmt::format("  sizes: {}\n", note));
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

}  // namespace

std::string RenderBenchReport(const BenchFlags& flags, const SessionConfig& config, const Measurement& m,
                              const std::string& batch_dim, Format format, const Style& style) {
  std::string out;
  switch (format) {
    case Format::kJson: out = JsonText(ReportJson(flags, config, m, batch_dim)) + "\n"; break;
    case Format::kCsv: out = RenderCsv(m, batch_dim); break;
    case Format::kMarkdown: out = RenderMarkdown(flags, m, batch_dim); break;
    case Format::kText: out = RenderText(flags, config, m, batch_dim, style); break;
  }
  return out;
}

std::string RenderBenchPlot(const Measurement& m, const std::string& batch_dim, const std::string& title) {
  std::vector<PlotPoint> plot;
  for (const auto& p : m.points) {
    plot.push_back({SeriesLabel(p.point, batch_dim), p.point.batch, p.result.latency.p50, p.result.latency.p99,
                    p.result.samples_per_s});
  }
  return RenderSweepSvg(plot, title);
}

std::string RenderCompareReport(const BenchFlags& flags, const CompareOptions& options, const RunComparison& report,
                                Format format, const Style& style) {
  if (format == Format::kJson) {
    nlohmann::json json = {{"base", flags.compare[0].string()},
                           {"candidate", flags.compare[1].string()},
                           {"min_change", options.min_change},
                           {"verdict", ToString(report.verdict)},
                           {"unmatched", report.unmatched}};
    json["points"] = nlohmann::json::array();
    for (const auto& p : report.points) {
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
    return JsonText(json) + "\n";
  }
  auto colour = [&](ChangeVerdict v, const std::string& s) {
    return v == ChangeVerdict::kSlower ? style.Red(s) : v == ChangeVerdict::kFaster ? style.Green(s) : s;
  };
  std::vector<std::string> headers = {"shape", "figure", "base", "new", "ratio", "noise band (95%)", "verdict"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : report.points) {
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
    for (const auto& p : report.points) {
      for (const auto& f : p.figures) {
        out += fmt::format("{},{},{:.6f},{:.6f},{:.4f},{:.4f},{:.4f},{}\n", CsvField(p.label), f.figure, f.base,
                           f.candidate, f.ratio, f.low, f.high, ToString(f.verdict));
      }
    }
  } else if (format == Format::kMarkdown) {
    out = "| " + fmt::format("{}", fmt::join(headers, " | ")) + " |\n|---|---|---:|---:|---:|---|---|\n";
    for (const auto& row : rows) out += "| " + fmt::format("{}", fmt::join(row, " | ")) + " |\n";
    out += fmt::format("\n**ChangeVerdict: {}**\n", ToString(report.verdict));
  } else {
    Table table(headers, {false, false, true, true, true, false, false});
    std::size_t i = 0;
    for (const auto& p : report.points) {
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
    for (const auto& u : report.unmatched)
      out += style.Yellow(fmt::format("  {} is in only one of the runs", u)) + "\n";
    out += "\nverdict: " + colour(report.verdict, style.Bold(ToString(report.verdict))) + "\n";
  }
  return out;
}

std::string RenderTuneReport(const BenchFlags& flags, const TuneOptions& options, const TuneReport& report,
                             const nlohmann::json& serving, Format format, const Style& style) {
  const double latency_budget_ms = options.latency_budget_ms;
  const double time_budget_s = options.time_budget_s;
  if (format == Format::kJson) {
    nlohmann::json json = {{"model", flags.model.string()},
                           {"latency_budget_ms", latency_budget_ms},
                           {"time_budget_s", time_budget_s},
                           {"elapsed_s", report.elapsed_s}};
    json["measurements"] = nlohmann::json::array();
    for (std::size_t i = 0; i < report.measurements.size(); ++i) {
      const auto& t = report.measurements[i];
      nlohmann::json row = {{"intra_op_threads", t.candidate.intra_op_threads},
                            {"inter_op_threads", t.candidate.inter_op_threads},
                            {"execution_mode", t.candidate.parallel ? "parallel" : "sequential"},
                            {"instances", t.candidate.instances},
                            {"batch", t.candidate.batch},
                            {"measured", t.measured},
                            {"chosen", report.best == i}};
      if (t.measured) {
        row["latency_ms"] = LatencyJson(t.latency);
        row["samples_per_s"] = t.samples_per_s;
        row["within_budget"] = t.latency.p99 <= latency_budget_ms;
      }
      if (!t.note.empty()) row["note"] = t.note;
      json["measurements"].push_back(std::move(row));
    }
    json["config"] = report.best ? serving : nlohmann::json();
    if (!flags.write_config.empty() && report.best) json["written_to"] = flags.write_config.string();
    return JsonText(json) + "\n";
  }
  Table table({"", "intra", "inter", "mode", "instances", "batch", "p50 ms", "p99 ms", "samples/s", "CPU", "why"},
              {false, true, true, false, true, true, true, true, true, true, false});
  for (std::size_t i = 0; i < report.measurements.size(); ++i) {
    const auto& t = report.measurements[i];
    const bool chosen = report.best == i;
    std::string why = t.note;
    if (t.measured && why.empty()) {
      why = t.latency.p99 > latency_budget_ms ? fmt::format("p99 over the {} ms budget", latency_budget_ms)
            : chosen                          ? "highest throughput within the budget"
                                              : fmt::format(
                                                    "{:.0f}% of the best's throughput",
                           report.best ? 100 * t.samples_per_s / report.measurements[*report.best].samples_per_s : 0.0);
    }
    auto cell = [&](const std::string& s) { return chosen ? style.Green(s) : t.measured ? s : style.Dim(s); };
    table.AddRow({chosen ? style.Green("→") : "", cell(std::to_string(t.candidate.intra_op_threads)),
                  cell(std::to_string(t.candidate.inter_op_threads)),
                  cell(t.candidate.parallel ? "parallel" : "sequential"), cell(std::to_string(t.candidate.instances)),
                  cell(std::to_string(t.candidate.batch)), t.measured ? cell(Ms(t.latency.p50)) : "-",
                  t.measured ? cell(Ms(t.latency.p99)) : "-", t.measured ? cell(F(t.samples_per_s, 1)) : "-",
                  t.measured ? cell(fmt::format("{:.0f}%", t.cpu_utilisation * 100)) : "-", cell(why)});
  }
  std::string out =
      fmt::format("{} {}: p99 within {} ms, {} core{}, {:.1f} s of {} s spent\n\n", style.Bold("ortkit bench --tune"),
                  flags.model.string(), latency_budget_ms, options.space.cores, options.space.cores == 1 ? "" : "s",
                  report.elapsed_s, time_budget_s);
  out += table.Render(style);
  if (report.best) {
    const auto& best = report.measurements[*report.best];
    out += fmt::format("\nrecommended: {} — {:.1f} samples/s at p99 {} ms\n", best.candidate.Describe(),
                       best.samples_per_s, Ms(best.latency.p99));
    if (!flags.write_config.empty())
      out += fmt::format("serving configuration written to {}\n", flags.write_config.string());
  } else {
    out +=
        style.Red(fmt::format("\nno configuration keeps p99 within {} ms; nothing written", latency_budget_ms)) + "\n";
  }
  return out;
}

}  // namespace ortkit::cli
