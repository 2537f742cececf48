#include "optimize_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/units.h"

namespace ortkit::cli {
namespace {

using State = CandidateOutcome::State;

std::string Megabytes(std::int64_t bytes) {
  if (bytes < 1000000) return fmt::format("{:.1f} kB", static_cast<double>(bytes) / 1e3);
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

std::string PassesText(const CandidateOutcome& c) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < c.pass_results.size(); ++i) {
    int count = 0;
    for (const auto& [op, n] : c.pass_results[i].rewritten) count += n;
    int made = 0;
    for (const auto& [op, n] : c.pass_results[i].produced) made += n;
    parts.push_back(c.passes[i] == "fuse" ? fmt::format("{}: {} fused", c.passes[i], made)
                                          : fmt::format("{}: {} nodes", c.passes[i], count));
  }
  return parts.empty() ? fmt::format("{}", fmt::join(c.passes, "+")) : fmt::format("{}", fmt::join(parts, ", "));
}

std::string StateText(const CandidateOutcome& c, const Style& style) {
  switch (c.state) {
    case State::kChosen: return style.Green("chosen");
    case State::kRefused:
    case State::kFailed: return style.Red(ToString(c.state));
    case State::kNotFaster: return c.speed_up.slower ? style.Yellow("slower") : ToString(c.state);
    default: return ToString(c.state);
  }
}

std::string CandidateTable(const OptimizeReport& report, const Style& style) {
  Table table({"candidate", "passes", "accuracy", "p50", "speed-up", "size", ""},
              {false, false, false, true, true, true, false});
  table.AddRow({"original", "-", "-",
                report.original_latency ? fmt::format("{:.2f} ms", report.original_latency->latency.p50) : "-", "1.00x",
                Megabytes(report.original_bytes), ""});
  for (const auto& c : report.candidates) {
    const std::string speed =
        c.latency ? fmt::format("{:.2f}x ({:.2f}-{:.2f})", c.speed_up.ratio, c.speed_up.low, c.speed_up.high) : "-";
    table.AddRow({c.name, PassesText(c), c.proof ? c.proof->AccuracyText() : "-",
                  c.latency ? fmt::format("{:.2f} ms", c.latency->latency.p50) : "-", speed,
                  c.size_bytes > 0 ? Megabytes(c.size_bytes) : "-", StateText(c, style)});
  }
  return table.Render(style, "  ");
}

std::string Details(const OptimizeReport& report, const Style& style) {
  std::string out;
  for (const auto& c : report.candidates) {
    out += fmt::format("\n  {} ({}{})\n", style.Bold(c.name), ToString(c.state),
                       c.rewrite_s > 0 ? fmt::format(", rewritten in {:.1f} s", c.rewrite_s) : "");
    for (std::size_t i = 0; i < c.pass_results.size(); ++i) {
      const auto& r = c.pass_results[i];
      std::vector<std::string> rewritten, produced;
      for (const auto& [op, n] : r.rewritten) rewritten.push_back(fmt::format("{} {}", n, op));
      for (const auto& [op, n] : r.produced) produced.push_back(fmt::format("{} {}", n, op));
      if (!rewritten.empty()) out += fmt::format("    {}: rewrote {}\n", c.passes[i], fmt::join(rewritten, ", "));
      if (!produced.empty()) out += fmt::format("    {}: made {}\n", c.passes[i], fmt::join(produced, ", "));
      for (const auto& n : r.notes) out += fmt::format("    {}: {}\n", c.passes[i], n);
      for (const auto& l : r.left) out += style.Dim(fmt::format("    {}: left {}\n", c.passes[i], l));
    }
    if (c.proof && !c.proof->batch_rows.empty()) out += fmt::format("    batch: {}\n", c.proof->batch_rows);
    if (c.proof) {
      for (const auto& w : c.proof->warnings) out += style.Yellow(fmt::format("    warning: {}\n", w));
    }
    if (!c.reason.empty() && c.state != State::kChosen) out += fmt::format("    {}\n", c.reason);
  }
  return out;
}

}  // namespace

std::string RenderOptimizeReport(const OptimizeReport& report, const Style& style) {
  std::string out = fmt::format("{} {}{}\n\n", style.Bold("ortkit optimize"), report.model,
                                report.out.empty() ? "" : " -> " + report.out);
  out += fmt::format("  provider    {} ({} threads), CPU {}\n", report.provider, report.threads, report.cpu);
  out += fmt::format("  inputs      {}\n", report.inputs);
  out += fmt::format("  proof at    {}\n", fmt::join(report.trials, "; "));
  out += fmt::format("  gate        {}\n\n", report.gate);
  out += CandidateTable(report, style);
  out += Details(report, style);
  out += "\n";
  for (const auto& d : report.diagnoses) out += RenderDiagnosis(d, style) + "\n";
  if (report.written) {
    out += fmt::format("{}: wrote {} ({}) in {:.0f} s\n", style.Green("OPTIMIZED"), report.out, report.chosen,
                       report.seconds);
  } else if (report.dry_run && !report.chosen.empty()) {
    out += fmt::format("{}: {} would be written; nothing written\n", style.Bold("DRY RUN"), report.chosen);
  } else {
    out += fmt::format("{}: nothing written\n", style.Red("NOT OPTIMIZED"));
  }
  return out;
}

}  // namespace ortkit::cli
