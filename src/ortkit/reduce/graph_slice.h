#pragma once
// Cutting a model down to a subset of its main graph's nodes: the nodes kept (names, attributes and
// subgraph bodies whole), the initializers they read, every value they read but do not produce as a
// graph input, and every value they produce that none of them reads (or that the original graph
// outputs) as a graph output. Opset imports, IR version, functions and metadata are kept.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"

namespace ortkit {

/// Node positions in topological order: a subset of the main graph's nodes.
using NodeSubset = std::vector<std::size_t>;

/// The values crossing the border of a node subset.
struct SliceBoundary {
  std::vector<std::string> inputs;        ///< read, not produced inside, not initializers: fed at run time
  std::vector<std::string> initializers;  ///< initializers read (subgraph bodies' captures included)
  std::vector<std::string> outputs;       ///< produced inside and read by no node inside, or graph outputs
};

/// A value's concrete type for a graph input or output: element type (ONNX's number) and dimensions.
struct ValueType {
  int elem_type = 0;
  std::vector<std::int64_t> dims;
};

/// The type of a value by name; nullopt when it is not known.
using ValueTypeLookup = std::function<std::optional<ValueType>(const std::string&)>;

/// An index over one model's main graph, built once; the model must outlive it. Not thread-safe.
class GraphSlicer {
 public:
  /// Indexes `model`'s main graph: topological order (file order where it already is one), producers,
  /// the values each node reads (values its If/Loop/Scan bodies capture from the main graph included).
  explicit GraphSlicer(const onnx::ModelProto& model);

  std::size_t size() const { return order_.size(); }
  /// The node at topological `position`.
  const onnx::NodeProto& node(std::size_t position) const;
  /// Position of the node named `name`; nullopt when no node has that name (or `name` is empty).
  std::optional<std::size_t> PositionOfNode(const std::string& name) const;
  /// Position of the node producing `value`; nullopt for graph inputs, initializers and unknown names.
  std::optional<std::size_t> ProducerOf(const std::string& value) const;
  /// Values node `position` reads from the main graph (inputs and captures, no empty names).
  const std::vector<std::string>& Reads(std::size_t position) const { return reads_[position]; }
  bool IsInitializer(const std::string& value) const { return initializers_.count(value) > 0; }
  bool IsGraphInput(const std::string& value) const { return graph_inputs_.count(value) > 0; }
  const onnx::ModelProto& model() const { return model_; }

  /// The positions [first, last], in order.
  static NodeSubset Range(std::size_t first, std::size_t last);
  /// Every node whose output `values` depend on, transitively, `values`' producers included, in order.
  NodeSubset AncestorsOf(const std::vector<std::string>& values) const;
  /// What crosses the border of `subset`.
  SliceBoundary BoundaryOf(const NodeSubset& subset) const;

  /// The model made of `subset`: graph inputs typed by `types` (an error naming the value when a type
  /// is unknown), outputs typed where `types` knows them and untyped otherwise (ONNX Runtime infers
  /// them), `extra_outputs` appended untyped after them.
  Result<onnx::ModelProto> Build(const NodeSubset& subset, const ValueTypeLookup& types,
                                 const std::vector<std::string>& extra_outputs = {}) const;

 private:
  void IndexReads();
  void SortTopologically();

  const onnx::ModelProto& model_;
  std::vector<int> order_;  ///< position -> index in the graph's node list
  std::vector<std::vector<std::string>> reads_;
  std::unordered_map<std::string, std::size_t> producer_;  ///< value -> position
  std::unordered_map<std::string, std::size_t> by_name_;   ///< node name -> position
  std::unordered_map<std::string, int> initializers_;      ///< name -> index in the initializer list
  std::unordered_set<std::string> graph_inputs_;
  std::unordered_set<std::string> graph_outputs_;
};

/// The ValueType of an ONNX type when it is a tensor with an element type and every dimension fixed.
std::optional<ValueType> ConcreteType(const onnx::TypeProto& type);

}  // namespace ortkit
