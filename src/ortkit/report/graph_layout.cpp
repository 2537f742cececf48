#include "ortkit/report/graph_layout.h"

#include <algorithm>
#include <cstddef>

namespace ortkit {
namespace {

// The real nodes and the bends of long edges, each in one layer, with its neighbours one layer up and down.
struct LayeredGraph {
  std::vector<int> layer;
  std::vector<double> width;
  std::vector<double> height;
  std::vector<std::vector<int>> up;
  std::vector<std::vector<int>> down;
  std::vector<std::vector<int>> chains;  ///< per edge: source, bends, target; empty when out of range
  std::vector<std::vector<int>> layers;  ///< vertex ids per layer, in drawing order

  int AddVertex(int in_layer, double w, double h) {
    layer.push_back(in_layer);
    width.push_back(w);
    height.push_back(h);
    up.emplace_back();
    down.emplace_back();
    return static_cast<int>(layer.size()) - 1;
  }
  void Link(int from, int to) {
    down[from].push_back(to);
    up[to].push_back(from);
  }
};

bool InRange(const LayoutEdge& e, std::size_t n) {
  return e.from >= 0 && e.to >= 0 && static_cast<std::size_t>(e.from) < n && static_cast<std::size_t>(e.to) < n;
}

// Longest path from the sources, over forward edges only (a back edge would make it unbounded).
std::vector<int> LongestPathLayers(std::size_t n, const std::vector<LayoutEdge>& edges) {
  std::vector<std::vector<int>> incoming(n);
  for (const auto& e : edges)
    if (InRange(e, n) && e.from < e.to) incoming[e.to].push_back(e.from);
  std::vector<int> layer(n, 0);
  for (std::size_t v = 0; v < n; ++v)
    for (int u : incoming[v]) layer[v] = std::max(layer[v], layer[u] + 1);
  return layer;
}

LayeredGraph BuildLayers(const std::vector<LayoutNode>& nodes, const std::vector<LayoutEdge>& edges,
                         const LayoutOptions& options) {
  LayeredGraph g;
  const std::vector<int> layers = LongestPathLayers(nodes.size(), edges);
  for (std::size_t i = 0; i < nodes.size(); ++i) g.AddVertex(layers[i], nodes[i].width, nodes[i].height);
  for (const auto& e : edges) {
    std::vector<int> chain;
    if (InRange(e, nodes.size())) {
      chain.push_back(e.from);
      if (e.from < e.to) {
        for (int l = g.layer[e.from] + 1; l < g.layer[e.to]; ++l) {
          chain.push_back(g.AddVertex(l, options.bend_width, 0));
          g.Link(chain[chain.size() - 2], chain.back());
        }
        g.Link(chain.back(), e.to);
      }
      chain.push_back(e.to);
    }
    g.chains.push_back(std::move(chain));
  }
  int depth = 0;
  for (int l : g.layer) depth = std::max(depth, l + 1);
  g.layers.resize(depth);
  for (std::size_t v = 0; v < g.layer.size(); ++v) g.layers[g.layer[v]].push_back(static_cast<int>(v));
  return g;
}

// Reorders one layer by the mean position of each vertex's neighbours in the adjacent layer; a vertex with
// none keeps its own position as its key. The sort is stable, so ties keep the previous order.
void OrderByBarycentre(std::vector<int>& layer, const std::vector<std::vector<int>>& neighbours,
                       const std::vector<int>& position) {
  std::vector<std::pair<double, int>> keyed;
  keyed.reserve(layer.size());
  for (int v : layer) {
    double key = position[v];
    if (!neighbours[v].empty()) {
      double sum = 0;
      for (int u : neighbours[v]) sum += position[u];
      key = sum / static_cast<double>(neighbours[v].size());
    }
    keyed.emplace_back(key, v);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < layer.size(); ++i) layer[i] = keyed[i].second;
}

void OrderLayers(LayeredGraph& g, int sweeps) {
  std::vector<int> position(g.layer.size(), 0);
  auto renumber = [&](const std::vector<int>& layer) {
    for (std::size_t i = 0; i < layer.size(); ++i) position[layer[i]] = static_cast<int>(i);
  };
  for (const auto& layer : g.layers) renumber(layer);
  const int depth = static_cast<int>(g.layers.size());
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    const bool downward = sweep % 2 == 0;
    for (int step = 1; step < depth; ++step) {
      const int l = downward ? step : depth - 1 - step;
      OrderByBarycentre(g.layers[l], downward ? g.up : g.down, position);
      renumber(g.layers[l]);
    }
  }
}

}  // namespace

GraphLayout LayOutGraph(const std::vector<LayoutNode>& nodes, const std::vector<LayoutEdge>& edges,
                        const LayoutOptions& options) {
  LayeredGraph g = BuildLayers(nodes, edges, options);
  OrderLayers(g, options.ordering_sweeps);
  // Each layer centred on one axis; the drawing then shifted so that its left edge is at the margin.
  std::vector<double> x(g.layer.size(), 0), y(g.layer.size(), 0);
  double top = options.margin, left = 0, right = 0;
  for (const auto& layer : g.layers) {
    double total = 0, tallest = 0;
    for (int v : layer) {
      total += g.width[v];
      tallest = std::max(tallest, g.height[v]);
    }
    if (!layer.empty()) total += options.node_gap * static_cast<double>(layer.size() - 1);
    double cursor = -total / 2;
    for (int v : layer) {
      x[v] = cursor;
      y[v] = top + (tallest - g.height[v]) / 2;
      cursor += g.width[v] + options.node_gap;
    }
    left = std::min(left, -total / 2);
    right = std::max(right, total / 2);
    top += tallest + options.layer_gap;
  }
  const double shift = options.margin - left;
  GraphLayout layout;
  layout.width = right - left + 2 * options.margin;
  layout.height = g.layers.empty() ? 2 * options.margin : top - options.layer_gap + options.margin;
  std::vector<int> order(g.layer.size(), 0);
  for (const auto& layer : g.layers)
    for (std::size_t i = 0; i < layer.size(); ++i) order[layer[i]] = static_cast<int>(i);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    layout.nodes.push_back({x[i] + shift, y[i], g.width[i], g.height[i], g.layer[i], order[i]});
  for (const auto& chain : g.chains) {
    std::vector<LayoutPoint> line;
    for (std::size_t k = 0; k < chain.size(); ++k) {
      const int v = chain[k];
      const double cx = x[v] + shift + g.width[v] / 2;
      line.push_back({cx, k == 0 ? y[v] + g.height[v] : y[v]});  // from the source's bottom to tops
    }
    layout.edges.push_back(std::move(line));
  }
  return layout;
}

}  // namespace ortkit
