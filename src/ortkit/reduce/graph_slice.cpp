#include "ortkit/reduce/graph_slice.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

/// Every name the bodies of `node`'s subgraphs read: an over-approximation of what they capture,
/// narrowed to the main graph's values by the caller (ONNX forbids shadowing).
void CollectBodyReads(const onnx::NodeProto& node, std::set<std::string>& names) {
  auto collect = [&](const onnx::GraphProto& body) {
    ForEachGraph(body, [&](const onnx::GraphProto& g, const std::string&) {
      for (const auto& n : g.node()) names.insert(n.input().begin(), n.input().end());
    });
  };
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) collect(attr.g());
    for (const auto& g : attr.graphs()) collect(g);
  }
}

void SetType(onnx::ValueInfoProto& info, const ValueType& type) {
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type.elem_type);
  auto* shape = tensor->mutable_shape();
  for (std::int64_t d : type.dims) shape->add_dim()->set_dim_value(d);
}

/// The model's fields other than its graph.
onnx::ModelProto Shell(const onnx::ModelProto& model) {
  onnx::ModelProto out;
  out.set_ir_version(model.ir_version());
  *out.mutable_opset_import() = model.opset_import();
  out.set_producer_name(model.producer_name());
  out.set_producer_version(model.producer_version());
  out.set_domain(model.domain());
  out.set_model_version(model.model_version());
  *out.mutable_metadata_props() = model.metadata_props();
  *out.mutable_functions() = model.functions();
  out.mutable_graph()->set_name(model.graph().name());
  return out;
}

}  // namespace

std::optional<ValueType> ConcreteType(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || type.tensor_type().elem_type() == 0 || !type.tensor_type().has_shape()) {
    return std::nullopt;
  }
  ValueType out;
  out.elem_type = type.tensor_type().elem_type();
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    out.dims.push_back(d.dim_value());
  }
  return out;
}

GraphSlicer::GraphSlicer(const onnx::ModelProto& model) : model_(model) {
  const auto& graph = model.graph();
  for (int i = 0; i < graph.initializer_size(); ++i) initializers_.emplace(graph.initializer(i).name(), i);
  for (const auto& in : graph.input()) graph_inputs_.insert(in.name());
  for (const auto& out : graph.output()) graph_outputs_.insert(out.name());
  SortTopologically();
  IndexReads();
}

void GraphSlicer::SortTopologically() { order_ = TopologicalOrder(model_.graph()); }

void GraphSlicer::IndexReads() {
  for (std::size_t p = 0; p < order_.size(); ++p) {
    const auto& n = node(p);
    for (const auto& out : n.output()) {
      if (!out.empty()) producer_.emplace(out, p);
    }
    if (!n.name().empty()) by_name_.emplace(n.name(), p);
  }
  reads_.resize(order_.size());
  for (std::size_t p = 0; p < order_.size(); ++p) {
    const auto& n = node(p);
    std::set<std::string> seen;
    for (const auto& in : n.input()) {
      if (!in.empty() && seen.insert(in).second) reads_[p].push_back(in);
    }
    std::set<std::string> captured;
    CollectBodyReads(n, captured);
    for (const auto& name : captured) {
      const bool outer = producer_.count(name) || initializers_.count(name) || graph_inputs_.count(name);
      if (outer && seen.insert(name).second) reads_[p].push_back(name);
    }
  }
}

const onnx::NodeProto& GraphSlicer::node(std::size_t position) const {
  return model_.graph().node(order_.at(position));
}

std::optional<std::size_t> GraphSlicer::PositionOfNode(const std::string& name) const {
  if (auto it = by_name_.find(name); !name.empty() && it != by_name_.end()) return it->second;
  return std::nullopt;
}

std::optional<std::size_t> GraphSlicer::ProducerOf(const std::string& value) const {
  if (auto it = producer_.find(value); it != producer_.end()) return it->second;
  return std::nullopt;
}

NodeSubset GraphSlicer::Range(std::size_t first, std::size_t last) {
  NodeSubset subset;
  for (std::size_t p = first; p <= last; ++p) subset.push_back(p);
  return subset;
}

NodeSubset GraphSlicer::AncestorsOf(const std::vector<std::string>& values) const {
  std::vector<bool> wanted(order_.size(), false);
  std::vector<std::string> stack(values.begin(), values.end());
  while (!stack.empty()) {
    auto producer = ProducerOf(stack.back());
    stack.pop_back();
    if (!producer || wanted[*producer]) continue;
    wanted[*producer] = true;
    for (const auto& read : reads_[*producer]) stack.push_back(read);
  }
  NodeSubset subset;
  for (std::size_t p = 0; p < wanted.size(); ++p) {
    if (wanted[p]) subset.push_back(p);
  }
  return subset;
}

SliceBoundary GraphSlicer::BoundaryOf(const NodeSubset& subset) const {
  std::unordered_set<std::string> produced;
  std::unordered_set<std::string> read;
  for (std::size_t p : subset) {
    for (const auto& out : node(p).output()) {
      if (!out.empty()) produced.insert(out);
    }
  }
  SliceBoundary boundary;
  std::unordered_set<std::string> listed;
  for (std::size_t p : subset) {
    for (const auto& name : reads_[p]) {
      read.insert(name);
      if (produced.count(name) || !listed.insert(name).second) continue;
      // A graph input with a default value in the initializers is fed like any other input.
      if (initializers_.count(name) && !graph_inputs_.count(name)) {
        boundary.initializers.push_back(name);
      } else {
        boundary.inputs.push_back(name);
      }
    }
  }
  for (std::size_t p : subset) {
    for (const auto& out : node(p).output()) {
      if (!out.empty() && (!read.count(out) || graph_outputs_.count(out))) boundary.outputs.push_back(out);
    }
  }
  return boundary;
}

Result<onnx::ModelProto> GraphSlicer::Build(const NodeSubset& subset, const ValueTypeLookup& types,
                                            const std::vector<std::string>& extra_outputs) const {
  const SliceBoundary boundary = BoundaryOf(subset);
  onnx::ModelProto out = Shell(model_);
  auto* graph = out.mutable_graph();
  for (const auto& name : boundary.inputs) {
    auto type = types(name);
    if (!type) return MakeError(ErrorKind::kNotFound, fmt::format("the type of value '{}' is not known", name));
    auto* info = graph->add_input();
    info->set_name(name);
    SetType(*info, *type);
  }
  for (const auto& name : boundary.initializers)
    *graph->add_initializer() = model_.graph().initializer(initializers_.at(name));
  for (std::size_t p : subset) *graph->add_node() = node(p);
  std::unordered_set<std::string> outputs;
  for (const auto& name : boundary.outputs) {
    auto* info = graph->add_output();
    info->set_name(name);
    outputs.insert(name);
    if (auto type = types(name)) SetType(*info, *type);
  }
  for (const auto& name : extra_outputs) {
    if (outputs.insert(name).second) graph->add_output()->set_name(name);
  }
  return out;
}

}  // namespace ortkit
