// A fixed first dimension on the inputs and outputs -> a named symbolic batch dimension, and the
// Reshape constants that bake the traced batch size -> -1 or 0, where that is equivalent at the
// traced size. Whether other sizes then work is for the sweep to prove (ModelFix).
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/check/lint_index.h"
#include "ortkit/check/onnx_checker.h"
#include "ortkit/fix/fix_passes.h"
#include "ortkit/fix/graph_surgery.h"
#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

using lint::IsFixed;
using lint::ShapeOf;

onnx::TensorShapeProto* MutableShape(onnx::ValueInfoProto& value) {
  if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape()) return nullptr;
  return value.mutable_type()->mutable_tensor_type()->mutable_shape();
}

struct BatchPlan {
  long long size = 0;  ///< the traced batch size the inputs fix
  std::string name;    ///< the symbol it becomes
  std::vector<int> inputs;
  std::vector<int> outputs;
};

/// The inputs of rank >= 2 with a fixed first dimension (all the same size), the outputs whose first
/// dimension is that size, and the symbol: the name another input already gives its first dimension.
BatchPlan PlanBatch(const onnx::GraphProto& graph, const std::string& default_name, FixPassResult& result) {
  BatchPlan plan;
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  std::set<long long> sizes;
  for (int i = 0; i < graph.input_size(); ++i) {
    const auto& in = graph.input(i);
    const auto* shape = ShapeOf(in.type());
    if (initializers.count(in.name()) || shape == nullptr || shape->dim_size() == 0) continue;
    const auto& first = shape->dim(0);
    if (!IsFixed(first)) {
      if (plan.name.empty() && first.has_dim_param() && !first.dim_param().empty()) plan.name = first.dim_param();
      continue;
    }
    if (shape->dim_size() < 2 || first.dim_value() <= 0) continue;
    plan.inputs.push_back(i);
    sizes.insert(first.dim_value());
  }
  if (sizes.size() > 1) {
    result.refusals.push_back({"graph.static-batch", "the inputs",
                               fmt::format("their fixed first dimensions differ ({}): which one is the batch is not "
                                           "mechanical; export with dynamic axes",
                                           fmt::join(sizes, ", "))});
    plan.inputs.clear();
    return plan;
  }
  if (plan.inputs.empty()) return plan;
  plan.size = *sizes.begin();
  if (plan.name.empty()) plan.name = default_name;
  for (int o = 0; o < graph.output_size(); ++o) {
    const auto* shape = ShapeOf(graph.output(o).type());
    if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0)) && shape->dim(0).dim_value() == plan.size)
      plan.outputs.push_back(o);
  }
  return plan;
}

void MakeFirstDimSymbolic(onnx::ValueInfoProto& value, const BatchPlan& plan, const char* kind, FixPassResult& result) {
  auto* shape = MutableShape(value);
  const std::string before = lint::ShapeText(*shape);
  shape->mutable_dim(0)->set_dim_param(plan.name);  // clears dim_value: one field of a oneof
  result.changes.push_back({"graph.static-batch", fmt::format("{} '{}'", kind, value.name()),
                            fmt::format("{} -> {}", before, lint::ShapeText(*shape))});
}

/// The values of a Reshape's constant shape with the traced batch made relative, or nullopt. 0 (copy
/// the data's first dimension) unless inference shows that dimension is something else: it keeps every
/// other constant as strict as before, so a size baked elsewhere still fails loudly, and where the data's
/// first dimension is not the batch the comparison at the traced size fails and the fix is refused. -1
/// (infer it from the element count) when 0 cannot be used and no other entry is -1: at the traced size
/// it gives the traced size.
std::optional<std::vector<std::int64_t>> BatchFreeShape(const std::vector<long long>& shape, bool data_first_dim_other,
                                                        bool allowzero) {
  std::vector<std::int64_t> out(shape.begin(), shape.end());
  if (!data_first_dim_other && !allowzero) {
    out.front() = 0;
    return out;
  }
  if (std::count(shape.begin() + 1, shape.end(), -1) == 0) {
    out.front() = -1;
    return out;
  }
  return std::nullopt;
}

