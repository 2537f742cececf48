#include "ortkit/diagnose/rules.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

constexpr int kMaxGraphDepth = 64;                 // the same bound as ForEachGraph: deeper files are hostile
constexpr long long kMaxPlausibleDim = 1LL << 40;  // a trillion elements along one axis is no real model
constexpr std::size_t kMaxNamesListed = 5;

// ---------------------------------------------------------------------------------------------
// Small helpers over the protobuf classes. Every accessor tolerates absent fields.

bool IsOnnxDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

bool IsOnnxOp(const onnx::NodeProto& node, std::string_view op_type) {
  return IsOnnxDomain(node.domain()) && node.op_type() == op_type;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

// The integer value of an attribute; nullopt when absent or of another type (malformed models).
std::optional<long long> IntAttribute(const onnx::NodeProto& node, std::string_view name) {
  const auto* attr = FindAttribute(node, name);
  if (attr == nullptr || !attr->has_i()) return std::nullopt;
  if (attr->type() != onnx::AttributeProto::INT && attr->type() != onnx::AttributeProto::UNDEFINED) return std::nullopt;
  return attr->i();
}

const onnx::TensorProto* TensorAttribute(const onnx::NodeProto& node, std::string_view name) {
  const auto* attr = FindAttribute(node, name);
  return attr != nullptr && attr->has_t() ? &attr->t() : nullptr;
}

const std::string& NoName() {
  static const std::string empty;
  return empty;
}

// The name at a position, "" when the node has fewer (an omitted optional input or output).
const std::string& Input(const onnx::NodeProto& node, int index) {
  return index >= 0 && index < node.input_size() ? node.input(index) : NoName();
}

const std::string& Output(const onnx::NodeProto& node, int index) {
  return index >= 0 && index < node.output_size() ? node.output(index) : NoName();
}

const onnx::TensorShapeProto* ShapeOf(const onnx::TypeProto& type) {
  if (type.has_tensor_type() && type.tensor_type().has_shape()) return &type.tensor_type().shape();
  if (type.has_sparse_tensor_type() && type.sparse_tensor_type().has_shape()) return &type.sparse_tensor_type().shape();
  return nullptr;
}

int ElementTypeOf(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return type.tensor_type().elem_type();
  if (type.has_sparse_tensor_type()) return type.sparse_tensor_type().elem_type();
  return onnx::TensorProto::UNDEFINED;
}

bool IsFixed(const onnx::TensorShapeProto::Dimension& dim) { return dim.has_dim_value(); }

std::string DimText(const onnx::TensorShapeProto::Dimension& dim) {
  if (dim.has_dim_value()) return std::to_string(dim.dim_value());
  return dim.dim_param().empty() ? "?" : dim.dim_param();
}

std::string ShapeText(const onnx::TensorShapeProto& shape) {
  std::string out = "[";
  for (int i = 0; i < shape.dim_size(); ++i) out += (i ? ", " : "") + DimText(shape.dim(i));
  return out + "]";
}

std::string IntsText(const std::vector<long long>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

// "'a', 'b', 'c' and 4 more"
std::string NameList(const std::vector<std::string>& names, std::size_t limit = kMaxNamesListed) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > limit) out += fmt::format(" and {} more", names.size() - limit);
  return out;
}

// One integer of `size` bytes (1, 2, 4 or 8) from ONNX raw data, which is little-endian like
// every host ortkit runs on.
long long ReadLittleEndian(const char* bytes, int size, bool is_signed) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, bytes, static_cast<std::size_t>(size));
  if (size == 8 || !is_signed) return static_cast<long long>(bits);
  const int shift = 64 - 8 * size;  // sign-extend the narrow value
  return static_cast<long long>(bits << shift) >> shift;
}

