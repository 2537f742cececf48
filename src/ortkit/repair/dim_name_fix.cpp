// Symbolic dimension names made consistent: two names for dimensions that an element-wise node of
// inputs forces to be one size become one name, on every input and output.
#include <map>

#include <fmt/format.h>

#include "ortkit/check/lint_index.h"
#include "ortkit/repair/fix_passes.h"

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

/// Renames dim_params of `values` by `classes`; records each value changed.
void Rename(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values, NameClasses& classes, const char* kind,
            FixPassResult* result) {
  for (auto& value : values) {
    if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape()) continue;
    auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
    const std::string before = lint::ShapeText(*shape);
    for (auto& dim : *shape->mutable_dim()) {
      if (Named(dim)) dim.set_dim_param(classes.Find(dim.dim_param()));
    }
    const std::string after = lint::ShapeText(*shape);
    if (after != before && result != nullptr)
      result->changes.push_back(
          {"shape.dim-name-inconsistent", fmt::format("{} '{}'", kind, value.name()), before + " -> " + after});
  }
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
  if (!joined) return result;
  auto& graph = *model.mutable_graph();
  Rename(*graph.mutable_input(), classes, "input", &result);
  Rename(*graph.mutable_output(), classes, "output", &result);
  Rename(*graph.mutable_value_info(), classes, "value", nullptr);
  return result;
}

}  // namespace ortkit
