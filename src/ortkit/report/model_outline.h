#pragma once
// The whole main graph as data for the report page's script: nodes grouped by their name scopes
// ("/encoder/layer.3/attention/MatMul" is in encoder > layer.3 > attention), each scope's own nodes in chunks
// of bounded size, each chunk laid out here (graph_layout.h). The page draws a chunk only when it is
// expanded, so a model of 10,000 nodes opens with its top scopes alone.

#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

namespace ortkit {

struct OutlineOptions {
  int chunk_nodes = 120;      ///< the most nodes drawn in one picture
  int max_nodes = 20000;      ///< nodes listed at most (in topological order); the rest are counted only
  int max_name_bytes = 200;   ///< a longer node name is cut
  int max_hover_bytes = 600;  ///< a node's hover text (attributes) is cut
};

/// {"nodes": [[name, op_type, hover text, scope, chunk, x, y, width]] (arrays: a 10,000-node page stays small),
///  "scopes": [{"name", "path", "parent", "children", "count" (nodes within, nested ones included),
///              "chunks": [{"nodes": [...], "width", "height", "edges": [[from, to, x, y, x, y, ...]]}]}],
///  "total": every node of the graph, "listed": the nodes in "nodes"}. Scope 0 is the graph itself.
nlohmann::json ModelOutline(const onnx::GraphProto& graph, const OutlineOptions& options = {});

}  // namespace ortkit