// Integer contents of a small tensor (shape constants, boolean flags). nullopt when the values are
// not in the file (external data), the type is not an integer type or the data is inconsistent.
std::optional<std::vector<long long>> TensorInts(const onnx::TensorProto& tensor, std::size_t limit) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  struct Layout {
    int size;
    bool is_signed;
  };
  Layout layout{};
  switch (tensor.data_type()) {
    case onnx::TensorProto::INT64: layout = {8, true}; break;
    case onnx::TensorProto::UINT64: layout = {8, false}; break;
    case onnx::TensorProto::INT32: layout = {4, true}; break;
    case onnx::TensorProto::UINT32: layout = {4, false}; break;
    case onnx::TensorProto::INT16: layout = {2, true}; break;
    case onnx::TensorProto::UINT16: layout = {2, false}; break;
    case onnx::TensorProto::INT8: layout = {1, true}; break;
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL: layout = {1, false}; break;
    default: return std::nullopt;
  }
  std::vector<long long> values;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    if (raw.size() % layout.size != 0) return std::nullopt;
    const std::size_t count = std::min(raw.size() / layout.size, limit);
    for (std::size_t i = 0; i < count; ++i) {
      const long long v = ReadLittleEndian(raw.data() + i * layout.size, layout.size, layout.is_signed);
      values.push_back(v);
    }
    return values;
  }
  if (tensor.data_type() == onnx::TensorProto::INT64) {
    for (int i = 0; i < tensor.int64_data_size() && values.size() < limit; ++i) values.push_back(tensor.int64_data(i));
  } else if (tensor.data_type() == onnx::TensorProto::UINT64 || tensor.data_type() == onnx::TensorProto::UINT32) {
    for (int i = 0; i < tensor.uint64_data_size() && values.size() < limit; ++i) {
      values.push_back(static_cast<long long>(tensor.uint64_data(i)));
    }
  } else {
    for (int i = 0; i < tensor.int32_data_size() && values.size() < limit; ++i) values.push_back(tensor.int32_data(i));
  }
  return values;
}

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
  explicit ModelIndex(const onnx::ModelProto& model) : model_(model) {
    for (const auto& opset : model.opset_import()) {
      if (IsOnnxDomain(opset.domain())) {
        onnx_opset_ = static_cast<int>(std::clamp<long long>(opset.version(), -1, 1 << 20));
        break;
      }
    }
    BuildScopes();
    for (int s = static_cast<int>(scopes_.size()) - 1; s >= 0; --s) ComputeCaptured(s);  // children first
    BuildConsumers();
  }

  const onnx::ModelProto& model() const { return model_; }
  const std::vector<Scope>& scopes() const { return scopes_; }
  const Scope& main() const { return scopes_.front(); }
  const onnx::GraphProto& graph(int scope) const { return *scopes_[scope].graph; }
  const onnx::NodeProto& node(NodeRef ref) const { return scopes_[ref.scope].graph->node(ref.node); }
  /// The ai.onnx opset the model imports; -1 when it imports none.
  int onnx_opset() const { return onnx_opset_; }

  /// Graph inputs of the main graph that are fed at run time (not initializers).
  std::vector<const onnx::ValueInfoProto*> RuntimeInputs() const {
    std::vector<const onnx::ValueInfoProto*> out;
    for (const auto& in : main().graph->input()) {
      if (!main().initializers.count(in.name())) out.push_back(&in);
    }
    return out;
  }

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
  std::optional<std::vector<long long>> ConstantInts(int scope, Name name, std::size_t limit = 64) const {
    const int s = DefiningScope(scope, name);
    if (s < 0) return std::nullopt;
    const Scope& where = scopes_[s];
    if (auto init = where.initializers.find(name); init != where.initializers.end()) {
      return init->second != nullptr ? TensorInts(*init->second, limit) : std::nullopt;
    }
    auto it = where.producer.find(name);
    if (it == where.producer.end()) return std::nullopt;
    const auto& producer = where.graph->node(it->second);
    if (!IsOnnxOp(producer, "Constant")) return std::nullopt;
    if (const auto* value = TensorAttribute(producer, "value")) return TensorInts(*value, limit);
    if (auto v = IntAttribute(producer, "value_int")) return std::vector<long long>{*v};
    if (const auto* ints = FindAttribute(producer, "value_ints")) {
      std::vector<long long> values;
      for (int i = 0; i < ints->ints_size() && values.size() < limit; ++i) values.push_back(ints->ints(i));
      return values;
    }
    return std::nullopt;
  }

  /// Values computed from the values of `roots`, in every graph, each mapped to the root it came
  /// from. Shape and Size stop the flow: their outputs depend on shapes, not on values. A node
  /// reached by such a value taints all its outputs and the formal inputs of its subgraphs.
  std::unordered_map<Name, Name> DerivedValues(const std::vector<Name>& roots) const {
    std::unordered_map<Name, Name> derived;
    std::deque<Name> work;
    for (const auto& root : roots) {
      if (derived.emplace(root, root).second) work.push_back(root);
    }
    std::vector<std::vector<bool>> reached(scopes_.size());
    for (std::size_t s = 0; s < scopes_.size(); ++s) reached[s].assign(scopes_[s].graph->node_size(), false);
    auto taint = [&](Name name, Name root) {
      if (!name.empty() && derived.emplace(name, root).second) work.push_back(name);
    };
    while (!work.empty()) {
      const Name name = work.front();
      work.pop_front();
      const auto* consumers = Consumers(name);
      if (consumers == nullptr) continue;
      const Name root = derived[name];
      for (const NodeRef& ref : *consumers) {
        if (reached[ref.scope][ref.node]) continue;
        const auto& n = node(ref);
        if (IsOnnxOp(n, "Shape") || IsOnnxOp(n, "Size")) continue;
        reached[ref.scope][ref.node] = true;
        for (const auto& out : n.output()) taint(out, root);
        auto it = scopes_[ref.scope].child_scopes.find(ref.node);
        if (it == scopes_[ref.scope].child_scopes.end()) continue;
        for (int child : it->second) {
          for (const auto& in : scopes_[child].graph->input()) taint(in.name(), root);
        }
      }
    }
    return derived;
  }

  /// " in subgraph 'path'" for nested graphs, "" for the main graph: appended to messages.
  std::string Where(int scope) const {
    return scopes_[scope].path.empty() ? std::string() : fmt::format(" in subgraph '{}'", scopes_[scope].path);
  }

 private:
  void BuildScopes() {
    struct Pending {
      const onnx::GraphProto* graph;
      int parent;
      int owner_node;
      std::string path;
      int depth;
    };
    std::deque<Pending> pending;
    pending.push_back({&model_.graph(), -1, -1, "", 0});
    while (!pending.empty()) {
      Pending p = std::move(pending.front());
      pending.pop_front();
      const int index = static_cast<int>(scopes_.size());
      scopes_.emplace_back();
      Scope& scope = scopes_.back();
      scope.graph = p.graph;
      scope.parent = p.parent;
      scope.owner_node = p.owner_node;
      scope.path = p.path;
      if (p.parent >= 0) scopes_[p.parent].child_scopes[p.owner_node].push_back(index);
      const auto& g = *p.graph;
      for (const auto& in : g.input()) {
        scope.inputs.insert(in.name());
        scope.defined.insert(in.name());
      }
      for (const auto& init : g.initializer()) {
        scope.initializers.emplace(init.name(), &init);
        scope.defined.insert(init.name());
      }
      for (const auto& sparse : g.sparse_initializer()) {
        scope.initializers.emplace(sparse.values().name(), nullptr);  // values alone are not the dense tensor
        scope.defined.insert(sparse.values().name());
      }
      for (int i = 0; i < g.node_size(); ++i) {
        const auto& n = g.node(i);
        for (const auto& out : n.output()) {
          if (out.empty()) continue;
          scope.producer.emplace(out, i);
          scope.defined.insert(out);
        }
        if (p.depth + 1 > kMaxGraphDepth) continue;
        for (const auto& attr : n.attribute()) {
          const std::string prefix = (p.path.empty() ? "" : p.path + "/") + NodeDisplayName(n, i) + "/" + attr.name();
          if (attr.has_g()) pending.push_back({&attr.g(), index, i, prefix, p.depth + 1});
          for (const auto& sub : attr.graphs()) pending.push_back({&sub, index, i, prefix, p.depth + 1});
        }
      }
    }
  }

  void ComputeCaptured(int s) {
    Scope& scope = scopes_[s];
    std::unordered_set<Name> seen;
    auto consider = [&](Name name) {
      if (!scope.defined.count(name) && seen.insert(name).second) scope.captured.push_back(name);
    };
    for (const auto& n : scope.graph->node()) {
      for (const auto& in : n.input()) {
        if (!in.empty()) consider(in);
      }
    }
    for (const auto& out : scope.graph->output()) {
      if (!out.name().empty()) consider(out.name());
    }
    for (const auto& [node, children] : scope.child_scopes) {
      for (int child : children) {
        for (const auto& name : scopes_[child].captured) consider(name);
      }
    }
  }

  void BuildConsumers() {
    for (int s = 0; s < static_cast<int>(scopes_.size()); ++s) {
      const auto& g = *scopes_[s].graph;
      for (const auto& out : g.output()) graph_outputs_.insert(out.name());
      for (int i = 0; i < g.node_size(); ++i) {
        for (const auto& in : g.node(i).input()) {
          if (!in.empty()) explicitly_read_.insert(in);
        }
        ForEachInput(s, i, [&](Name name) {
          auto& list = consumers_[name];
          if (list.empty() || list.back().scope != s || list.back().node != i) list.push_back({s, i});
        });
      }
    }
  }

  const onnx::ModelProto& model_;
  int onnx_opset_ = -1;
  std::vector<Scope> scopes_;
  std::unordered_map<Name, std::vector<NodeRef>> consumers_;
  std::unordered_set<Name> explicitly_read_;
  std::unordered_set<Name> graph_outputs_;
};

