#pragma once
// An SVG chart of a batch sweep: latency (p50 and p99) and throughput against batch size, one
// line per combination of the other swept dimensions. Self-contained SVG, no scripts or fonts.

#include <cstdint>
#include <string>
#include <vector>

namespace ortkit {

struct PlotPoint {
  std::string series;  ///< "seq_len=64"; empty when only the batch is swept
  std::int64_t batch = 1;
  double p50_ms = 0;
  double p99_ms = 0;
  double samples_per_s = 0;
};

/// Two panels side by side (latency, throughput), batch size on a log2 axis.
std::string RenderSweepSvg(const std::vector<PlotPoint>& points, const std::string& title);

}  // namespace ortkit