struct BakedReshape {
  int node = 0;
  std::string shape_name;        ///< the constant shape, or the Concat's literal first piece
  std::vector<long long> shape;  ///< its values
  int concat = -1;               ///< the Concat that builds the shape from `shape_name` and run-time sizes
  bool other_minus_one = false;  ///< a -1 among the Concat's other constant pieces
};

/// Reshapes of the main graph that give a value computed from the inputs a constant shape starting
/// with `batch`; with `batch` 0, with the first such constant above 1 (the traced size when the
/// inputs are already dynamic).
std::vector<BakedReshape> FindBakedReshapes(const onnx::ModelProto& model, long long batch) {
  const lint::ModelIndex index(model);
  std::vector<lint::Name> roots;
  for (const auto* in : index.RuntimeInputs()) roots.push_back(in->name());
  const auto derived = index.DerivedValues(roots);
  std::vector<BakedReshape> found;
  const auto& graph = model.graph();
  // Inputs already dynamic: the outputs' fixed first dimensions are the traced batch a literal may bake.
  std::set<long long> declared;
  for (const auto& out : graph.output()) {
    const auto* shape = ShapeOf(out.type());
    if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0))) declared.insert(shape->dim(0).dim_value());
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (!lint::IsOnnxOp(node, "Reshape") || !derived.count(lint::Input(node, 0))) continue;
    auto shape = index.ConstantInts(0, lint::Input(node, 1));
    if (shape && shape->size() >= 2) {
      if (batch == 0 && shape->front() > 1) batch = shape->front();
      if (shape->front() == batch) found.push_back({i, node.input(1), *shape});
      continue;
    }
    // x.view(1, x.size(1), 3, 192): a Concat of a literal first piece and sizes read at run time.
    auto producer = index.main().producer.find(lint::Input(node, 1));
    if (producer == index.main().producer.end()) continue;
    const auto& maker = graph.node(producer->second);
    if (!lint::IsOnnxOp(maker, "Concat") || maker.input_size() < 2) continue;
    auto piece = index.ConstantInts(0, lint::Input(maker, 0));
    const bool traced = batch > 0 ? piece && piece->front() == batch : piece && declared.count(piece->front());
    if (!piece || piece->size() != 1 || !traced) continue;
    BakedReshape baked{i, maker.input(0), *piece, producer->second};
    for (int k = 1; k < maker.input_size(); ++k) {
      auto other = index.ConstantInts(0, lint::Input(maker, k));
      baked.other_minus_one = baked.other_minus_one || (other && std::count(other->begin(), other->end(), -1) > 0);
    }
    found.push_back(std::move(baked));
  }
  return found;
}

/// Whether inference gives value `name` a first dimension other than the batch: another name, or a
/// number other than the traced size (inference on the model still holding baked constants gives values
/// after them the traced size itself); false when it says nothing.
bool FirstDimIsOther(const onnx::GraphProto& graph, const std::string& name, const std::string& symbol,
                     long long traced) {
  for (const auto& v : graph.value_info()) {
    const auto* shape = ShapeOf(v.type());
    if (v.name() != name || shape == nullptr || shape->dim_size() == 0) continue;
    const auto& first = shape->dim(0);
    if (first.has_dim_value()) return first.dim_value() != traced;
    return !first.dim_param().empty() && first.dim_param() != symbol && first.dim_param().rfind("unk__", 0) != 0;
  }
  return false;
}

/// The literal first piece of a Concat that builds a Reshape's shape becomes 0 (copy the data's first
/// dimension) or -1 (infer it), as BatchFreeShape chooses for a constant shape; said when neither applies.
void RewriteConcatPiece(onnx::GraphProto& graph, const BakedReshape& b, const std::string& where, bool data_first_other,
                        bool allowzero, FixPassResult& result) {
  std::int64_t value = 0;
  if (data_first_other || allowzero) {
    if (b.other_minus_one) {
      result.refusals.push_back({"graph.baked-batch-reshape", where,
                                 fmt::format("the Concat that builds its shape starts with the literal {} but holds "
                                             "another -1, and 0 (copy the first dimension) does not apply "
                                             "(allowzero, or the data's first dimension is not the batch)",
                                             b.shape.front())});
      return;
    }
    value = -1;
  }
  auto& concat = *graph.mutable_node(b.concat);
  const std::string piece = UnusedName(graph, b.shape_name + "_batch_free");
  *graph.add_initializer() = Int64Tensor(piece, {value});
  concat.set_input(0, piece);
  result.changes.push_back({"graph.baked-batch-reshape", where,
                            fmt::format("the Concat '{}' that builds its shape starts with {} instead of the literal "
                                        "{} ('{}')",
                                        NodeDisplayName(concat, b.concat), value, b.shape.front(), piece)});
}