Location NodeLocation(const onnx::NodeProto& node, int index) {
  Location where;
  where.node = NodeDisplayName(node, index);
  where.op_type = node.op_type();
  return where;
}

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

// ---------------------------------------------------------------------------------------------
// The rules. Each reports under its own code only.

void CheckOpsetTooOld(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const int opset = index.onnx_opset();
  if (opset < 0 || opset >= 7) return;
  findings.Add(
      fmt::format("the model imports ai.onnx opset {}; ONNX Runtime implements opset 7 and newer only "
                  "(older kernels such as BatchNormalization-6 or PRelu-6 are missing)",
                  opset));
}

void CheckOpsetTooNew(const ModelIndex& index, const LintOptions& options, Findings& findings) {
  const int opset = index.onnx_opset();
  if (options.max_supported_opset <= 0 || opset <= options.max_supported_opset) return;
  findings.Add(fmt::format("the model imports ai.onnx opset {}; the installed ONNX Runtime accepts up to opset {}",
                           opset, options.max_supported_opset));
  if (Diagnosis* d = findings.Last()) {
    d->fix = fmt::format(
        "Export with opset {} or lower (torch.onnx.export(..., opset_version={}), tf2onnx --opset {}), "
        "or upgrade ONNX Runtime.",
        options.max_supported_opset, options.max_supported_opset, options.max_supported_opset);
  }
}

// What a session needs to run operators of a non-standard domain. A prefix matches the domain
// itself and its dotted sub-domains (com.microsoft.nchwc).
struct DomainNeed {
  std::string_view prefix;
  std::string_view need;
};
constexpr std::array kDomainNeeds = std::to_array<DomainNeed>({
    {"com.microsoft",
     "ONNX Runtime contrib operators: only ONNX Runtime runs them, each exists from a given runtime "
     "version on and often only on some execution providers"},
    {"ai.onnx.contrib",
     "onnxruntime-extensions operators: register the extensions library with the session "
     "(RegisterCustomOpsLibrary with onnxruntime_extensions.get_library_path())"},
    {"ai.onnx.training", "training operators: only ONNX Runtime training builds run them, not inference sessions"},
    {"ai.onnx.preview.training",
     "training operators: only ONNX Runtime training builds run them, not inference sessions"},
    {"org.pytorch.aten",
     "PyTorch ATen fallback operators: they need an ONNX Runtime build with the ATen operator "
     "(onnxruntime-training)"},
});

std::string DomainNeedText(const std::string& domain) {
  for (const auto& entry : kDomainNeeds) {
    if (domain == entry.prefix ||
        (domain.size() > entry.prefix.size() && domain.compare(0, entry.prefix.size(), entry.prefix) == 0 &&
         domain[entry.prefix.size()] == '.')) {
      return std::string(entry.need);
    }
  }
  return fmt::format("custom operators: the session needs a custom-op library that registers domain '{}'", domain);
}

void CheckCustomDomain(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const auto& model = index.model();
  // Model-local functions are expanded by the runtime: calling them needs nothing installed.
  std::set<std::pair<std::string, std::string>> local_functions;
  for (const auto& f : model.functions()) local_functions.emplace(f.domain(), f.name());
  std::set<std::string> function_domains;
  for (const auto& f : model.functions()) function_domains.insert(f.domain());

  struct Use {
    std::map<std::string, int> ops;  // op_type -> node count
    int nodes = 0;
    Location first;
    std::string first_where;
  };
  std::map<std::string, Use> uses;
  auto record = [&](const onnx::NodeProto& n, int i, const std::string& where) {
    const std::string& domain = n.domain();
    if (IsOnnxDomain(domain) || domain == "ai.onnx.ml") return;
    if (local_functions.count({domain, n.op_type()})) return;
    Use& use = uses[domain];
    if (use.nodes++ == 0) {
      use.first = NodeLocation(n, i);
      use.first_where = where;
    }
    ++use.ops[n.op_type()];
  };
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) record(g.node(i), i, index.Where(s));
  }
  for (const auto& f : model.functions()) {
    for (int i = 0; i < f.node_size(); ++i) record(f.node(i), i, fmt::format(" in function '{}'", f.name()));
  }
  std::map<std::string, long long> imported;
  for (const auto& opset : model.opset_import()) {
    const std::string& domain = opset.domain();
    if (IsOnnxDomain(domain) || domain == "ai.onnx.ml") continue;
    imported.emplace(domain, opset.version());
    if (!uses.count(domain) && !function_domains.count(domain)) uses[domain];  // imported, used by no node
  }
  for (const auto& [domain, use] : uses) {
    auto imp = imported.find(domain);
    const std::string import_text =
        imp == imported.end() ? "not declared in opset_import" : fmt::format("opset {}", imp->second);
    if (use.nodes == 0) {
      findings.Add(
          fmt::format("the model imports domain '{}' ({}) but no node uses it: ONNX Runtime ignores the "
                      "import, other runtimes may refuse the unknown domain; drop it from opset_import",
                      domain, import_text));
      continue;
    }
    constexpr std::size_t kOpsListed = 8;
    std::string ops;
    std::size_t listed = 0;
    for (const auto& [op, count] : use.ops) {
      if (listed++ == kOpsListed) {
        ops += fmt::format(" and {} more operator types", use.ops.size() - kOpsListed);
        break;
      }
      ops += fmt::format("{}{} ({})", ops.empty() ? "" : ", ", op, count);
    }
    findings.Add(fmt::format("{} node{} domain '{}' ({}): {}; first: '{}'{}. These are {}", use.nodes,
                             use.nodes == 1 ? " uses" : "s use", domain, import_text, ops, use.first.node,
                             use.first_where, DomainNeedText(domain)),
                 use.first);
  }
}

