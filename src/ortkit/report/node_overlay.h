#pragma once
// A value per node laid over the report page's graph: the time the profiler measured (bench --profile) or the
// error against the reference (validate --localize). Drawn twice: as a strip of bars in topological order, one
// column per node or per run of nodes, so that it scales to any model (a click reveals the node in the
// outline), and as the fill of each node's box where the outline draws it.

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

namespace ortkit {

/// What each node measured, by node name (NodeDisplayName: "#INDEX" for an unnamed node).
struct NodeOverlay {
  std::string title;  ///< "time per node", "max abs error of each node's output"
  std::string unit;   ///< "µs", "" (a plain number)
  struct Value {
    std::string node;
    double value = 0;
  };
  std::vector<Value> values;
  /// How the nodes of one strip column are combined: time adds up, an error is its largest.
  enum class Fold { kSum, kMax } fold = Fold::kSum;
  bool log_scale = false;  ///< errors span decades: bar heights and colours on log10
  std::string marked;      ///< a node to mark on the strip ("the first diverging node"); empty: none
  std::string marked_label;
  /// Nodes named in `values` that the graph does not hold (fused by the runtime, renamed), shown as a count.
};

/// The overlay's section of the page: the strip (inline SVG, every name escaped), a line of what it shows, and
/// how many named nodes the graph does not hold. `columns` bounds the strip's width whatever the model's size.
std::string OverlaySection(const onnx::GraphProto& graph, const NodeOverlay& overlay, int columns = 600);

/// {"title", "unit", "nodes": [[outline index, value, fraction 0..1], ...]} for the page's script, which fills the
/// boxes of the outline (model_outline.h: node i of the outline is the i-th of TopologicalOrder) by fraction.
nlohmann::json OverlayForScript(const onnx::GraphProto& graph, const NodeOverlay& overlay, int max_nodes);

}  // namespace ortkit
