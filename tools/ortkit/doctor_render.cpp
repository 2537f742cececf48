// `ortkit doctor`'s report for people: the verdict, the findings, the chain, the sweep grids, the latency.
#include "doctor_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fix_hint.h"
#include "ortkit/validate/purpose_judgement.h"
#include "report_writer.h"
#include "validate_render.h"

namespace ortkit::cli {
namespace {

std::string Sci(double v) { return fmt::format("{:.3g}", v); }

std::string VerdictLine(const DoctorReport& report, const Style& style) {
  int errors = 0, warnings = 0, notes = 0;
  for (const auto& d : report.diagnoses) {
    (d.severity == Severity::kError ? errors : d.severity == Severity::kWarning ? warnings : notes)++;
  }
  const auto plural = [](int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
  switch (report.verdict) {
    case DoctorVerdict::kHealthy:
      return style.Green("HEALTHY") + (notes > 0 ? fmt::format(" ({})", plural(notes, "note")) : " (no findings)");
    case DoctorVerdict::kWarnings:
      return style.Yellow("WARNINGS") +
             fmt::format(" ({}; nothing broken, but read them before shipping)", plural(warnings, "warning"));
    case DoctorVerdict::kBroken:
      return style.Red("BROKEN") + fmt::format(" ({}, {})", plural(errors, "error"), plural(warnings, "warning"));
  }
  return "";
}

std::string CheckSummary(const CheckReport& check) {
  std::vector<std::string> parts;
  for (const auto& layer : check.layers) parts.push_back(fmt::format("{} {}", layer.name, ToString(layer.state)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

void WriteChain(ReportWriter& w, const DoctorReport& report) {
  const Style& s = w.style();
  w.Heading("chain");
  if (report.export_record) {
    w.Item("export", fmt::format("{} ({}){}", report.export_record->Describe(), report.export_record->path.string(),
                                 report.export_record->error ? s.Red(", the export FAILED") : ""));
  }
  if (report.check) w.Item("check", CheckSummary(*report.check));
  for (const auto& p : report.providers) {
    w.Item("load", fmt::format("{}: {}", p.provider, p.loaded ? s.Green("loaded") : s.Red("not loaded")));
    for (const auto& note : p.notes) w.Item("note", fmt::format("{}: {}", p.provider, note));
    if (p.validation) {
      std::vector<std::string> cases;
      for (const auto& c : p.validation->cases) {
        cases.push_back(
            fmt::format("{} {}", c.label, c.ran && c.comparison.Passed() ? s.Green("pass") : s.Red("FAIL")));
      }
      w.Item("validation",
             fmt::format("{} against {}{}: {}", p.provider, report.reference_path,
                         report.reference_from_export ? " (the export's references)" : "", fmt::join(cases, ", ")));
    } else if (p.cross_check) {
      w.Item("cross-check",
             fmt::format("{}: {} vs {} on synthesised inputs (no reference): {}", p.provider, p.cross_check->label_a,
                         p.cross_check->label_b, p.cross_check->Passed() ? s.Green("agree") : s.Red("DIFFER")));
      // A quantised model is judged by what its outputs are for: say how each agrees, whatever the verdict.
      if (p.cross_check->quantization.quantized()) {
        w.Item("agreement",
               fmt::format("{}: {}, judged by purpose: {}", p.provider, p.cross_check->quantization.Describe(),
                           DescribeAgreements(p.cross_check->comparison)));
      }
      const SidePlacement& placement = p.cross_check->placement_b;
      if (p.provider != "cpu") w.Item("nodes", fmt::format("{}: {}", p.provider, DescribeSidePlacement(placement)));
      if (!placement.cpu_fallbacks.empty()) {
        std::vector<std::string> nodes;
        for (const auto& f : placement.cpu_fallbacks) nodes.push_back(fmt::format("'{}' ({})", f.node, f.op_type));
        w.Item("fallbacks", s.Yellow(fmt::format("{}: on the CPU: {}", p.provider, fmt::join(nodes, ", "))));
      }
    }
    if (p.sweep) {
      int passed = 0;
      for (const auto& c : p.sweep->cells) passed += c.state == SweepCell::State::kPassed;
      std::vector<std::string> axes;
      for (const auto& a : p.sweep->axes) axes.push_back(fmt::format("{}={}", a.dim, fmt::join(a.values, ",")));
      w.Item(
          "sweep",
          p.sweep->axes.empty()
              ? fmt::format("{}: every input dimension is fixed, nothing to sweep", p.provider)
              : fmt::format("{}: {}/{} cells pass over {}{}", p.provider, passed, p.sweep->cells.size(),
                            fmt::join(axes, " "),
                            p.sweep->batch_dim.empty() ? "" : ", batch consistency on '" + p.sweep->batch_dim + "'"));
    }
    if (p.latency) {
      w.Item("latency", fmt::format("{}: p50 {} ms, p90 {} ms ({} runs at {})", p.provider, Sci(p.latency->p50_ms),
                                    Sci(p.latency->p90_ms), p.latency->runs, p.latency->shape));
    }
  }
}

void WriteSweep(ReportWriter& w, const ProviderReport& p) {
  if (!p.sweep || p.sweep->axes.empty()) return;
  const Style& s = w.style();
  w.Heading(fmt::format("sweep grid ({})", p.provider));
  if (!p.sweep->batch_dim.empty()) {
    w.Line(fmt::format("batch axis '{}': row i of a batched run must equal row i run alone", p.sweep->batch_dim));
    if (!w.markdown()) w.Raw("\n");
  }
  std::vector<std::string> headers;
  std::vector<bool> right;
  for (const auto& axis : p.sweep->axes) {
    headers.push_back(axis.dim);
    right.push_back(true);
  }
  for (const char* h : {"result", "time ms", "batch check"}) {
    headers.emplace_back(h);
    right.push_back(std::string(h) == "time ms");
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& cell : p.sweep->cells) {
    std::vector<std::string> row;
    for (const auto& axis : p.sweep->axes) row.push_back(std::to_string(cell.dims.at(axis.dim)));
    const bool ok = cell.state == SweepCell::State::kPassed;
    const bool skipped = cell.state == SweepCell::State::kSkipped;
    row.push_back(ok        ? s.Green("pass")
                  : skipped ? s.Dim("not run (memory)")
                            : s.Red("FAIL") + (cell.diagnoses.empty() ? "" : " " + cell.diagnoses.front().code));
    row.push_back(fmt::format("{:.2f}", cell.run_ms));
    row.push_back(cell.batch_checked ? fmt::format("max err {}", Sci(cell.batch_max_abs_error)) : "-");
    rows.push_back(std::move(row));
  }
  w.Table(headers, rows, right);
}

void WriteLatency(ReportWriter& w, const DoctorReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : report.providers) {
    if (!p.latency) continue;
    const auto& l = *p.latency;
    rows.push_back({p.provider, l.shape, std::to_string(l.runs), Sci(l.first_ms), Sci(l.p50_ms), Sci(l.p90_ms),
                    Sci(l.mean_ms), Sci(l.min_ms), Sci(l.max_ms)});
  }
  if (rows.empty()) return;
  w.Heading("latency (ms; a first run and 2 warm-up runs, then the timed runs)");
  w.Table({"provider", "inputs", "runs", "first", "p50", "p90", "mean", "min", "max"}, rows,
          {false, false, true, true, true, true, true, true, true});
  if (!w.markdown()) {
    w.Raw(w.style().Dim(
        "  a baseline, not a benchmark: `ortkit bench` measures throughput, threads and percentiles properly\n"));
  }
}

}  // namespace

std::string RenderDoctorReport(const DoctorReport& report, bool markdown, const Style& style) {
  ReportWriter w(markdown, style);
  const std::string subject = report.model_path.empty()
                                  ? (report.export_record ? report.export_record->path.parent_path().string() : "")
                                  : report.model_path;
  w.Raw(markdown ? fmt::format("# ortkit doctor: `{}`\n\n", subject)
                 : fmt::format("{} {}\n\n", style.Bold("ortkit doctor"), subject));
  w.Raw(markdown ? fmt::format("**Verdict: {}**\n", VerdictLine(report, Style{}))
                 : fmt::format("  verdict: {}\n", VerdictLine(report, style)));
  if (!report.diagnoses.empty()) {
    w.Heading(fmt::format("findings, most severe first ({})", report.diagnoses.size()));
    for (const auto& d : report.diagnoses) {
      w.Finding(d);
      if (!markdown) w.Raw("\n");
    }
    if (const auto hint = FixHint(report.diagnoses, subject); !hint.empty())
      w.Raw(markdown ? fmt::format("Next: {}\n", hint) : fmt::format("  {}\n", style.Bold("next: ") + hint));
  }
  WriteChain(w, report);
  for (const auto& p : report.providers) WriteSweep(w, p);
  WriteLatency(w, report);
  if (!report.next_step.empty())
    w.Raw(markdown ? fmt::format("\nNext: {}\n", report.next_step)
                   : fmt::format("\n  {}{}\n", style.Bold("next: "), report.next_step));
  return w.str();
}

}  // namespace ortkit::cli