void CheckStaticBatch(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const auto inputs = index.RuntimeInputs();
  const auto& outputs = index.main().graph->output();

  // Evidence that the exporter knew about dynamic axes: a symbolic or unknown dimension anywhere.
  std::string symbolic_elsewhere;
  auto look_for_symbolic = [&](const onnx::ValueInfoProto& value, const char* kind) {
    const auto* shape = ShapeOf(value.type());
    if (shape == nullptr || !symbolic_elsewhere.empty()) return;
    for (int d = 0; d < shape->dim_size(); ++d) {
      if (IsFixed(shape->dim(d))) continue;
      symbolic_elsewhere = fmt::format("{} '{}' dimension {} is '{}'", kind, value.name(), d, DimText(shape->dim(d)));
      return;
    }
  };
  for (const auto* in : inputs) look_for_symbolic(*in, "input");
  for (const auto& out : outputs) look_for_symbolic(out, "output");

  const onnx::ValueInfoProto* dynamic_batch_input = nullptr;             // an input whose first dimension is dynamic
  std::vector<std::pair<const onnx::ValueInfoProto*, long long>> fixed;  // rank >= 2 inputs with a fixed first dim
  int ranked_inputs = 0;
  for (const auto* in : inputs) {
    const auto* shape = ShapeOf(in->type());
    if (shape == nullptr || shape->dim_size() == 0) continue;
    if (!IsFixed(shape->dim(0))) {
      if (dynamic_batch_input == nullptr) dynamic_batch_input = in;
      continue;
    }
    // A rank-1 input is a vector of parameters (a scale, lengths) as often as a batch of scalars.
    if (shape->dim_size() < 2) continue;
    ++ranked_inputs;
    if (shape->dim(0).dim_value() > 0) fixed.emplace_back(in, shape->dim(0).dim_value());
  }
  std::set<long long> output_first_dims;
  for (const auto& out : outputs) {
    const auto* shape = ShapeOf(out.type());
    if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0)))
      output_first_dims.insert(shape->dim(0).dim_value());
  }

  // Every rank >= 2 input starts with the same fixed number.
  const bool all_same =
      !fixed.empty() && static_cast<int>(fixed.size()) == ranked_inputs &&
      std::all_of(fixed.begin(), fixed.end(), [&](const auto& f) { return f.second == fixed.front().second; });
  for (const auto& [in, value] : fixed) {
    // The first dimension looks like a batch when it is 1, or when inputs and outputs agree on it.
    const bool batch_like = value == 1 || (all_same && fixed.size() >= 2) || output_first_dims.count(value) > 0;
    Location where;
    where.input = in->name();
    where.dimension = "0";
    const std::string shape = ShapeText(*ShapeOf(in->type()));
    if (dynamic_batch_input != nullptr) {
      // Another input has a dynamic batch: a leading 1 here may be a forgotten axis or a broadcast one.
      if (value != 1) continue;
      const auto* other = ShapeOf(dynamic_batch_input->type());
      // A first axis named as a sequence (a recurrent model over chunks, its state [layers, 1, hidden]) is no batch.
      static const std::regex sequence_name(R"((seq|len|time|step|frame|chunk))", std::regex::icase);
      if (other->dim(0).has_dim_param() && std::regex_search(other->dim(0).dim_param(), sequence_name)) continue;
      findings.Add(
          fmt::format("input '{}' has a fixed first dimension 1 (shape {}) while input '{}' has a dynamic first "
                      "dimension '{}' (shape {}): batches of other sizes will be refused unless this input "
                      "is meant to broadcast",
                      in->name(), shape, dynamic_batch_input->name(), DimText(other->dim(0)), ShapeText(*other)),
          where, /*heuristic=*/true);
    } else if (!symbolic_elsewhere.empty()) {
      if (!batch_like) continue;
      findings.Add(fmt::format("input '{}' has a fixed first dimension {} (shape {}) although the export made other "
                               "dimensions dynamic ({}): only batch size {} will be accepted",
                               in->name(), value, shape, symbolic_elsewhere, value),
                   where);
    } else if (batch_like && all_same) {
      findings.Add(fmt::format("input '{}' has a fixed first dimension {} (shape {}) and every input and output "
                               "dimension of the model is fixed: only batch size {} will be accepted",
                               in->name(), value, shape, value),
                   where, /*heuristic=*/true);
    }
  }
}

void CheckTrainingDropout(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const int opset = index.onnx_opset();
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      if (!IsOnnxOp(n, "Dropout")) continue;
      const Location where = NodeLocation(n, i);
      // Dropout-1 and -6 carry is_test (default 0: training); 7 to 11 always infer; 12 on take a
      // training_mode input (default false).
      if (opset >= 1 && opset < 7) {
        const auto is_test = IntAttribute(n, "is_test");
        if (!is_test || *is_test == 0) {
          findings.Add(fmt::format("Dropout '{}'{} has is_test={} at opset {}, so it drops activations at inference",
                                   where.node, index.Where(s), is_test ? "0" : "unset (default 0)", opset),
                       where);
        }
      }
      const std::string training_mode = Input(n, 2);
      if (!training_mode.empty() && (opset < 0 || opset >= 12)) {
        const auto value = index.ConstantInts(s, training_mode, 1);
        if (value && !value->empty() && value->front() != 0) {
          Location at = where;
          at.tensor = training_mode;
          findings.Add(
              fmt::format("Dropout '{}'{} takes training_mode from '{}', a constant true: it drops activations "
                          "at inference",
                          where.node, index.Where(s), training_mode),
              at);
        }
      }
      const std::string mask = Output(n, 1);
      if (!mask.empty() && (index.IsReadExplicitly(mask) || index.IsGraphOutput(mask))) {
        Location at = where;
        at.tensor = mask;
        const auto* readers = index.Consumers(mask);
        std::string reader = "a graph output";
        if (readers != nullptr && !readers->empty()) {
          const NodeRef r = readers->front();
          reader = fmt::format("node '{}' ({})", NodeDisplayName(index.node(r), r.node), index.node(r).op_type());
        }
        findings.Add(fmt::format("Dropout '{}'{} has its mask output '{}' consumed by {}: the mask matters only when "
                                 "training",
                                 where.node, index.Where(s), mask, reader),
                     at);
      }
    }
  }
}

void CheckTrainingBatchNorm(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const int opset = index.onnx_opset();
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      if (!IsOnnxOp(n, "BatchNormalization")) continue;
      std::vector<std::string> reasons;
      if (IntAttribute(n, "training_mode").value_or(0) != 0) reasons.push_back("training_mode=1");
      if (opset >= 1 && opset < 7) {  // BatchNormalization-1 and -6: is_test defaults to 0, training
        const auto is_test = IntAttribute(n, "is_test");
        if (!is_test || *is_test == 0)
          reasons.push_back(fmt::format("is_test={} at opset {}", is_test ? "0" : "unset (default 0)", opset));
      }
      std::vector<std::string> extra;
      for (int o = 1; o < n.output_size(); ++o) {
        if (!n.output(o).empty()) extra.push_back(n.output(o));
      }
      if (!extra.empty()) {
        reasons.push_back(fmt::format("{} running-statistics output{} ({})", extra.size(), extra.size() == 1 ? "" : "s",
                                      NameList(extra)));
      }
      if (reasons.empty()) continue;
      const Location where = NodeLocation(n, i);
      std::string joined;
      for (const auto& r : reasons) joined += (joined.empty() ? "" : ", ") + r;
      findings.Add(fmt::format("BatchNormalization '{}'{} is in training mode: {}", where.node, index.Where(s), joined),
                   where);
    }
  }
}

