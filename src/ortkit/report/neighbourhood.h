#pragma once
// The part of a model around what a finding names: a node, or a value (graph input, output, initializer or
// intermediate), and the nodes a few producer/consumer steps from it, bounded in number so that a report
// stays small on a model of any size.

#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

/// What to centre on: a node's name (or "#INDEX" for an unnamed one, as Location writes it), else a value.
struct GraphFocus {
  std::string node;
  std::string value;

  bool empty() const { return node.empty() && value.empty(); }
};

/// The focus a finding's location names: its node, else its tensor, input or output; empty when none.
GraphFocus FocusOf(const Location& location);

struct NeighbourhoodOptions {
  int hops = 2;        ///< producer/consumer steps from the focus
  int max_nodes = 40;  ///< the most nodes kept, the nearest first
};

struct Neighbourhood {
  /// The graph the focus was found in: the main graph or a subgraph (If/Loop/Scan body). Points into the
  /// model given to FindNeighbourhood, which must outlive it.
  const onnx::GraphProto* graph = nullptr;
  std::string graph_path;        ///< "" for the main graph, else ForEachGraph's "node/attribute" chain
  std::vector<int> nodes;        ///< indices into graph->node(), in topological order
  std::vector<int> focus_nodes;  ///< the named node, or the value's producer; a subset of `nodes`
  std::string focus_value;       ///< the named value, when the focus is one
  bool truncated = false;        ///< max_nodes was reached before every node within `hops` was kept
};

/// Finds `focus` in the main graph, else in the subgraphs (depth first), and the nodes within
/// options.hops of it, breadth first and nearest first, in file order among equals (so the same model gives
/// the same neighbourhood). Nullopt when no graph holds it.
std::optional<Neighbourhood> FindNeighbourhood(const onnx::ModelProto& model, const GraphFocus& focus,
                                               const NeighbourhoodOptions& options = {});

}  // namespace ortkit
