#pragma once
// Visiting every graph of a model: the main graph and the bodies of If/Loop/Scan nodes,
// and the functions' node lists.

#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace ortkit {

/// Calls `visit(graph, path)` for the main graph and every nested subgraph, depth first.
/// `path` is "" for the main graph and "node_name/attr" chains for subgraphs.
void ForEachGraph(const onnx::GraphProto& graph,
                  const std::function<void(const onnx::GraphProto&, const std::string&)>& visit);

/// The node indices of `graph` in topological order: a node follows the producers of its inputs and of
/// every name its If/Loop/Scan bodies read (the outer values they capture are among them). Kahn's
/// algorithm taking the lowest index first, so a graph already in order keeps it; nodes on a cycle (a
/// model ONNX Runtime refuses anyway) follow in file order.
std::vector<int> TopologicalOrder(const onnx::GraphProto& graph);

/// A node's display name: its name, or "#<index> <op_type>" when the exporter left it unnamed.
std::string NodeDisplayName(const onnx::NodeProto& node, int index);

/// Element count of a tensor from its dims; -1 on overflow or a negative dimension.
long long ElementCount(const onnx::TensorProto& tensor);

/// Size of one element in bytes for an ONNX data type; 0 for strings and unknown types.
int ElementSize(int data_type);

/// "float32", "int64", ... for an ONNX TensorProto data type.
std::string ElementTypeName(int data_type);

}  // namespace ortkit
