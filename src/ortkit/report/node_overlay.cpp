#include "ortkit/report/node_overlay.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/markup_text.h"
#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

// Each node of the graph in topological order with its value (NaN: not measured).
struct Placed {
  std::vector<int> order;      // graph node indices
  std::vector<double> values;  // by position in `order`
  std::size_t unmatched = 0;   // overlay values naming no node of the graph
  double largest = 0;
  double smallest_positive = 0;
};

Placed Place(const onnx::GraphProto& graph, const NodeOverlay& overlay) {
  Placed placed;
  placed.order = TopologicalOrder(graph);
  std::map<std::string, std::size_t> position;
  for (std::size_t p = 0; p < placed.order.size(); ++p)
    position.emplace(NodeDisplayName(graph.node(placed.order[p]), placed.order[p]), p);
  placed.values.assign(placed.order.size(), std::nan(""));
  for (const auto& v : overlay.values) {
    auto it = position.find(v.node);
    if (it == position.end() || !std::isfinite(v.value)) {
      ++placed.unmatched;
      continue;
    }
    double& slot = placed.values[it->second];
    slot = std::isnan(slot)                          ? v.value
           : overlay.fold == NodeOverlay::Fold::kSum ? slot + v.value
                                                     : std::max(slot, v.value);
  }
  for (double v : placed.values) {
    if (std::isnan(v)) continue;
    placed.largest = std::max(placed.largest, v);
    if (v > 0 && (placed.smallest_positive == 0 || v < placed.smallest_positive)) placed.smallest_positive = v;
  }
  return placed;
}

// Where `value` lies between nothing and the largest, 0..1: linear, or over the decades (eight at most) below
// the largest for an error.
double Fraction(double value, double largest, double smallest_positive, bool log_scale) {
  if (!(value > 0) || !(largest > 0)) return 0;
  if (!log_scale) return std::clamp(value / largest, 0.0, 1.0);
  const double low = std::max(smallest_positive, largest * 1e-8);
  if (largest <= low) return 1;
  return std::clamp((std::log10(value) - std::log10(low)) / (std::log10(largest) - std::log10(low)), 0.02, 1.0);
}

// Pale yellow for little, deep red for the most.
std::string Colour(double fraction) {
  const auto mix = [&](int from, int to) { return static_cast<int>(std::lround(from + (to - from) * fraction)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0xfd, 0xb7), mix(0xf0, 0x1c), mix(0xc8, 0x1c));
}

std::string Amount(double value, const std::string& unit) {
  return unit.empty() ? fmt::format("{:.3g}", value) : fmt::format("{:.3g} {}", value, unit);
}

}  // namespace