void CheckFloat64Mixed(const ModelIndex& index, const LintOptions&, Findings& findings) {
  struct Offender {
    std::string message;
    Location location;
  };
  std::vector<Offender> offenders;
  int float32_like = 0;  // float32, float16, bfloat16 tensors: the precision the model computes in
  std::unordered_set<Name> seen;
  auto count = [&](int elem_type) {
    float32_like += elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::FLOAT16 ||
                    elem_type == onnx::TensorProto::BFLOAT16;
  };
  auto value = [&](const onnx::ValueInfoProto& v, const char* kind, std::string Location::*field, int s) {
    const int type = ElementTypeOf(v.type());
    if (!seen.insert(v.name()).second) return;
    count(type);
    if (type != onnx::TensorProto::DOUBLE) return;
    Location where;
    where.*field = v.name();
    offenders.push_back({fmt::format("{} '{}'{} is float64", kind, v.name(), index.Where(s)), where});
  };
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (const auto& init : g.initializer()) {
      if (!seen.insert(init.name()).second) continue;
      count(init.data_type());
      if (init.data_type() != onnx::TensorProto::DOUBLE) continue;
      Location where;
      where.tensor = init.name();
      offenders.push_back(
          {fmt::format("initializer '{}'{} is float64 ({} elements)", init.name(), index.Where(s), ElementCount(init)),
           where});
    }
    for (const auto& in : g.input()) value(in, "graph input", &Location::input, s);
    for (const auto& out : g.output()) value(out, "graph output", &Location::output, s);
    for (const auto& vi : g.value_info()) value(vi, "value", &Location::tensor, s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      // Tensor-valued attributes (Constant, ConstantOfShape) and type attributes (Cast's `to`,
      // the Random* family's `dtype`) are where doubles enter a graph.
      for (const auto& attr : n.attribute()) {
        if (attr.has_t()) {
          count(attr.t().data_type());
          if (attr.t().data_type() != onnx::TensorProto::DOUBLE) continue;
          const Location where = NodeLocation(n, i);
          offenders.push_back({fmt::format("node '{}' ({}){} has a float64 tensor in attribute '{}' (output '{}')",
                                           where.node, n.op_type(), index.Where(s), attr.name(), Output(n, 0)),
                               where});
        } else if ((attr.name() == "to" || attr.name() == "dtype") && attr.has_i()) {
          count(static_cast<int>(attr.i()));
          if (attr.i() != onnx::TensorProto::DOUBLE) continue;
          const Location where = NodeLocation(n, i);
          offenders.push_back({fmt::format("node '{}' ({}){} produces float64 ({}=DOUBLE) in '{}'", where.node,
                                           n.op_type(), index.Where(s), attr.name(), Output(n, 0)),
                               where});
        }
      }
    }
  }
  if (offenders.empty() || static_cast<int>(offenders.size()) >= float32_like) return;
  const std::string context = fmt::format(
      " in a model that otherwise computes in float32 ({} float32/float16 "
      "tensors and casts against {} float64 ones)",
      float32_like, offenders.size());
  for (auto& o : offenders) findings.Add(o.message + context, std::move(o.location));
}

void CheckDynamicResize(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::vector<Name> roots;
  for (const auto* in : index.RuntimeInputs()) roots.push_back(in->name());
  const auto derived = index.DerivedValues(roots);
  const int opset = index.onnx_opset();
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      // Resize-10 and Upsample-9: (X, scales); Resize-11 on: (X, roi, scales, sizes). roi does not
      // change the output size, so it is not checked.
      std::vector<std::pair<int, const char*>> checked;
      if (IsOnnxOp(n, "Upsample") || (IsOnnxOp(n, "Resize") && opset >= 0 && opset < 11)) {
        checked = {{1, "scales"}};
      } else if (IsOnnxOp(n, "Resize")) {
        checked = {{2, "scales"}, {3, "sizes"}};
      }
      for (const auto& [position, role] : checked) {
        const std::string name = Input(n, position);
        auto it = name.empty() ? derived.end() : derived.find(name);
        if (it == derived.end()) continue;
        Location where = NodeLocation(n, i);
        where.tensor = name;
        where.input = it->second;
        findings.Add(
            fmt::format("{} '{}'{} takes its {} from '{}', computed at run time from the values of graph input "
                        "'{}'",
                        n.op_type(), where.node, index.Where(s), role, name, it->second),
            where);
      }
    }
  }
}

void CheckBakedBatchReshape(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::vector<Name> roots;
  std::unordered_map<Name, std::string> batch_names;  // input -> its first dimension's text
  for (const auto* in : index.RuntimeInputs()) {
    const auto* shape = ShapeOf(in->type());
    if (shape == nullptr || shape->dim_size() < 2 || IsFixed(shape->dim(0))) continue;
    roots.push_back(in->name());
    batch_names[in->name()] = DimText(shape->dim(0));
  }
  if (roots.empty()) return;
  // A fixed first dimension on an output is the traced batch size leaking through, when present.
  std::set<long long> traced;
  for (const auto& out : index.main().graph->output()) {
    const auto* shape = ShapeOf(out.type());
    if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0)) && shape->dim(0).dim_value() > 0) {
      traced.insert(shape->dim(0).dim_value());
    }
  }
  const auto derived = index.DerivedValues(roots);
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      const bool reshape = IsOnnxOp(n, "Reshape");
      if (!reshape && !IsOnnxOp(n, "Expand")) continue;
      auto data = derived.find(Input(n, 0));
      const std::string shape_name = Input(n, 1);
      if (data == derived.end() || shape_name.empty()) continue;
      const auto shape = index.ConstantInts(s, shape_name);
      if (!shape || shape->size() < 2) continue;
      const long long first = shape->front();
      // 0 copies the input's dimension and -1 infers it: both follow the batch. For Expand a 1 keeps it.
      if (first <= 1 && !(reshape && first == 1 && traced.count(1))) continue;
      if (!traced.empty() && !traced.count(first)) continue;
      Location where = NodeLocation(n, i);
      where.tensor = shape_name;
      where.input = data->second;
      const char* evidence = traced.empty() ? "" : ", the size that the outputs' fixed first dimension also shows";
      findings.Add(
          fmt::format("{} '{}'{} gives '{}' (computed from input '{}', first dimension '{}') the constant shape {} "
                      "from '{}'; its first element {} looks like the batch size of the traced example{}",
                      n.op_type(), where.node, index.Where(s), Input(n, 0), data->second, batch_names[data->second],
                      IntsText(*shape), shape_name, first, evidence),
          where, /*heuristic=*/true);
    }
  }
}

void CheckUnusedInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (const auto* in : index.RuntimeInputs()) {
    if (in->name().empty() || index.IsReadExplicitly(in->name()) || index.IsGraphOutput(in->name())) continue;
    Location where;
    where.input = in->name();
    findings.Add(fmt::format("graph input '{}' is read by no node in any graph and is not an output", in->name()),
                 where);
  }
}

