// `ortkit bench --report FILE.html`: the sweep's figures as a page, and with --profile the time of each node
// laid over the model's graph (ortkit/report/node_overlay.h).
#include <fmt/format.h>

#include "bench_render.h"
#include "ortkit/report/report_page.h"

namespace ortkit::cli {
namespace {

PageTable LatencyTable(const BenchReport& report) {
  PageTable table{"Latency of each shape", {"shape", "runs", "p50 ms", "p90 ms", "p99 ms", "samples/s"}, {}, {}};
  table.right = {false, true, true, true, true, true};
  for (const auto& p : report.points) {
    const auto& r = p.result;
    table.rows.push_back({p.point.label, std::to_string(r.runs), Milliseconds(r.latency.p50),
                          Milliseconds(r.latency.p90), Milliseconds(r.latency.p99), FixedDecimals(r.samples_per_s, 1)});
  }
  return table;
}

PageTable GroupTable(const std::string& title, const std::string& what, const std::vector<GroupProfile>& groups,
                     std::int64_t runs) {
  PageTable table{title, {what, "nodes", "calls", "µs per run", "share"}, {}, {false, true, true, true, true}};
  for (const auto& g : groups) {
    table.rows.push_back({g.name, std::to_string(g.nodes), std::to_string(g.calls),
                          FixedDecimals(g.total_us / static_cast<double>(std::max<std::int64_t>(1, runs)), 1),
                          fmt::format("{:.1f}%", g.share * 100)});
  }
  return table;
}

}  // namespace

Status WriteBenchPage(const BenchFlags& flags, const BenchReport& report) {
  ReportPage page;
  page.command = "bench";
  page.model_path = flags.model.string();
  page.verdict = report.stopped
                     ? "stopped early: " + *report.stopped
                     : fmt::format("{} shape{} measured", report.points.size(), report.points.size() == 1 ? "" : "s");
  page.verdict_severity = report.stopped ? Severity::kWarning : Severity::kInfo;
  page.text_report = RenderBenchReport(flags, report, Format::kText, Style{});
  page.tables.push_back(LatencyTable(report));
  if (report.profile) {
    const ProfileReport& profile = *report.profile;
    const double runs = static_cast<double>(std::max<std::int64_t>(1, profile.runs));
    NodeOverlay overlay;
    overlay.title =
        fmt::format("Time per node: {} profiled run{} (µs per run)", profile.runs, profile.runs == 1 ? "" : "s");
    overlay.unit = "µs";
    for (const auto& n : profile.nodes) overlay.values.push_back({n.node, n.total_us / runs});
    page.overlay = std::move(overlay);
    page.tables.push_back(GroupTable("Time by operator type", "operator", profile.op_types, profile.runs));
    page.tables.push_back(GroupTable("Time by execution provider", "provider", profile.providers, profile.runs));
    if (!profile.trace.empty()) {
      page.tables.push_back(
          PageTable{"The profiler's trace",
                    {"file", "opens in"},
                    {{profile.trace.string(), "ui.perfetto.dev or chrome://tracing (Chrome trace-event JSON)"}},
                    {}});
    }
  }
  return WriteReportPage(page, flags.report_page);
}

}  // namespace ortkit::cli
