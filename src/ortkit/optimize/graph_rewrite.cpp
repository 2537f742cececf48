#include "ortkit/optimize/graph_rewrite.h"

#include <cstring>
#include <set>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"

namespace ortkit {

GraphRewrite::GraphRewrite(onnx::ModelProto& model) : model_(model), graph_(*model.mutable_graph()) {
  for (int i = 0; i < graph_.initializer_size(); ++i) initializer_[graph_.initializer(i).name()] = i;
  for (const auto& input : graph_.input()) graph_inputs_.insert(input.name());
  ForEachGraph(graph_, [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& v : g.input()) names_.insert(v.name());
    for (const auto& v : g.output()) names_.insert(v.name());
    for (const auto& v : g.value_info()) names_.insert(v.name());
    for (const auto& t : g.initializer()) names_.insert(t.name());
    for (const auto& n : g.node()) {
      names_.insert(n.name());
      for (const auto& o : n.output()) names_.insert(o);
    }
  });
  CountReaders();
}

void GraphRewrite::CountReaders() {
  readers_.clear();
  ForEachGraph(graph_, [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node()) {
      for (const auto& i : n.input()) {
        if (!i.empty()) ++readers_[i];
      }
    }
  });
  for (const auto& o : graph_.output()) ++readers_[o.name()];
}

const onnx::TensorProto* GraphRewrite::FloatWeight(const std::string& name, int min_rank) const {
  auto it = initializer_.find(name);
  if (it == initializer_.end() || graph_inputs_.count(name) != 0) return nullptr;
  const onnx::TensorProto& t = graph_.initializer(it->second);
  if (t.data_type() != onnx::TensorProto::FLOAT || t.dims_size() < min_rank) return nullptr;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return nullptr;
  return &t;
}

std::optional<std::vector<float>> GraphRewrite::FloatValues(const onnx::TensorProto& tensor) {
  const long long count = ElementCount(tensor);
  if (count < 0) return std::nullopt;
  std::vector<float> values(static_cast<std::size_t>(count));
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != values.size() * sizeof(float)) return std::nullopt;
    std::memcpy(values.data(), tensor.raw_data().data(), tensor.raw_data().size());
  } else {
    if (tensor.float_data_size() != count) return std::nullopt;
    std::copy(tensor.float_data().begin(), tensor.float_data().end(), values.begin());
  }
  return values;
}

int GraphRewrite::Readers(const std::string& name) const {
  auto it = readers_.find(name);
  return it == readers_.end() ? 0 : it->second;
}

std::string GraphRewrite::NewName(const std::string& stem) {
  std::string name = stem;
  for (int k = 1; names_.count(name) != 0; ++k) name = fmt::format("{}_{}", stem, k);
  names_.insert(name);
  return name;
}

std::string GraphRewrite::AddInitializer(const std::string& stem, onnx::TensorProto tensor) {
  tensor.set_name(NewName(stem));
  initializer_[tensor.name()] = graph_.initializer_size();
  *graph_.add_initializer() = std::move(tensor);
  return graph_.initializer(graph_.initializer_size() - 1).name();
}

std::string GraphRewrite::AddFloats(const std::string& stem, std::span<const float> values,
                                    const std::vector<std::int64_t>& dims) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t.add_dims(d);
  t.set_raw_data(values.data(), values.size() * sizeof(float));
  return AddInitializer(stem, std::move(t));
}

std::string GraphRewrite::AddScalar(const std::string& stem, onnx::TensorProto::DataType type, double value) {
  onnx::TensorProto t;
  t.set_data_type(type);
  switch (type) {
    case onnx::TensorProto::FLOAT: {
      const float f = static_cast<float>(value);
      t.set_raw_data(&f, sizeof f);
      break;
    }
    case onnx::TensorProto::INT8: {
      const auto v = static_cast<std::int8_t>(value);
      t.set_raw_data(&v, 1);
      break;
    }
    case onnx::TensorProto::UINT8: {
      const auto v = static_cast<std::uint8_t>(value);
      t.set_raw_data(&v, 1);
      break;
    }
    default: {
      const auto v = static_cast<std::int64_t>(value);
      t.set_data_type(onnx::TensorProto::INT64);
      t.set_raw_data(&v, sizeof v);
    }
  }
  return AddInitializer(stem, std::move(t));
}

onnx::NodeProto GraphRewrite::MakeNode(const std::string& op_type, std::vector<std::string> inputs,
                                       std::vector<std::string> outputs, const std::string& stem,
                                       const std::string& domain) {
  onnx::NodeProto node;
  node.set_op_type(op_type);
  node.set_name(NewName(stem + "_" + op_type));
  if (!domain.empty()) node.set_domain(domain);
  for (auto& i : inputs) node.add_input(std::move(i));
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    node.add_output(outputs[k].empty() ? NewName(fmt::format("{}_{}_out{}", stem, op_type, k)) : outputs[k]);
  }
  return node;
}

std::int64_t GraphRewrite::Commit(std::vector<onnx::NodeProto> nodes) {
  graph_.clear_node();
  for (auto& n : nodes) *graph_.add_node() = std::move(n);
  CountReaders();
  std::int64_t removed = 0;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (auto& t : *graph_.mutable_initializer()) {
    if (Readers(t.name()) == 0 && graph_inputs_.count(t.name()) == 0) {
      removed += static_cast<std::int64_t>(t.raw_data().size()) + std::int64_t{t.float_data_size()} * 4;
      continue;
    }
    *kept.Add() = std::move(t);
  }
  graph_.mutable_initializer()->Swap(&kept);
  initializer_.clear();
  for (int i = 0; i < graph_.initializer_size(); ++i) initializer_[graph_.initializer(i).name()] = i;
  return removed;
}

void GraphRewrite::ImportDomain(const std::string& domain, std::int64_t version) {
  for (const auto& o : model_.opset_import()) {
    if (o.domain() == domain) return;
  }
  auto* o = model_.add_opset_import();
  o->set_domain(domain);
  o->set_version(version);
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, std::int64_t fallback) {
  const auto* a = FindAttribute(node, name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

float FloatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const auto* a = FindAttribute(node, name);
  return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : fallback;
}

std::map<std::string, int> CountOps(const onnx::GraphProto& graph) {
  std::map<std::string, int> counts;
  for (const auto& n : graph.node()) ++counts[n.op_type()];
  return counts;
}

void DropUnusedImports(onnx::ModelProto& model) {
  std::set<std::string> used = {""};
  const auto note = [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node()) used.insert(n.domain() == "ai.onnx" ? "" : n.domain());
  };
  ForEachGraph(model.graph(), note);
  for (const auto& f : model.functions()) {
    used.insert(f.domain());
    for (const auto& n : f.node()) used.insert(n.domain() == "ai.onnx" ? "" : n.domain());
  }
  google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> kept;
  for (const auto& o : model.opset_import()) {
    if (used.count(o.domain() == "ai.onnx" ? "" : o.domain()) != 0) *kept.Add() = o;
  }
  model.mutable_opset_import()->Swap(&kept);
}

}  // namespace ortkit