// PyTorch's torch.export-based exporter names an output after the operation that computes it (`linear`,
// `layer_norm_4`, `tanh`) unless output_names is given: the name changes whenever the model does.
bool IsAtenStyleName(std::string_view name) {
  static constexpr std::array kOps = std::to_array<std::string_view>({"linear",
                                                                      "matmul",
                                                                      "mm",
                                                                      "bmm",
                                                                      "addmm",
                                                                      "baddbmm",
                                                                      "add",
                                                                      "sub",
                                                                      "mul",
                                                                      "div",
                                                                      "tanh",
                                                                      "relu",
                                                                      "gelu",
                                                                      "silu",
                                                                      "sigmoid",
                                                                      "softmax",
                                                                      "log_softmax",
                                                                      "layer_norm",
                                                                      "batch_norm",
                                                                      "group_norm",
                                                                      "conv1d",
                                                                      "conv2d",
                                                                      "conv3d",
                                                                      "convolution",
                                                                      "mean",
                                                                      "sum",
                                                                      "view",
                                                                      "reshape",
                                                                      "cat",
                                                                      "concat",
                                                                      "transpose",
                                                                      "permute",
                                                                      "squeeze",
                                                                      "unsqueeze",
                                                                      "getitem",
                                                                      "embedding",
                                                                      "clone",
                                                                      "max",
                                                                      "argmax",
                                                                      "slice",
                                                                      "select",
                                                                      "flatten",
                                                                      "expand",
                                                                      "erf",
                                                                      "pow",
                                                                      "sqrt",
                                                                      "rsqrt",
                                                                      "neg",
                                                                      "exp",
                                                                      "where",
                                                                      "masked_fill",
                                                                      "scaled_dot_product_attention",
                                                                      "adaptive_avg_pool2d",
                                                                      "avg_pool2d",
                                                                      "max_pool2d",
                                                                      "hardtanh",
                                                                      "cumsum",
                                                                      "split",
                                                                      "chunk",
                                                                      "contiguous"});
  std::string_view stem = name;  // "layer_norm_4" -> "layer_norm"
  const auto last = stem.find_last_not_of("0123456789");
  if (last != std::string_view::npos && last + 1 < stem.size() && stem[last] == '_') stem = stem.substr(0, last);
  return std::find(kOps.begin(), kOps.end(), stem) != kOps.end();
}

void CheckOutputInternalName(const ModelIndex& index, const LintOptions&, Findings& findings) {
  if (index.model().producer_name() != "pytorch") return;
  std::vector<std::string> names;
  for (const auto& out : index.main().graph->output()) {
    if (IsAtenStyleName(out.name())) names.push_back(out.name());
  }
  if (names.empty()) return;
  Location where;
  where.output = names.front();
  findings.Add(fmt::format("output{} {} named after the operation that computes {} ({}), not chosen at export",
                           names.size() == 1 ? "" : "s", NameList(names), names.size() == 1 ? "it" : "them",
                           index.model().producer_name()),
               where, /*heuristic=*/true);
}

// tf2onnx's from_function turns a tensor the function closes over (a tf.constant made outside it) into a
// graph input named after the op that reads it, "MatMul/b:0": nobody feeds it, and ONNX Runtime then says
// "Required inputs (['MatMul/b:0']) are missing from input feed".
void CheckCapturedConstantInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  if (index.model().producer_name() != "tf2onnx") return;
  static const std::regex kOpOutput(R"re(^[\w.-]+(/[\w.-]+)+:\d+$)re");
  for (const auto* in : index.RuntimeInputs()) {
    if (!std::regex_match(in->name(), kOpOutput)) continue;
    Location where;
    where.input = in->name();
    findings.Add(fmt::format("input '{}' is named after a TensorFlow op's operand, not an argument of the "
                             "signature: a tensor the function closes over became an input nobody feeds",
                             in->name()),
                 where, /*heuristic=*/true);
  }
}

// TorchScript export of a Transformers causal LM (4.45 and newer) records `logits_to_keep` as a required input.
void CheckLogitsToKeepInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (const auto* in : index.RuntimeInputs()) {
    if (in->name() != "logits_to_keep" && in->name() != "num_logits_to_keep") continue;
    Location where;
    where.input = in->name();
    findings.Add(fmt::format("the model takes '{}': the exported graph computes logits for the last positions only, "
                             "as many as that input says, instead of every position",
                             in->name()),
                 where);
  }
}

void CheckInitializerAsInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::vector<std::string> names;
  for (const auto& in : index.main().graph->input()) {
    if (index.main().initializers.count(in.name())) names.push_back(in.name());
  }
  if (names.empty()) return;
  Location where;
  where.input = names.front();
  where.tensor = names.front();
  const long long ir = index.model().ir_version();
  const std::string ir_note =
      ir > 0 && ir < 4
          ? fmt::format(" (IR version {} requires it; re-save with IR version 4 or newer to drop them)", ir)
          : "";
  findings.Add(fmt::format("{} initializer{} also listed as graph input{}: {}{}", names.size(),
                           names.size() == 1 ? " is" : "s are", names.size() == 1 ? "" : "s", NameList(names), ir_note),
               where);
}

void CheckUndefinedValue(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      for (const auto& in : n.input()) {
        if (in.empty() || index.DefiningScope(s, in) >= 0) continue;
        Location where = NodeLocation(n, i);
        where.tensor = in;
        findings.Add(
            fmt::format("node '{}' ({}){} reads '{}', which no node, initializer or graph input{} produces", where.node,
                        n.op_type(), index.Where(s), in, s > 0 ? " of this or an enclosing graph" : ""),
            where);
      }
    }
    for (const auto& out : g.output()) {
      if (out.name().empty() || index.DefiningScope(s, out.name()) >= 0) continue;
      Location where;
      where.output = out.name();
      findings.Add(fmt::format("graph output '{}'{} is produced by no node, initializer or graph input", out.name(),
                               index.Where(s)),
                   where);
    }
  }
}

void CheckDuplicateName(const ModelIndex& index, const LintOptions&, Findings& findings) {
  // Who wrote a value first: a node index, or one of these.
  constexpr int kGraphInput = -1, kInitializer = -2;
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    std::unordered_map<Name, int> writers;
    auto describe = [&](Name name, int writer) {
      if (writer == kGraphInput) return fmt::format("graph input '{}'", name);
      if (writer == kInitializer) return fmt::format("initializer '{}'", name);
      return fmt::format("node '{}' ({})", NodeDisplayName(g.node(writer), writer), g.node(writer).op_type());
    };
    auto report = [&](Name name, const std::string& first, const std::string& second, Location where) {
      where.tensor = std::string(name);
      findings.Add(fmt::format("value '{}'{} is written by {} and again by {}", name, index.Where(s), first, second),
                   std::move(where));
    };
    for (const auto& in : g.input()) {
      if (in.name().empty() || writers.emplace(in.name(), kGraphInput).second) continue;
      Location where;
      where.input = in.name();
      report(in.name(), describe(in.name(), kGraphInput), "a second graph input of that name", where);
    }
    std::unordered_set<Name> initializers;
    for (const auto& init : g.initializer()) {
      if (init.name().empty()) continue;
      // An initializer listed as an input is the IR 3 convention, not a duplicate.
      if (!initializers.insert(init.name()).second) {
        report(init.name(), describe(init.name(), kInitializer), "a second initializer of that name", {});
      } else {
        writers.emplace(init.name(), kInitializer);
      }
    }
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      for (const auto& out : n.output()) {
        if (out.empty()) continue;
        auto [it, first] = writers.emplace(out, i);
        if (!first) {
          report(out, describe(out, it->second), describe(out, i), NodeLocation(n, i));
        } else if (s > 0 && index.DefiningScope(index.scopes()[s].parent, out) >= 0) {
          report(out, "the enclosing graph", describe(out, i) + " (shadowing the outer value)", NodeLocation(n, i));
        }
      }
    }
  }
}