/// Rewrites the baked Reshapes (one batch-free copy per shared constant); returns the traced size found.
long long RewriteBakedReshapes(onnx::ModelProto& model, long long batch, const std::string& symbol,
                               FixPassResult& result) {
  const auto baked = FindBakedReshapes(model, batch);
  if (baked.empty()) return batch;
  const long long traced = baked.front().shape.front();
  // Shapes inferred from the symbolic inputs say which values do not start with the batch. On a copy:
  // inference also narrows the declared outputs to what the baked constants give.
  onnx::ModelProto inferred = model;
  RunShapeInference(inferred);
  auto& graph = *model.mutable_graph();
  std::map<std::vector<std::int64_t>, std::string> copies;  // batch-free values -> the initializer holding them
  for (const auto& b : baked) {
    auto& node = *graph.mutable_node(b.node);
    const std::string where = fmt::format("node '{}'", NodeDisplayName(node, b.node));
    const bool allowzero = lint::IntAttribute(node, "allowzero").value_or(0) != 0;
    const bool other = FirstDimIsOther(inferred.graph(), node.input(0), symbol, traced);
    if (b.concat >= 0) {
      RewriteConcatPiece(graph, b, where, other, allowzero, result);
      continue;
    }
    auto free = BatchFreeShape(b.shape, other, allowzero);
    if (!free) {
      result.refusals.push_back({"graph.baked-batch-reshape", where,
                                 fmt::format("its shape {} holds another -1, and 0 (copy the first dimension) does "
                                             "not apply (allowzero, or the data's first dimension is not the batch)",
                                             lint::IntsText(b.shape))});
      continue;
    }
    auto [it, added] = copies.emplace(*free, std::string());
    if (added) {
      it->second = UnusedName(graph, b.shape_name + "_batch_free");
      *graph.add_initializer() = Int64Tensor(it->second, *free);
    }
    node.set_input(1, it->second);
    result.changes.push_back({"graph.baked-batch-reshape", where,
                              fmt::format("shape {} -> {} ('{}')", lint::IntsText(b.shape),
                                          lint::IntsText({free->begin(), free->end()}), it->second)});
  }
  return traced;
}

}  // namespace

FixPassResult FixStaticBatch(onnx::ModelProto& model, const FixPassOptions& options) {
  FixPassResult result;
  auto& graph = *model.mutable_graph();
  const BatchPlan plan = PlanBatch(graph, options.batch_name, result);
  if (plan.inputs.empty() && plan.name.empty()) return result;
  for (int i : plan.inputs) MakeFirstDimSymbolic(*graph.mutable_input(i), plan, "input", result);
  for (int o : plan.outputs) MakeFirstDimSymbolic(*graph.mutable_output(o), plan, "output", result);
  if (!plan.inputs.empty()) graph.clear_value_info();  // inferred for the traced batch: stale now
  // Inputs already dynamic (a tracer's export with dynamic axes): the traced size is the one the
  // Reshape constants bake.
  const long long traced = RewriteBakedReshapes(model, plan.size, plan.name, result);
  // Inputs already dynamic: an output that declares the traced batch the Reshapes baked follows the batch now.
  if (plan.inputs.empty() && traced > 0 && result.changed()) {
    for (int o = 0; o < graph.output_size(); ++o) {
      const auto* shape = ShapeOf(graph.output(o).type());
      if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0)) && shape->dim(0).dim_value() == traced)
        MakeFirstDimSymbolic(*graph.mutable_output(o), plan, "output", result);
    }
  }
  if (traced > 0 && result.changed()) result.proof_sizes[plan.name] = traced;
  return result;
}

}  // namespace ortkit
