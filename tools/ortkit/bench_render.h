#pragma once
// The reports of `ortkit bench` for people and scripts: a finished sweep as text, JSON, CSV or
// markdown (and an SVG plot) here; --compare's and --tune's reports beside their modes. Each
// returns the text for stdout; nothing here measures, prints or decides an exit code.

#include <string>

#include "bench_command.h"
#include "ortkit/bench/report.h"
#include "terminal.h"

namespace ortkit::cli {

/// The sweep's report in `format`: JSON is the saved report (BenchReport::ToJson) that --compare
/// reads back; text is coloured with `style`. `flags` says what the text echoes (the model as
/// given, where the plot went).
std::string RenderBenchReport(const BenchFlags& flags, const BenchReport& report, Format format, const Style& style);

/// The SVG of latency and throughput against batch size, one series per size of the other dims
/// (`batch_dim` is the inputs' batch symbol, "" when none).
std::string RenderBenchPlot(const BenchReport& report, const std::string& batch_dim, const std::string& title);

/// The HTML page of a finished sweep (bench_page.cpp) to flags.report_page: the latency of each shape and,
/// with a profile, the time of each node over the graph, by operator type and by provider.
Status WriteBenchPage(const BenchFlags& flags, const BenchReport& report);

/// The profile's tables (bench_profile_render.cpp), each after a blank line.
std::string RenderProfileText(const ProfileReport& profile, const Style& style);

/// `v` with `decimals` decimals.
std::string FixedDecimals(double v, int decimals = 3);

/// Milliseconds with fewer decimals as they grow: 0.123, 12.35, 123.5.
std::string Milliseconds(double ms);

/// `s` as one CSV field: quoted when it holds a comma, a quote or a newline.
std::string CsvField(const std::string& s);

}  // namespace ortkit::cli