// Kahn's algorithm over node dependencies; what it cannot order lies on or behind a cycle. One
// cycle is then named by walking predecessors inside the leftover until a node repeats.
void CheckCycle(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& scope = index.scopes()[s];
    const int n = scope.graph->node_size();
    std::vector<std::vector<int>> successors(n), predecessors(n);
    std::vector<int> pending(n, 0);
    for (int j = 0; j < n; ++j) {
      index.ForEachInput(s, j, [&](Name name) {
        auto it = scope.producer.find(name);
        if (it == scope.producer.end()) return;
        successors[it->second].push_back(j);
        predecessors[j].push_back(it->second);
        ++pending[j];
      });
    }
    std::vector<int> ready;
    for (int j = 0; j < n; ++j) {
      if (pending[j] == 0) ready.push_back(j);
    }
    int ordered = 0;
    while (!ready.empty()) {
      const int j = ready.back();
      ready.pop_back();
      ++ordered;
      for (int k : successors[j]) {
        if (--pending[k] == 0) ready.push_back(k);
      }
    }
    if (ordered == n) continue;
    int start = 0;
    while (pending[start] == 0) ++start;
    std::unordered_map<int, int> position;  // node -> step at which the walk met it
    std::vector<int> walk;
    int current = start;
    while (!position.count(current)) {
      position[current] = static_cast<int>(walk.size());
      walk.push_back(current);
      int next = -1;
      for (int p : predecessors[current]) {
        if (pending[p] > 0) {
          next = p;
          break;
        }
      }
      if (next < 0) break;  // cannot happen: every leftover node has a leftover predecessor
      current = next;
    }
    std::vector<int> cycle(walk.begin() + position[current], walk.end());
    std::reverse(cycle.begin(), cycle.end());  // predecessors were walked: turn into data-flow order
    constexpr std::size_t kShown = 8;
    std::string text;
    for (std::size_t k = 0; k < cycle.size() && k < kShown; ++k) {
      const auto& node = scope.graph->node(cycle[k]);
      text += fmt::format("{}'{}' ({})", k ? " -> " : "", NodeDisplayName(node, cycle[k]), node.op_type());
    }
    if (cycle.size() > kShown) text += fmt::format(" -> ... ({} nodes)", cycle.size());
    const auto& first = scope.graph->node(cycle.front());
    text += fmt::format(" -> '{}'", NodeDisplayName(first, cycle.front()));
    findings.Add(
        fmt::format("{} of {} nodes{} cannot be ordered because of a cycle: {}", n - ordered, n, index.Where(s), text),
        NodeLocation(first, cycle.front()));
  }
}

// Calls fn(value, kind, field, scope, axis, size, shape) for every fixed dimension declared on a graph's
// inputs, outputs and value_info, sequence/optional/map element types included.
template <typename Fn>
void ForEachDeclaredDim(const ModelIndex& index, Fn fn) {
  auto visit = [&](const onnx::ValueInfoProto& value, const char* kind, std::string Location::*field, int s) {
    // Sequence/optional/map types nest: follow them iteratively, a few levels at most.
    const onnx::TypeProto* type = &value.type();
    for (int level = 0; type != nullptr && level < 16; ++level) {
      if (const auto* shape = ShapeOf(*type)) {
        for (int d = 0; d < shape->dim_size(); ++d) {
          if (shape->dim(d).has_dim_value()) fn(value, kind, field, s, d, shape->dim(d).dim_value(), *shape);
        }
        break;
      }
      if (type->has_sequence_type())
        type = &type->sequence_type().elem_type();
      else if (type->has_optional_type())
        type = &type->optional_type().elem_type();
      else if (type->has_map_type())
        type = &type->map_type().value_type();
      else
        type = nullptr;
    }
  };
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (const auto& in : g.input()) visit(in, "input", &Location::input, s);
    for (const auto& out : g.output()) visit(out, "output", &Location::output, s);
    for (const auto& vi : g.value_info()) visit(vi, "value", &Location::tensor, s);
  }
}

// A negative dimension other than -1, or one too large to be real.
void CheckBadDimension(const ModelIndex& index, const LintOptions&, Findings& findings) {
  ForEachDeclaredDim(index, [&](const onnx::ValueInfoProto& value, const char* kind, std::string Location::*field,
                                int s, int d, long long v, const onnx::TensorShapeProto& shape) {
    if ((v >= 0 && v <= kMaxPlausibleDim) || v == -1) return;
    Location where;
    where.*field = value.name();
    where.dimension = std::to_string(d);
    findings.Add(fmt::format("{} '{}'{} declares dimension {} as {} (shape {})", kind, value.name(), index.Where(s), d,
                             v, ShapeText(shape)),
                 where);
  });
}

// -1: what old converters (paddle2onnx, early tf2onnx) write for "unknown". ONNX Runtime runs it as a
// dynamic dimension; the format says dim_param. One finding per tensor.
void CheckMinusOneDimension(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::set<std::string> seen;
  ForEachDeclaredDim(index, [&](const onnx::ValueInfoProto& value, const char* kind, std::string Location::*field,
                                int s, int d, long long v, const onnx::TensorShapeProto& shape) {
    if (v != -1 || !seen.insert(std::string(kind) + value.name()).second) return;
    Location where;
    where.*field = value.name();
    where.dimension = std::to_string(d);
    findings.Add(fmt::format("{} '{}'{} declares dimension {} as -1 (shape {}): ONNX Runtime runs it as a dynamic "
                             "dimension, but -1 is not a size in the ONNX format",
                             kind, value.name(), index.Where(s), d, ShapeText(shape)),
                 where);
  });
}

void CheckNoOutputs(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& scope = index.scopes()[s];
    if (scope.graph->output_size() > 0) continue;
    if (s == 0) {
      findings.Add(fmt::format("the main graph '{}' ({} nodes) declares no outputs", scope.graph->name(),
                               scope.graph->node_size()));
      continue;
    }
    const auto& owner = index.graph(scope.parent).node(scope.owner_node);
    findings.Add(fmt::format("subgraph '{}' of node '{}' ({}) declares no outputs", scope.path,
                             NodeDisplayName(owner, scope.owner_node), owner.op_type()),
                 NodeLocation(owner, scope.owner_node));
  }
}

