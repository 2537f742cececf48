// Training-mode Dropout and BatchNormalization -> their inference form, as an export after
// model.eval() would have written them.
#include <fmt/format.h>

#include "ortkit/check/lint_index.h"
#include "ortkit/fix/fix_passes.h"
#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

int OnnxOpset(const onnx::ModelProto& model) {
  for (const auto& import : model.opset_import()) {
    if (lint::IsOnnxDomain(import.domain())) return static_cast<int>(import.version());
  }
  return -1;
}

void SetIntAttribute(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.name() != name) continue;
    attr.set_i(value);
    return;
  }
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

}  // namespace

FixPassResult FixTrainingDropout(onnx::ModelProto& model, const FixPassOptions&) {
  FixPassResult result;
  const int opset = OnnxOpset(model);
  std::vector<int> constant_true;  // Dropouts whose training_mode is a constant true
  {
    const lint::ModelIndex index(model);  // views into the model: dropped before it is edited
    for (int i = 0; i < model.graph().node_size(); ++i) {
      const auto& node = model.graph().node(i);
      if (!lint::IsOnnxOp(node, "Dropout") || node.input_size() < 3 || node.input(2).empty()) continue;
      auto values = index.ConstantInts(0, node.input(2), 1);
      if (values && !values->empty() && values->front() != 0) constant_true.push_back(i);
    }
  }
  auto& graph = *model.mutable_graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    auto& node = *graph.mutable_node(i);
    if (!lint::IsOnnxOp(node, "Dropout") || opset < 1 || opset >= 7) continue;
    if (lint::IntAttribute(node, "is_test").value_or(0) != 0) continue;
    SetIntAttribute(node, "is_test", 1);
    result.changes.push_back(
        {"graph.training-dropout", fmt::format("node '{}'", NodeDisplayName(node, i)), "is_test set to 1 (inference)"});
  }
  // A training_mode computed at run time is whoever feeds it to decide: left as it is.
  for (int i : constant_true) {
    auto& node = *graph.mutable_node(i);
    const std::string training_mode = node.input(2);
    node.mutable_input()->DeleteSubrange(2, 1);  // absent training_mode: false, inference
    result.changes.push_back(
        {"graph.training-dropout", fmt::format("node '{}'", NodeDisplayName(node, i)),
         fmt::format("training_mode input '{}' (a constant true) removed: Dropout passes its input through",
                     training_mode)});
  }
  return result;
}

FixPassResult FixTrainingBatchNorm(onnx::ModelProto& model, const FixPassOptions&) {
  FixPassResult result;
  const int opset = OnnxOpset(model);
  std::vector<std::vector<std::string>> read_statistics(model.graph().node_size());
  {
    const lint::ModelIndex index(model);  // views into the model: dropped before it is edited
    for (int i = 0; i < model.graph().node_size(); ++i) {
      const auto& node = model.graph().node(i);
      if (!lint::IsOnnxOp(node, "BatchNormalization")) continue;
      for (int o = 1; o < node.output_size(); ++o) {
        const auto& out = node.output(o);
        if (!out.empty() && (index.IsReadExplicitly(out) || index.IsGraphOutput(out)))
          read_statistics[i].push_back(out);
      }
    }
  }
  auto& graph = *model.mutable_graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    auto& node = *graph.mutable_node(i);
    if (!lint::IsOnnxOp(node, "BatchNormalization")) continue;
    const std::string where = fmt::format("node '{}'", NodeDisplayName(node, i));
    const bool training = lint::IntAttribute(node, "training_mode").value_or(0) != 0 ||
                          (opset >= 1 && opset < 7 && lint::IntAttribute(node, "is_test").value_or(0) == 0);
    if (!training && node.output_size() <= 1) continue;
    if (!read_statistics[i].empty()) {
      result.refusals.push_back(
          {"graph.training-batchnorm", where,
           fmt::format("its running statistics ({}) are read by the graph or are outputs: removing them changes what "
                       "the model computes; export after model.eval()",
                       lint::NameList(read_statistics[i]))});
      continue;
    }
    if (opset >= 1 && opset < 7) SetIntAttribute(node, "is_test", 1);
    if (lint::IntAttribute(node, "training_mode").has_value()) SetIntAttribute(node, "training_mode", 0);
    const int extra = node.output_size() - 1;
    if (extra > 0) node.mutable_output()->DeleteSubrange(1, extra);
    result.changes.push_back(
        {"graph.training-batchnorm", where,
         fmt::format(
             "inference mode: normalises with the stored running mean and variance{}",
             extra > 0 ? fmt::format(", {} running-statistics output{} dropped", extra, extra == 1 ? "" : "s") : "")});
  }
  return result;
}

}  // namespace ortkit
