#include "ortkit/perf/perf_plot.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "ortkit/core/markup_text.h"

namespace ortkit::perf {
namespace {

constexpr double kWidth = 640, kHeight = 420, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at or above `value`.
double NiceCeiling(double value) {
  if (!(value > 0)) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : {1.0, 2.0, 5.0, 10.0}) {
    if (step * magnitude >= value) return step * magnitude;
  }
  return 10 * magnitude;
}

}  // namespace

std::string RenderThroughputLatencySvg(const std::string& title, const std::vector<PerfPlotPoint>& points) {
  double max_x = 0, max_y = 0;
  for (const auto& p : points) {
    max_x = std::max(max_x, p.throughput);
    max_y = std::max({max_y, p.p50_ms, p.p99_ms});
  }
  max_x = NiceCeiling(max_x * 1.05);
  max_y = NiceCeiling(max_y * 1.05);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x_of = [&](double v) { return kLeft + v / max_x * plot_w; };
  auto y_of = [&](double v) { return kTop + plot_h - v / max_y * plot_h; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"14\">{3}</text>\n",
      kWidth, kHeight, kLeft, EscapeHtml(title));
  for (int i = 0; i <= 5; ++i) {
    const double xv = max_x * i / 5, yv = max_y * i / 5;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
        x_of(xv), kTop, kTop + plot_h, kTop + plot_h + 16, xv);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        kLeft, y_of(yv), kLeft + plot_w, kLeft - 6, y_of(yv) + 4, yv);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">throughput (inferences/s)</text>\n",
                     kLeft + plot_w / 2, kHeight - 12);
  svg += fmt::format(
      "<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">latency (ms)</text>\n",
      kTop + plot_h / 2);

  struct Series {
    const char* name;
    const char* color;
    double PerfPlotPoint::*value;
  };
  constexpr Series kSeries[] = {{"p50", "#1f77b4", &PerfPlotPoint::p50_ms}, {"p99", "#d62728", &PerfPlotPoint::p99_ms}};
  for (std::size_t s = 0; s < std::size(kSeries); ++s) {
    const Series& series = kSeries[s];
    std::string path;
    for (const auto& p : points) path += fmt::format("{:.1f},{:.1f} ", x_of(p.throughput), y_of(p.*series.value));
    svg +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", series.color, path);
    for (const auto& p : points) {
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{} {}: {:.1f}/s, {:.2f} "
          "ms</title></circle>\n",
          x_of(p.throughput), y_of(p.*series.value), series.color, EscapeHtml(p.label), series.name, p.throughput,
          p.*series.value);
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", kLeft + 10,
                       kTop + 16 + 16 * static_cast<double>(s), series.color, series.name);
  }
  for (const auto& p : points) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#555\">{}</text>\n",
                       x_of(p.throughput) + 5, y_of(p.p99_ms) - 5, EscapeHtml(p.label));
  }
  svg += "</svg>\n";
  return svg;
}

Status WriteThroughputLatencyPlot(const std::filesystem::path& path, const std::string& title,
                                  const std::vector<PerfPlotPoint>& points) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return MakeError(ErrorKind::kIo, fmt::format("--plot {}: cannot write the file", path.string()));
  out << RenderThroughputLatencySvg(title, points);
  out.close();
  if (!out) return MakeError(ErrorKind::kIo, fmt::format("--plot {}: writing failed", path.string()));
  return OkStatus();
}

}  // namespace ortkit::perf