// Operators whose inputs broadcast numpy-style: aligned from the right, their dimensions must be
// equal or 1.
constexpr std::array<std::string_view, 24> kElementwiseOps = {
    "Add",  "Sub",         "Mul", "Div",  "Pow",   "Mod",      "Equal",      "Greater",   "GreaterOrEqual",
    "Less", "LessOrEqual", "And", "Or",   "Xor",   "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    "Max",  "Min",         "Sum", "Mean", "Where", "PRelu"};

// shape.dim-name-inconsistent, kept to what the declared types prove: an element-wise node of the
// main graph that combines two graph inputs directly. Aligned dimensions must then be equal (or
// 1), so two different names for them, or a name facing a fixed size above 1, misstate the model:
// the names promise independent sizes that the graph cannot accept. Anything needing shape
// inference (values further down the graph) is left to the shape-inference layer.
void CheckDimNameInconsistent(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const auto& main = index.main();
  std::unordered_map<std::string, const onnx::TensorShapeProto*> input_shapes;
  for (const auto* in : index.RuntimeInputs()) {
    if (const auto* shape = ShapeOf(in->type())) input_shapes[in->name()] = shape;
  }
  std::set<std::pair<std::string, std::string>> reported;
  const auto& g = *main.graph;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (!IsOnnxDomain(n.domain()) ||
        std::find(kElementwiseOps.begin(), kElementwiseOps.end(), n.op_type()) == kElementwiseOps.end()) {
      continue;
    }
    std::vector<std::string> operands;
    for (const auto& in : n.input()) {
      if (input_shapes.count(in) && std::find(operands.begin(), operands.end(), in) == operands.end())
        operands.push_back(in);
    }
    for (std::size_t a = 0; a < operands.size(); ++a) {
      for (std::size_t b = a + 1; b < operands.size(); ++b) {
        const auto& sa = *input_shapes[operands[a]];
        const auto& sb = *input_shapes[operands[b]];
        for (int k = 1; k <= std::min(sa.dim_size(), sb.dim_size()); ++k) {
          const int ia = sa.dim_size() - k, ib = sb.dim_size() - k;
          const auto& da = sa.dim(ia);
          const auto& db = sb.dim(ib);
          const bool named_a = !da.has_dim_value() && !da.dim_param().empty();
          const bool named_b = !db.has_dim_value() && !db.dim_param().empty();
          std::string problem;
          std::pair<std::string, std::string> key;
          if (named_a && named_b && da.dim_param() != db.dim_param()) {
            key = std::minmax(da.dim_param(), db.dim_param());
            problem = "so both names stand for one size";
          } else if (named_a != named_b && (named_a ? db : da).has_dim_value() && (named_a ? db : da).dim_value() > 1) {
            const auto& named = named_a ? da : db;
            const long long fixed = (named_a ? db : da).dim_value();
            key = {named.dim_param(), std::to_string(fixed)};
            problem = fmt::format("so '{}' can only be {} (or 1), not a free size", named.dim_param(), fixed);
          } else {
            continue;
          }
          if (!reported.insert(key).second) continue;
          Location where = NodeLocation(n, i);
          where.input = operands[a];
          where.dimension = named_a ? da.dim_param() : db.dim_param();
          findings.Add(fmt::format("node '{}' ({}) combines input '{}' (dimension {} '{}', shape {}) element-wise with "
                                   "input '{}' (dimension {} '{}', shape {}), {}",
                                   where.node, n.op_type(), operands[a], ia, DimText(da), ShapeText(sa), operands[b],
                                   ib, DimText(db), ShapeText(sb), problem),
                       where);
        }
      }
    }
  }
}

using RuleFunction = void (*)(const ModelIndex&, const LintOptions&, Findings&);

struct Rule {
  std::string_view code;
  RuleFunction check;
};

// Structural rules first: when they fire, the exporter-habit rules below may be confused too.
constexpr std::array kRules = std::to_array<Rule>({
    {"graph.no-outputs", CheckNoOutputs},
    {"graph.undefined-value", CheckUndefinedValue},
    {"graph.duplicate-name", CheckDuplicateName},
    {"graph.cycle", CheckCycle},
    {"graph.bad-dimension", CheckBadDimension},
    {"graph.minus-one-dimension", CheckMinusOneDimension},
    {"graph.opset-too-old", CheckOpsetTooOld},
    {"graph.opset-too-new", CheckOpsetTooNew},
    {"graph.custom-domain", CheckCustomDomain},
    {"graph.training-dropout", CheckTrainingDropout},
    {"graph.training-batchnorm", CheckTrainingBatchNorm},
    {"graph.static-batch", CheckStaticBatch},
    {"graph.baked-batch-reshape", CheckBakedBatchReshape},
    {"graph.dynamic-resize", CheckDynamicResize},
    {"graph.float64-mixed", CheckFloat64Mixed},
    {"graph.unused-input", CheckUnusedInput},
    {"graph.initializer-as-input", CheckInitializerAsInput},
    {"graph.output-internal-name", CheckOutputInternalName},
    {"graph.logits-to-keep-input", CheckLogitsToKeepInput},
    {"graph.captured-constant-input", CheckCapturedConstantInput},
    {"shape.dim-name-inconsistent", CheckDimNameInconsistent},
});

}  // namespace

std::vector<std::string_view> LintRuleCodes() {
  std::vector<std::string_view> codes;
  for (const auto& rule : kRules) codes.push_back(rule.code);
  return codes;
}

std::vector<Diagnosis> LintModel(const onnx::ModelProto& model, const LintOptions& options) {
  std::vector<Diagnosis> diagnoses;
  try {
    const ModelIndex index(model);
    for (const auto& rule : kRules) {
      if (std::find(options.disabled_rules.begin(), options.disabled_rules.end(), rule.code) !=
          options.disabled_rules.end()) {
        continue;
      }
      Findings findings(rule.code, options.max_diagnoses_per_rule);
      std::optional<std::string> failure;
      try {
        rule.check(index, options, findings);
      } catch (const std::exception& e) {  // out of memory on a giant model, or a bug: keep the other rules
        failure = e.what();
      }
      auto found = findings.Take();
      diagnoses.insert(diagnoses.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
      if (failure) {
        diagnoses.push_back(
            Diagnose("internal.rule-failed", fmt::format("rule {} stopped early: {}", rule.code, *failure)));
      }
    }
  } catch (const std::exception& e) {
    diagnoses.push_back(
        Diagnose("internal.rule-failed", fmt::format("the lint rules could not index the model: {}", e.what())));
  }
  return diagnoses;
}

}  // namespace ortkit
