#include "ortkit/check/lint_index.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>

#include "ortkit/model/graph_walk.h"

namespace ortkit::lint {

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

namespace {

const std::string& NoName() {
  static const std::string empty;
  return empty;
}

}  // namespace

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

std::string NameList(const std::vector<std::string>& names, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > limit) out += fmt::format(" and {} more", names.size() - limit);
  return out;
}

namespace {

// One integer of `size` bytes (1, 2, 4 or 8) from ONNX raw data, which is little-endian like
// every host ortkit runs on.
long long ReadLittleEndian(const char* bytes, int size, bool is_signed) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, bytes, static_cast<std::size_t>(size));
  if (size == 8 || !is_signed) return static_cast<long long>(bits);
  const int shift = 64 - 8 * size;  // sign-extend the narrow value
  return static_cast<long long>(bits << shift) >> shift;
}

}  // namespace

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

ModelIndex::ModelIndex(const onnx::ModelProto& model) : model_(model) {
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

std::vector<const onnx::ValueInfoProto*> ModelIndex::RuntimeInputs() const {
  std::vector<const onnx::ValueInfoProto*> out;
  for (const auto& in : main().graph->input()) {
    if (!main().initializers.count(in.name())) out.push_back(&in);
  }
  return out;
}

std::optional<std::vector<long long>> ModelIndex::ConstantInts(int scope, Name name, std::size_t limit) const {
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

std::unordered_map<Name, Name> ModelIndex::DerivedValues(const std::vector<Name>& roots) const {
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

void ModelIndex::BuildScopes() {
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

void ModelIndex::ComputeCaptured(int s) {
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

void ModelIndex::BuildConsumers() {
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

Location NodeLocation(const onnx::NodeProto& node, int index) {
  Location where;
  where.node = NodeDisplayName(node, index);
  where.op_type = node.op_type();
  return where;
}

}  // namespace ortkit::lint
