#pragma once
// What the lint rules share: the model index (every graph with its names resolved once, so that each
// rule is a linear pass), small accessors over the protobuf classes, and the findings collector.
// Internal to check/: the rules live in structural_rules.cpp and exporter_rules.cpp, the table that
// runs them in lint.cpp.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "ortkit/check/lint.h"
#include "ortkit/diagnose/diagnosis.h"

namespace ortkit::lint {

constexpr int kMaxGraphDepth = 64;                 // the same bound as ForEachGraph: deeper files are hostile
constexpr long long kMaxPlausibleDim = 1LL << 40;  // a trillion elements along one axis is no real model
constexpr std::size_t kMaxNamesListed = 5;

// Small helpers over the protobuf classes. Every accessor tolerates absent fields.
bool IsOnnxDomain(const std::string& domain);
bool IsOnnxOp(const onnx::NodeProto& node, std::string_view op_type);
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, std::string_view name);
// The integer value of an attribute; nullopt when absent or of another type (malformed models).
std::optional<long long> IntAttribute(const onnx::NodeProto& node, std::string_view name);
const onnx::TensorProto* TensorAttribute(const onnx::NodeProto& node, std::string_view name);
// The name at a position, "" when the node has fewer (an omitted optional input or output).
const std::string& Input(const onnx::NodeProto& node, int index);
const std::string& Output(const onnx::NodeProto& node, int index);
const onnx::TensorShapeProto* ShapeOf(const onnx::TypeProto& type);
int ElementTypeOf(const onnx::TypeProto& type);
bool IsFixed(const onnx::TensorShapeProto::Dimension& dim);
std::string DimText(const onnx::TensorShapeProto::Dimension& dim);
std::string ShapeText(const onnx::TensorShapeProto& shape);
std::string IntsText(const std::vector<long long>& values);
// "'a', 'b', 'c' and 4 more"
std::string NameList(const std::vector<std::string>& names, std::size_t limit = kMaxNamesListed);
// Integer contents of a small tensor (shape constants, boolean flags). nullopt when the values are
// not in the file (external data), the type is not an integer type or the data is inconsistent.
std::optional<std::vector<long long>> TensorInts(const onnx::TensorProto& tensor, std::size_t limit);

// ---------------------------------------------------------------------------------------------
// The model index: every graph (main graph and subgraph bodies) with its names resolved once, so
// that each rule is a linear pass. Built without recursion; nesting deeper than kMaxGraphDepth is cut.

struct NodeRef {
  int scope = 0;
  int node = 0;
};

// Names are views into the ModelProto, which outlives the index: no string is copied per value.
using Name = std::string_view;

struct Scope {
  const onnx::GraphProto* graph = nullptr;
  int parent = -1;      // enclosing scope; -1 for the main graph
  int owner_node = -1;  // index, in the parent graph, of the node whose attribute holds this graph
  std::string path;     // "" for the main graph, "node/attribute" chains below it
  std::unordered_map<Name, const onnx::TensorProto*> initializers;  // null for sparse ones
  std::unordered_set<Name> inputs;                         // declared graph inputs, initializers listed there included
  std::unordered_map<Name, int> producer;                  // node output -> first node writing it
  std::unordered_set<Name> defined;                        // inputs, initializers and node outputs
  std::unordered_map<int, std::vector<int>> child_scopes;  // node index -> scopes of its graph attributes
  std::vector<Name> captured;  // names read from enclosing graphs, by this graph or nested ones
};

class ModelIndex {
 public:
  explicit ModelIndex(const onnx::ModelProto& model);

  const onnx::ModelProto& model() const { return model_; }
  const std::vector<Scope>& scopes() const { return scopes_; }
  const Scope& main() const { return scopes_.front(); }
  const onnx::GraphProto& graph(int scope) const { return *scopes_[scope].graph; }
  const onnx::NodeProto& node(NodeRef ref) const { return scopes_[ref.scope].graph->node(ref.node); }
  /// The ai.onnx opset the model imports; -1 when it imports none.
  int onnx_opset() const { return onnx_opset_; }

  /// Graph inputs of the main graph that are fed at run time (not initializers).
  std::vector<const onnx::ValueInfoProto*> RuntimeInputs() const;

  /// Nodes reading `name` explicitly, in any graph, and nodes whose subgraphs capture it.
  const std::vector<NodeRef>* Consumers(Name name) const {
    auto it = consumers_.find(name);
    return it == consumers_.end() ? nullptr : &it->second;
  }
  /// True when some node of some graph reads `name` as an explicit input.
  bool IsReadExplicitly(Name name) const { return explicitly_read_.count(name) > 0; }
  bool IsGraphOutput(Name name) const { return graph_outputs_.count(name) > 0; }

