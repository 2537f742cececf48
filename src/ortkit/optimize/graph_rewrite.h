#pragma once
// What the rewriting passes of `optimize` share: an index of the main graph's constants and readers,
// fresh names, and the constants they add. A pass rebuilds the node list in order, replacing the nodes
// it rewrites by their quantised or converted form, and drops the float weights nothing reads any more.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

namespace ortkit {

/// The main graph of `model` while a pass rewrites it. Not thread-safe; the graph must outlive it, and
/// initializers are added through it so that names stay unique.
class GraphRewrite {
 public:
  explicit GraphRewrite(onnx::ModelProto& model);

  onnx::GraphProto& graph() { return graph_; }

  /// The float32 initializer `name` of at least `min_rank` dimensions, or nullptr: not an initializer, of
  /// another type, stored externally, or also a graph input (callers may feed another value).
  const onnx::TensorProto* FloatWeight(const std::string& name, int min_rank = 2) const;
  /// Its values (float_data or raw_data); nullopt when the data does not match its dims.
  static std::optional<std::vector<float>> FloatValues(const onnx::TensorProto& tensor);

  /// Node inputs (every graph, bodies included) and graph outputs that read `name`.
  int Readers(const std::string& name) const;

  /// A name nothing in the graph uses yet, `stem` itself when free; reserved from then on.
  std::string NewName(const std::string& stem);

  /// Adds an initializer named NewName(stem) and returns its name.
  std::string AddInitializer(const std::string& stem, onnx::TensorProto tensor);
  std::string AddFloats(const std::string& stem, std::span<const float> values, const std::vector<std::int64_t>& dims);
  std::string AddScalar(const std::string& stem, onnx::TensorProto::DataType type, double value);

  /// A node with fresh output names derived from `stem` where `outputs` leaves them empty.
  onnx::NodeProto MakeNode(const std::string& op_type, std::vector<std::string> inputs,
                           std::vector<std::string> outputs, const std::string& stem, const std::string& domain = "");

  /// Replaces the node list by `nodes` and removes the initializers no node, body or graph output reads.
  /// Returns the number of bytes of initializer data removed.
  std::int64_t Commit(std::vector<onnx::NodeProto> nodes);

  /// Adds `domain` (version `version`) to the model's opset imports unless it is there.
  void ImportDomain(const std::string& domain, std::int64_t version);

 private:
  void CountReaders();

  onnx::ModelProto& model_;
  onnx::GraphProto& graph_;
  std::unordered_map<std::string, int> initializer_;  ///< name -> index in graph_.initializer()
  std::unordered_set<std::string> graph_inputs_;
  std::unordered_map<std::string, int> readers_;
  std::unordered_set<std::string> names_;
};

/// An attribute of `node` by name, nullptr when absent.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name);
/// Its integer value, or `fallback`.
std::int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, std::int64_t fallback);
float FloatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback);

/// Node counts by op type over the main graph (domain-qualified for other domains than ONNX's:
/// "com.microsoft.SkipLayerNormalization" is written "SkipLayerNormalization").
std::map<std::string, int> CountOps(const onnx::GraphProto& graph);

/// Removes opset imports of domains no node of any graph uses (ONNX Runtime's saved graphs import every
/// domain it knows); ONNX's own domain is always kept.
void DropUnusedImports(onnx::ModelProto& model);

}  // namespace ortkit
