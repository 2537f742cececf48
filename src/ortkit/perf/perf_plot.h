#pragma once
// The curve perf_analyzer users read: throughput on x, latency on y (p50 and p99), one point per
// step, labelled with its concurrency or rate. Self-contained SVG, no scripts or fonts.
// (bench/plot.h draws batch sweeps, whose x axis is a log2 batch size; this one is linear.)

#include <filesystem>
#include <string>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit::perf {

struct PerfPlotPoint {
  std::string label;  ///< "c=8" or "200/s"
  double throughput = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

std::string RenderThroughputLatencySvg(const std::string& title, const std::vector<PerfPlotPoint>& points);

/// Writes RenderThroughputLatencySvg to `path`; kIo error naming the path on failure.
Status WriteThroughputLatencyPlot(const std::filesystem::path& path, const std::string& title,
                                  const std::vector<PerfPlotPoint>& points);

}  // namespace ortkit::perf
