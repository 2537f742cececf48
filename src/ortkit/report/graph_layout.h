#pragma once
// A layered drawing of a directed graph, computed here rather than in the browser so that one model always
// gives one picture: longest-path layers, long edges routed through one bend per layer they cross, the order
// within each layer settled by barycentre sweeps. Pure functions of their arguments; no randomness, no
// clocks, no hash-map iteration order.

#include <vector>

namespace ortkit {

/// A box to place: its size in drawing units (pixels in the report).
struct LayoutNode {
  double width = 120;
  double height = 36;
};

/// An edge between two of the nodes, by index. The nodes are expected in topological order: an edge
/// that goes back (from >= to, a cycle) does not shape the layers and is drawn straight.
struct LayoutEdge {
  int from = 0;
  int to = 0;
};

struct LayoutOptions {
  double layer_gap = 56;    ///< vertical space between two layers
  double node_gap = 24;     ///< horizontal space between two boxes of one layer
  double bend_width = 12;   ///< the room a long edge takes where it crosses a layer
  double margin = 16;       ///< around the whole drawing
  int ordering_sweeps = 8;  ///< barycentre passes, alternately down and up
};

struct LayoutPoint {
  double x = 0;
  double y = 0;
};

/// A placed box: top-left corner, size, its layer (0 at the top) and its place in that layer.
struct PlacedNode {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
  int layer = 0;
  int order = 0;
};

struct GraphLayout {
  std::vector<PlacedNode> nodes;                ///< one per LayoutNode, same index
  std::vector<std::vector<LayoutPoint>> edges;  ///< one polyline per LayoutEdge; empty for an edge out of range
  double width = 0;
  double height = 0;
};

/// Places `nodes` top to bottom: every node in a layer below each predecessor (by a forward edge), boxes of
/// one layer side by side without overlap, each edge from the bottom centre of its source to the top centre
/// of its target. The same arguments always give the same layout.
GraphLayout LayOutGraph(const std::vector<LayoutNode>& nodes, const std::vector<LayoutEdge>& edges,
                        const LayoutOptions& options = {});

}  // namespace ortkit