  /// Calls `visit(name)` for every input of a node: its non-empty explicit inputs, then the
  /// outer values its subgraphs capture (what ONNX Runtime calls implicit inputs).
  template <typename Visit>
  void ForEachInput(int scope, int node_index, Visit&& visit) const {
    const auto& node = scopes_[scope].graph->node(node_index);
    for (const auto& in : node.input()) {
      if (!in.empty()) visit(in);
    }
    auto it = scopes_[scope].child_scopes.find(node_index);
    if (it == scopes_[scope].child_scopes.end()) return;
    for (int child : it->second) {
      for (const auto& name : scopes_[child].captured) visit(name);
    }
  }

  /// The scope that defines `name` as seen from `scope` (itself or an enclosing one); -1 if none.
  int DefiningScope(int scope, Name name) const {
    for (int s = scope; s >= 0; s = scopes_[s].parent) {
      if (scopes_[s].defined.count(name)) return s;
    }
    return -1;
  }

  /// The integer values of `name` when it is a constant: an initializer or a Constant node's
  /// output, in `scope` or an enclosing graph. nullopt for run-time values and non-integer data.
  std::optional<std::vector<long long>> ConstantInts(int scope, Name name, std::size_t limit = 64) const;

  /// Values computed from the values of `roots`, in every graph, each mapped to the root it came
  /// from. Shape and Size stop the flow: their outputs depend on shapes, not on values. A node
  /// reached by such a value taints all its outputs and the formal inputs of its subgraphs.
  std::unordered_map<Name, Name> DerivedValues(const std::vector<Name>& roots) const;

  /// " in subgraph 'path'" for nested graphs, "" for the main graph: appended to messages.
  std::string Where(int scope) const {
    return scopes_[scope].path.empty() ? std::string() : fmt::format(" in subgraph '{}'", scopes_[scope].path);
  }

 private:
  void BuildScopes();

  void ComputeCaptured(int s);

  void BuildConsumers();

  const onnx::ModelProto& model_;
  int onnx_opset_ = -1;
  std::vector<Scope> scopes_;
  std::unordered_map<Name, std::vector<NodeRef>> consumers_;
  std::unordered_set<Name> explicitly_read_;
  std::unordered_set<Name> graph_outputs_;
};

/// Two dimensions that an element-wise node of the main graph aligns (numpy broadcasting, from the right)
/// when it combines two graph inputs directly: they must be equal, or one of them 1.
struct AlignedInputDims {
  int node = 0;
  std::string input_a;
  int axis_a = 0;
  const onnx::TensorShapeProto* shape_a = nullptr;  ///< input_a's declared shape, in the model
  std::string input_b;
  int axis_b = 0;
  const onnx::TensorShapeProto* shape_b = nullptr;
};

/// Every such pair, node by node (shape.dim-name-inconsistent judges them; `fix` renames).
std::vector<AlignedInputDims> AlignedInputDimensions(const ModelIndex& index);

/// The location of the `index`-th node of a graph, for a finding.
Location NodeLocation(const onnx::NodeProto& node, int index);

// Collects one rule's findings; past the limit it only counts, and Take() adds one summary.
class Findings {
 public:
  Findings(std::string_view code, int limit) : code_(code), limit_(std::max(limit, 1)) {}

  void Add(std::string message, Location location = {}, bool heuristic = false) {
    if (static_cast<int>(diagnoses_.size()) >= limit_) {
      ++dropped_;
      return;
    }
    Diagnosis d = Diagnose(code_, std::move(message), std::move(location));
    d.heuristic = heuristic;
    diagnoses_.push_back(std::move(d));
  }

  /// The last finding added, to make its cause or fix specific; nullptr when none was kept.
  Diagnosis* Last() { return diagnoses_.empty() ? nullptr : &diagnoses_.back(); }

  std::vector<Diagnosis> Take() {
    if (dropped_ > 0) {
      Diagnosis summary = Diagnose(
          code_, fmt::format("{} more findings of this kind are not listed (the first {} are)", dropped_, limit_));
      summary.heuristic = diagnoses_.front().heuristic;
      diagnoses_.push_back(std::move(summary));
    }
    return std::move(diagnoses_);
  }

 private:
  std::string_view code_;
  int limit_;
  std::vector<Diagnosis> diagnoses_;
  long long dropped_ = 0;
};

// The rules, each reporting under its own code only.
// Structural (structural_rules.cpp): what makes a graph invalid whoever exported it.
// Exporter habits (exporter_rules.cpp): what exporters typically get wrong in a valid graph.
void CheckOpsetTooOld(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckOpsetTooNew(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckCustomDomain(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckUnusedOpsetImport(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckStaticBatch(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckTrainingDropout(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckTrainingBatchNorm(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckFloat64Mixed(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckDynamicResize(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckBakedBatchReshape(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckUnusedInput(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckOutputInternalName(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckCapturedConstantInput(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckLogitsToKeepInput(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckInitializerAsInput(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckUndefinedValue(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckDuplicateName(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckCycle(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckBadDimension(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckMinusOneDimension(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckNoOutputs(const ModelIndex& index, const LintOptions& options, Findings& findings);
void CheckDimNameInconsistent(const ModelIndex& index, const LintOptions& options, Findings& findings);

}  // namespace ortkit::lint
