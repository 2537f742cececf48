#include "ortkit/bench/plot.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "ortkit/core/markup_text.h"

namespace ortkit {
namespace {

constexpr double kPanelWidth = 420;
constexpr double kPanelHeight = 300;
constexpr double kMarginLeft = 70;
constexpr double kMarginTop = 50;
constexpr double kMarginBottom = 50;
constexpr double kGap = 90;
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

std::string Tick(double v) {
  return v >= 100 ? fmt::format("{:.0f}", v) : v >= 10 ? fmt::format("{:.1f}", v) : fmt::format("{:.3g}", v);
}

// One panel: x is log2(batch), y linear from 0.
struct Panel {
  double left;
  double x_min, x_max, y_max;
  double X(std::int64_t batch) const {
    const double lx = std::log2(static_cast<double>(batch));
    const double span = x_max > x_min ? x_max - x_min : 1;
    return left + (x_max > x_min ? (lx - x_min) / span : 0.5) * kPanelWidth;
  }
  double Y(double v) const { return kMarginTop + kPanelHeight - (y_max > 0 ? v / y_max : 0) * kPanelHeight; }
};

std::string Axes(const Panel& p, const std::vector<std::int64_t>& batches, const std::string& y_label,
                 const std::string& title) {
  std::string out = fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)"
                                "\n",
                                p.left, kMarginTop, kPanelWidth, kPanelHeight);
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="14" font-weight="bold">{}</text>)"
                     "\n",
                     p.left + kPanelWidth / 2, kMarginTop - 12, EscapeHtml(title));
  for (std::int64_t b : batches) {
    out += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#eee"/><text x="{0}" y="{3}" text-anchor="middle" font-size="11">{4}</text>)"
        "\n",
        p.X(b), kMarginTop, kMarginTop + kPanelHeight, kMarginTop + kPanelHeight + 16, b);
  }
  for (int i = 0; i <= 4; ++i) {
    const double v = p.y_max * i / 4;
    out += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#eee"/><text x="{3}" y="{4}" text-anchor="end" font-size="11">{5}</text>)"
        "\n",
        p.left, p.Y(v), p.left + kPanelWidth, p.left - 6, p.Y(v) + 4, Tick(v));
  }
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="12">batch size</text>)"
                     "\n",
                     p.left + kPanelWidth / 2, kMarginTop + kPanelHeight + 36);
  out += fmt::format(
      R"svg(<text x="{0}" y="{1}" text-anchor="middle" font-size="12" transform="rotate(-90 {0} {1})">{2}</text>)svg"
      "\n",
      p.left - 50, kMarginTop + kPanelHeight / 2, EscapeHtml(y_label));
  return out;
}

std::string Line(const Panel& p, const std::vector<std::pair<std::int64_t, double>>& xy, const char* colour,
                 bool dashed) {
  std::string points;
  std::string dots;
  for (const auto& [b, v] : xy) {
    points += fmt::format("{:.1f},{:.1f} ", p.X(b), p.Y(v));
    dots += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"/>)", p.X(b), p.Y(v), colour);
  }
  return fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{}/>)", points, colour,
                     dashed ? R"( stroke-dasharray="6 4")" : "") +
         dots + "\n";
}

}  // namespace

std::string RenderSweepSvg(const std::vector<PlotPoint>& points, const std::string& title) {
  std::map<std::string, std::vector<PlotPoint>> series;
  std::vector<std::int64_t> batches;
  double latency_max = 0;
  double throughput_max = 0;
  for (const auto& p : points) {
    series[p.series].push_back(p);
    if (std::find(batches.begin(), batches.end(), p.batch) == batches.end()) batches.push_back(p.batch);
    latency_max = std::max({latency_max, p.p50_ms, p.p99_ms});
    throughput_max = std::max(throughput_max, p.samples_per_s);
  }
  std::sort(batches.begin(), batches.end());
  const double x_min = batches.empty() ? 0 : std::log2(static_cast<double>(batches.front()));
  const double x_max = batches.empty() ? 1 : std::log2(static_cast<double>(batches.back()));
  const Panel latency{kMarginLeft, x_min, x_max, latency_max * 1.1};
  const Panel throughput{kMarginLeft + kPanelWidth + kGap, x_min, x_max, throughput_max * 1.1};
  const double width = kMarginLeft + 2 * kPanelWidth + kGap + 30;
  const double legend_top = kMarginTop + kPanelHeight + kMarginBottom + 10;
  const double height = legend_top + 20 * (static_cast<double>(series.size()) + 1) + 10;

  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif">)"
      "\n<title>{2}</title>\n"
      R"(<rect width="100%" height="100%" fill="white"/>)"
      "\n",
      width, height, EscapeHtml(title));
  svg += fmt::format(R"(<text x="{}" y="20" text-anchor="middle" font-size="15">{}</text>)"
                     "\n",
                     width / 2, EscapeHtml(title));
  svg += Axes(latency, batches, "latency (ms)", "latency: p50 solid, p99 dashed");
  svg += Axes(throughput, batches, "samples / s", "throughput");
  std::size_t index = 0;
  for (auto& [name, list] : series) {
    std::sort(list.begin(), list.end(), [](const PlotPoint& a, const PlotPoint& b) { return a.batch < b.batch; });
    const char* colour = kColours[index % std::size(kColours)];
    std::vector<std::pair<std::int64_t, double>> p50, p99, rate;
    for (const auto& p : list) {
      p50.push_back({p.batch, p.p50_ms});
      p99.push_back({p.batch, p.p99_ms});
      rate.push_back({p.batch, p.samples_per_s});
    }
    svg += Line(latency, p50, colour, false) + Line(latency, p99, colour, true) + Line(throughput, rate, colour, false);
    const double y = legend_top + 20 * static_cast<double>(index);
    svg += fmt::format(
        R"(<rect x="{}" y="{}" width="14" height="4" fill="{}"/><text x="{}" y="{}" font-size="12">{}</text>)"
        "\n",
        kMarginLeft, y - 4, colour, kMarginLeft + 20, y, EscapeHtml(name.empty() ? "all shapes" : name));
    ++index;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace ortkit
