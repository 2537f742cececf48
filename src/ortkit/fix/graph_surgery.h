#pragma once
// Edits shared by the fix passes: every graph of a model (mutable), renaming a value's readers, and
// small constants.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace ortkit {

/// Calls `visit(graph)` for the main graph and every If/Loop/Scan body, depth first; nesting deeper
/// than check's bound (64) is not visited.
void ForEachMutableGraph(onnx::GraphProto& graph, const std::function<void(onnx::GraphProto&)>& visit);

/// Every node input (in every graph) that reads `from` reads `to` instead. Returns how many were changed.
int RenameReaders(onnx::GraphProto& graph, const std::string& from, const std::string& to);

/// A name no value, initializer or node of `graph` (or its bodies) uses yet: `stem`, else `stem_1`, ...
std::string UnusedName(const onnx::GraphProto& graph, const std::string& stem);

/// An int64 tensor named `name` with `values` as a 1-D tensor.
onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<std::int64_t>& values);

}  // namespace ortkit