std::string OverlaySection(const onnx::GraphProto& graph, const NodeOverlay& overlay, int columns) {
  const Placed placed = Place(graph, overlay);
  const std::size_t n = placed.order.size();
  std::string out = fmt::format("<section id=\"overlay\"><h2>{}</h2>\n", EscapeHtml(overlay.title));
  if (n == 0 || !(placed.largest > 0)) {
    out += "<p class=\"note\">no node of the graph has a value to show</p>";
    if (placed.unmatched > 0)
      out += fmt::format("<p class=\"note\">{} named nodes are not in this graph</p>", placed.unmatched);
    return out + "</section>\n";
  }
  const std::size_t per = (n + std::max(1, columns) - 1) / std::max(1, columns);
  const std::size_t buckets = (n + per - 1) / per;
  const double width = std::max(2.0, std::min(24.0, 1100.0 / static_cast<double>(buckets)));
  constexpr double kHeight = 90, kTop = 12;
  const double total_width = width * static_cast<double>(buckets);
  std::string bars;
  std::size_t marked_bucket = buckets;
  for (std::size_t b = 0; b < buckets; ++b) {
    double folded = std::nan("");
    std::size_t best = b * per, measured = 0;
    for (std::size_t p = b * per; p < std::min(n, (b + 1) * per); ++p) {
      const int index = placed.order[p];
      if (!overlay.marked.empty() && NodeDisplayName(graph.node(index), index) == overlay.marked) marked_bucket = b;
      const double v = placed.values[p];
      if (std::isnan(v)) continue;
      ++measured;
      if (std::isnan(folded) || v > placed.values[best] || std::isnan(placed.values[best])) best = p;
      folded = std::isnan(folded) ? v : overlay.fold == NodeOverlay::Fold::kSum ? folded + v : std::max(folded, v);
    }
    if (std::isnan(folded)) continue;
    const double f = Fraction(overlay.fold == NodeOverlay::Fold::kSum ? placed.values[best] : folded, placed.largest,
                              placed.smallest_positive, overlay.log_scale);
    const double bar = std::max(1.0, f * kHeight);
    const int index = placed.order[best];
    const std::string name = NodeDisplayName(graph.node(index), index);
    const std::string title =
        per == 1
            ? fmt::format("{} ({}): {}", name, graph.node(index).op_type(), Amount(folded, overlay.unit))
            : fmt::format("nodes {} to {} ({} measured): {} {}; the most at {} ({}): {}", b * per + 1,
                          std::min(n, (b + 1) * per), measured,
                          overlay.fold == NodeOverlay::Fold::kSum ? "in all" : "at most", Amount(folded, overlay.unit),
                          name, graph.node(index).op_type(), Amount(placed.values[best], overlay.unit));
    bars += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" data-node=\"{}\">"
        "<title>{}</title></rect>",
        static_cast<double>(b) * width, kTop + kHeight - bar, std::max(1.0, width - 0.5), bar, Colour(f), best,
        EscapeHtml(title));
  }
  std::string mark;
  if (marked_bucket < buckets) {
    const double x = (static_cast<double>(marked_bucket) + 0.5) * width;
    mark = fmt::format(
        "<path class=\"mark\" d=\"M{:.1f},0h10l-5,9z\"><title>{}</title></path>"
        "<line class=\"mark\" x1=\"{:.1f}\" y1=\"9\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>",
        x - 5, EscapeHtml(overlay.marked_label + ": " + overlay.marked), x, x, kTop + kHeight);
  }
  out += fmt::format(
      "<p>Each column is {} in topological order (first at the left); its height and colour show {}{}; the "
      "largest is {}. Point at a column for its node, click it to show the node in the model below.</p>\n"
      "<figure class=\"strip-figure\"><svg class=\"strip\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} "
      "{:.0f}\">"
      "<rect class=\"baseline\" x=\"0\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"1\"/>{}{}</svg></figure>\n",
      per == 1 ? "one node" : fmt::format("a run of {} nodes", per),
      overlay.fold == NodeOverlay::Fold::kSum ? "the node's value (the run's largest)" : "the largest value",
      overlay.log_scale ? " on a log scale" : "", Amount(placed.largest, overlay.unit), total_width, kTop + kHeight + 2,
      total_width, kTop + kHeight + 2, kTop + kHeight, total_width, bars, mark);
  if (placed.unmatched > 0) {
    out += fmt::format(
        "<p class=\"note\">{} measured node{} not in this graph (ONNX Runtime fused or renamed {}): see "
        "the tables.</p>\n",
        placed.unmatched, placed.unmatched == 1 ? " is" : "s are", placed.unmatched == 1 ? "it" : "them");
  }
  return out + "</section>\n";
}

nlohmann::json OverlayForScript(const onnx::GraphProto& graph, const NodeOverlay& overlay, int max_nodes) {
  const Placed placed = Place(graph, overlay);
  nlohmann::json nodes = nlohmann::json::array();
  const std::size_t listed = std::min(placed.order.size(), static_cast<std::size_t>(std::max(0, max_nodes)));
  for (std::size_t p = 0; p < listed; ++p) {
    const double v = placed.values[p];
    if (std::isnan(v)) continue;
    const double f = Fraction(v, placed.largest, placed.smallest_positive, overlay.log_scale);
    nodes.push_back({p, v, std::round(f * 1000) / 1000});
  }
  return {{"title", overlay.title}, {"unit", overlay.unit}, {"nodes", std::move(nodes)}};
}

}  // namespace ortkit
