// The report of a sweep: tables, JSON, CSV and markdown, the profile's tables, and the plot.
#include "bench_render.h"

#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/bench/plot.h"
#include "ortkit/core/cpus.h"
#include "ortkit/core/units.h"

namespace ortkit::cli {
namespace {

std::string SeriesLabel(const ShapePoint& point, const std::string& batch_dim) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : point.dims) {
    if (name != batch_dim) parts.push_back(fmt::format("{}={}", name, value));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

std::vector<std::string> RowHeaders() {
  return {"shape", "first run", "min", "mean",   "p50",       "p90",        "p95", "p99",
          "p99.9", "max",       "std", "runs/s", "samples/s", "vs batch 1", "CPU"};
}

std::vector<std::string> RowCells(const MeasuredPoint& p) {
  const BenchResult& r = p.result;
  const LatencyStats& s = r.latency;
  return {p.point.label,
          Milliseconds(r.first_run_ms),
          Milliseconds(s.min),
          Milliseconds(s.mean),
          Milliseconds(s.p50),
          Milliseconds(s.p90),
          Milliseconds(s.p95),
          Milliseconds(s.p99),
          Milliseconds(s.p999),
          Milliseconds(s.max),
          Milliseconds(s.stddev),
          FixedDecimals(r.runs_per_s, 1),
          FixedDecimals(r.samples_per_s, 1),
          p.throughput_vs_batch1 > 0 ? fmt::format("{:.2f}x", p.throughput_vs_batch1) : "-",
          fmt::format("{:.0f}%", r.usage.cpu_utilisation * 100)};
}

std::string RenderCsv(const BenchReport& report) {
  std::string out =
      "shape,batch,first_run_ms,min_ms,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,p99_9_ms,max_ms,stddev_ms,runs,runs_per_s,"
      "samples_per_s,throughput_vs_batch1,cpu_utilisation,peak_rss_bytes\n";
  for (const auto& p : report.points) {
    const BenchResult& r = p.result;
    const LatencyStats& s = r.latency;
    out += fmt::format(
        "{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{:.3f},{:.3f},{:.4f},{:.3f},{}"
        "\n",
        CsvField(p.point.label), p.point.batch, r.first_run_ms, s.min, s.mean, s.p50, s.p90, s.p95, s.p99, s.p999,
        s.max, s.stddev, r.runs, r.runs_per_s, r.samples_per_s, p.throughput_vs_batch1, r.usage.cpu_utilisation,
        r.usage.peak_rss_bytes);
  }
  return out;
}

std::string RenderMarkdown(const BenchFlags& flags, const BenchReport& report) {
  const auto headers = RowHeaders();
  std::string out = fmt::format(
      "**ortkit bench** `{}` — provider {}, ONNX Runtime {}, session creation {} ms, peak RSS {}\n\n",
      flags.model.string(), flags.session.provider, report.settings.onnxruntime, Milliseconds(report.session_create_ms),
      HumanBytes(static_cast<std::uint64_t>(report.peak_rss_bytes)));
  out += "| " + fmt::format("{}", fmt::join(headers, " | ")) + " |\n|";
  for (std::size_t i = 0; i < headers.size(); ++i) out += i == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& p : report.points) out += "| " + fmt::format("{}", fmt::join(RowCells(p), " | ")) + " |\n";
  out += "\nLatencies in ms.\n";
  if (report.stopped) out += fmt::format("\n**Stopped early:** {}\n", *report.stopped);
  return out;
}

// ", IO binding" and where the bound buffers live: on a GPU provider the device, so the runs copy nothing.
std::string IoBindingNote(const BenchFlags& flags) {
  if (!flags.run.io_binding) return "";
  const ProviderInfo* provider = FindProvider(flags.session.provider);
  const bool device = provider != nullptr && provider->device_memory;
  return device ? ", IO binding: inputs and outputs on the device" : ", IO binding";
}

// The heading: the model, the session settings and how much each shape was measured.
std::string TextHeading(const BenchFlags& flags, const BenchReport& report, const Style& style) {
  const BenchSettings& s = report.settings;
  auto threads = [](int n) { return n == 0 ? std::string("default") : std::to_string(n); };
  std::string out = fmt::format("{} {}  (provider {}, ONNX Runtime {}; intra {}, inter {}, {}, opt level {}{}{}{})\n",
                                style.Bold("ortkit bench"), flags.model.string(), flags.session.provider, s.onnxruntime,
                                threads(s.intra_op_threads), threads(s.inter_op_threads), flags.ExecutionMode(),
                                flags.opt_level, IoBindingNote(flags),
                                flags.no_mem_pattern ? ", no memory pattern" : "", flags.no_arena ? ", no arena" : "");
  const bool bare_seconds = flags.duration.find_first_not_of("0123456789.") == std::string::npos;
  const std::string amount = flags.duration.empty() ? fmt::format("{} runs", flags.run.iterations)
                                                    : flags.duration + (bare_seconds ? " s" : "");
  out += fmt::format(
      "session creation {} ms · peak RSS {} · {} per shape after {} warm-up · {} thread{} × {} session{}\n\n",
      Milliseconds(report.session_create_ms), HumanBytes(static_cast<std::uint64_t>(report.peak_rss_bytes)), amount,
      flags.run.warmup, flags.run.concurrency, flags.run.concurrency == 1 ? "" : "s", flags.sessions,
      flags.sessions == 1 ? "" : "s");
  return out;
}

std::string RenderText(const BenchFlags& flags, const BenchReport& report, const Style& style) {
  std::string out = TextHeading(flags, report, style);
  std::vector<bool> right(RowHeaders().size(), true);
  right[0] = false;
  Table table(RowHeaders(), right);
  for (const auto& p : report.points) table.AddRow(RowCells(p));
  out += table.Render(style);
  out += style.Dim("  latencies in ms; CPU: process CPU time / wall time while measuring (100% = one core)") + "\n";
  const CpuBudget cpus = UsableCpus();
  const auto machine = static_cast<int>(std::thread::hardware_concurrency());
  if (report.settings.intra_op_threads == 0 && flags.session.provider == "cpu" && cpus.cores < machine) {
    out += style.Yellow(fmt::format("  note: ONNX Runtime sizes its default thread pool to the machine ({} hardware "
                                    "threads), but this process may use {}: --intra-threads {} measures what it gets",
                                    machine, cpus.Describe(), cpus.cores)) +
           "\n";
  }
  for (const auto& note : report.size_notes) out += style.Dim(fmt::format("  sizes: {}\n", note));
  for (const auto& p : report.points) {
    if (p.result.failure)
      out += style.Red(fmt::format("  {}: stopped after {} runs: {}", p.point.label, p.result.runs,
                                   p.result.failure->message)) +
             "\n";
  }
  if (report.stopped) out += "\n" + style.Red("stopped early: ") + *report.stopped + "\n";
  if (report.profile) out += RenderProfileText(*report.profile, style);
  if (!report.next_step.empty()) out += fmt::format("\n  {}{}\n", style.Bold("next: "), report.next_step);
  if (!flags.plot.empty()) out += fmt::format("\nplot written to {}\n", flags.plot.string());
  return out;
}

}  // namespace

std::string FixedDecimals(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string Milliseconds(double ms) {
  return ms >= 100 ? FixedDecimals(ms, 1) : ms >= 10 ? FixedDecimals(ms, 2) : FixedDecimals(ms, 3);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string RenderBenchReport(const BenchFlags& flags, const BenchReport& report, Format format, const Style& style) {
  switch (format) {
    case Format::kJson: return JsonText(report.ToJson()) + "\n";
    case Format::kCsv: return RenderCsv(report);
    case Format::kMarkdown: return RenderMarkdown(flags, report);
    case Format::kText: break;
  }
  return RenderText(flags, report, style);
}

std::string RenderBenchPlot(const BenchReport& report, const std::string& batch_dim, const std::string& title) {
  std::vector<PlotPoint> plot;
  for (const auto& p : report.points) {
    plot.push_back({SeriesLabel(p.point, batch_dim), p.point.batch, p.result.latency.p50, p.result.latency.p99,
                    p.result.samples_per_s});
  }
  return RenderSweepSvg(plot, title);
}

}  // namespace ortkit::cli
