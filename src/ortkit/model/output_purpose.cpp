#include "ortkit/model/output_purpose.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

namespace ortkit {
namespace {

/// Nodes that move, select or re-encode values without computing new ones: the purpose of what they
/// give is the purpose of what they read.
constexpr std::array<std::string_view, 14> kPassThrough = {
    "Reshape",        "Transpose",        "Squeeze", "Unsqueeze", "Flatten", "Identity", "Cast",
    "QuantizeLinear", "DequantizeLinear", "Slice",   "Gather",    "Concat",  "Split",    "Expand"};

bool IsPassThrough(const onnx::NodeProto& node) {
  return node.domain().empty() &&
         std::find(kPassThrough.begin(), kPassThrough.end(), node.op_type()) != kPassThrough.end();
}

/// The purpose a computing node gives its output, when it settles it.
std::optional<OutputPurpose> PurposeOfNode(const onnx::NodeProto& node,
                                           const std::map<std::string, const onnx::NodeProto*>& producers) {
  const std::string& op = node.op_type();
  if (op == "Softmax" || op == "LogSoftmax" || op == "TopK") return OutputPurpose::kScores;
  if (op == "LpNormalization") return OutputPurpose::kEmbedding;
  if (op == "Sigmoid") return OutputPurpose::kValues;
  if (op == "Div" && node.input_size() == 2) {
    // x / ||x||: the divisor is a norm (ReduceL2, or the square root of a sum of squares), possibly clamped.
    const std::string* divisor = &node.input(1);
    for (int hops = 0; hops < 4; ++hops) {
      auto it = producers.find(*divisor);
      if (it == producers.end()) break;
      const std::string& d = it->second->op_type();
      if (d == "ReduceL2" || d == "Sqrt") return OutputPurpose::kEmbedding;
      if ((d != "Clip" && d != "Max" && d != "Expand" && d != "Add") || it->second->input_size() == 0) break;
      divisor = &it->second->input(0);
    }
  }
  return std::nullopt;
}

std::optional<OutputPurpose> PurposeFromGraph(const onnx::GraphProto& graph, const std::string& output) {
  std::map<std::string, const onnx::NodeProto*> producers;
  for (const auto& node : graph.node()) {
    for (const auto& name : node.output()) producers.emplace(name, &node);
  }
  const std::string* value = &output;
  for (int hops = 0; hops < 16; ++hops) {
    auto it = producers.find(*value);
    if (it == producers.end()) return std::nullopt;
    const onnx::NodeProto& node = *it->second;
    if (auto purpose = PurposeOfNode(node, producers)) return purpose;
    if (!IsPassThrough(node) || node.input_size() == 0) return std::nullopt;
    value = &node.input(0);
  }
  return std::nullopt;
}

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

std::optional<OutputPurpose> PurposeFromName(const std::string& output) {
  static constexpr std::array<std::string_view, 6> kScoreWords = {"logit", "score", "prob", "class", "cls", "softmax"};
  static constexpr std::array<std::string_view, 9> kVectorWords = {"embed",  "feature", "feat",      "hidden", "pool",
                                                                   "vector", "encod",   "represent", "emb"};
  const std::string name = Lowercase(output);
  const auto has = [&](std::string_view word) { return name.find(word) != std::string::npos; };
  if (std::any_of(kScoreWords.begin(), kScoreWords.end(), has)) return OutputPurpose::kScores;
  if (std::any_of(kVectorWords.begin(), kVectorWords.end(), has)) return OutputPurpose::kEmbedding;
  return std::nullopt;
}

/// Every row along the last axis holds entries in [0, 1] that sum to 1.
bool RowsAreDistributions(const Tensor& sample, std::int64_t width) {
  const std::int64_t rows = sample.element_count() / width;
  if (rows == 0) return false;
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t j = 0; j < width; ++j) {
      const double v = sample.AsDouble(r * width + j);
      if (!(v >= 0 && v <= 1)) return false;
      sum += v;
    }
    if (std::fabs(sum - 1) > 1e-3) return false;
  }
  return true;
}

}  // namespace

OutputPurpose GuessOutputPurpose(const onnx::ModelProto& model, const std::string& output, const Tensor& sample) {
  const DataTypeInfo* info = FindDataType(sample.type());
  if (info == nullptr || !info->is_float) return OutputPurpose::kLabels;
  const std::int64_t width = sample.shape().empty() ? 1 : sample.shape().back();
  if (width <= 1) return OutputPurpose::kValues;
  if (auto purpose = PurposeFromGraph(model.graph(), output)) return *purpose;
  if (auto purpose = PurposeFromName(output)) return *purpose;
  if (RowsAreDistributions(sample, width)) return OutputPurpose::kScores;
  // A row of thousands that is no multiple of 64 counts classes or tokens (a CTC head's 8,210 characters,
  // BERT's 30,522 or GPT-2's 50,257 tokens); widths of vectors are multiples of 64 (384, 768, 4096).
  if (width >= 1000 && width % 64 != 0) return OutputPurpose::kScores;
  return OutputPurpose::kEmbedding;
}

}  // namespace ortkit
