// Symbolic dimension names made consistent: two names for dimensions that an element-wise node of
// inputs forces to be one size become one name, on every input and output.
#include <map>
#include <set>

#include <fmt/format.h>

#include "ortkit/check/lint_index.h"
#include "ortkit/check/onnx_checker.h"
#include "ortkit/fix/fix_passes.h"

namespace ortkit {
namespace {

/// Union-find over names; the representative is the name met first.
class NameClasses {
 public:
  void Join(const std::string& a, const std::string& b) {
    const std::string ra = Find(a), rb = Find(b);
    if (ra == rb) return;
    if (order_.at(ra) < order_.at(rb))
      parent_[rb] = ra;
    else
      parent_[ra] = rb;
  }
  std::string Find(const std::string& name) {
    order_.emplace(name, order_.size());
    auto it = parent_.find(name);
    if (it == parent_.end() || it->second == name) return name;
    return it->second = Find(it->second);
  }

 private:
  std::map<std::string, std::string> parent_;
  std::map<std::string, std::size_t> order_;
};

bool Named(const onnx::TensorShapeProto::Dimension& dim) { return !dim.has_dim_value() && !dim.dim_param().empty(); }

/// Renames dim_params of `values` by `classes`; records each value changed, under
/// shape.output-dim-unrelated when a name it renamed is one of `from_inference` (an output's name that
/// inference tied to an input's), else under shape.dim-name-inconsistent.
void Rename(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values, NameClasses& classes, const char* kind,
            const std::set<std::string>& from_inference, FixPassResult* result) {
  for (auto& value : values) {
    if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape()) continue;
    auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
    const std::string before = lint::ShapeText(*shape);
    bool inferred = false;
    for (auto& dim : *shape->mutable_dim()) {
      if (!Named(dim)) continue;
      const std::string name = classes.Find(dim.dim_param());
      if (name == dim.dim_param()) continue;
      inferred = inferred || from_inference.count(dim.dim_param()) > 0;
      dim.set_dim_param(name);
    }
    const std::string after = lint::ShapeText(*shape);
    if (after == before || result == nullptr) continue;
    result->changes.push_back({inferred ? "shape.output-dim-unrelated" : "shape.dim-name-inconsistent",
                               fmt::format("{} '{}'", kind, value.name()), fmt::format("{} -> {}", before, after)});
  }
}

/// Output dimensions whose declared name no input has, where shape inference from the inputs alone (the
/// outputs' declared shapes cleared) gives an input's name: declared name -> the input's. A name that
/// inference ties to two different input names is left out.
std::map<std::string, std::string> OutputNamesFromInputs(const onnx::ModelProto& model) {
  std::set<std::string> input_names;
  for (const auto& in : model.graph().input()) {
    if (!in.type().has_tensor_type()) continue;
    for (const auto& dim : in.type().tensor_type().shape().dim()) {
      if (Named(dim)) input_names.insert(dim.dim_param());
    }
  }
  onnx::ModelProto inferred = model;
  for (auto& out : *inferred.mutable_graph()->mutable_output()) {
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  RunShapeInference(inferred);
  std::map<std::string, std::string> renames;
  std::set<std::string> conflicting;
  for (int o = 0; o < model.graph().output_size(); ++o) {
    const auto* declared = lint::ShapeOf(model.graph().output(o).type());
    const auto* found = lint::ShapeOf(inferred.graph().output(o).type());
    if (declared == nullptr || found == nullptr || declared->dim_size() != found->dim_size()) continue;
    for (int d = 0; d < declared->dim_size(); ++d) {
      const auto& was = declared->dim(d);
      const auto& is = found->dim(d);
      if (!Named(was) || input_names.count(was.dim_param()) || !Named(is) || !input_names.count(is.dim_param()))
        continue;
      auto [it, added] = renames.emplace(was.dim_param(), is.dim_param());
      if (!added && it->second != is.dim_param()) conflicting.insert(was.dim_param());
    }
  }
  for (const auto& name : conflicting) renames.erase(name);
  return renames;
}

}  // namespace

FixPassResult FixDimNames(onnx::ModelProto& model, const FixPassOptions&) {
  FixPassResult result;
  NameClasses classes;
  bool joined = false;
  {
    const lint::ModelIndex index(model);
    for (const auto& pair : lint::AlignedInputDimensions(index)) {
      const auto& da = pair.shape_a->dim(pair.axis_a);
      const auto& db = pair.shape_b->dim(pair.axis_b);
      if (Named(da) && Named(db) && da.dim_param() != db.dim_param()) {
        classes.Join(da.dim_param(), db.dim_param());
        joined = true;
      } else if (Named(da) != Named(db) && (Named(da) ? db : da).dim_value() > 1) {
        const auto& named = Named(da) ? da : db;
        result.refusals.push_back(
            {"shape.dim-name-inconsistent", fmt::format("dimension '{}'", named.dim_param()),
             fmt::format("inputs '{}' and '{}' meet a fixed size {} on it: fixing the name to that size narrows the "
                         "interface, which is the exporter's call",
                         pair.input_a, pair.input_b, (Named(da) ? db : da).dim_value())});
      }
    }
  }
  // Output names that no input has but inference proves to be an input's axis join that input's name.
  std::set<std::string> from_inference;
  for (const auto& [output_name, input_name] : OutputNamesFromInputs(model)) {
    classes.Join(input_name, output_name);
    from_inference.insert(output_name);
    joined = true;
  }
  if (!joined) return result;
  auto& graph = *model.mutable_graph();
  Rename(*graph.mutable_input(), classes, "input", from_inference, &result);
  Rename(*graph.mutable_output(), classes, "output", from_inference, &result);
  Rename(*graph.mutable_value_info(), classes, "value", from_inference, nullptr);
  return result;
}

}  // namespace ortkit
