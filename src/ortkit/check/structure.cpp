#include "ortkit/check/structure.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

int ModelOpset(const onnx::ModelProto& model, const std::string& domain) {
  for (const auto& op : model.opset_import()) {
    const std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
    if (d == domain) return static_cast<int>(op.version());
  }
  return -1;
}

// Pulls "node X (OpType)" style context out of an ONNX library message.
Location LocationFromOnnxMessage(const std::string& message) {
  Location where;
  static const std::regex node_re(R"((?:node|Node) \(([^)]*)\)(?: with op_type \(?(\w+)\)?)?)");
  static const std::regex op_re(R"(\(op_type:(\w+), node name: ([^)]*)\))");
  std::smatch m;
  if (std::regex_search(message, m, op_re)) {
    where.op_type = m[1];
    where.node = m[2];
  } else if (std::regex_search(message, m, node_re)) {
    where.node = m[1];
    if (m[2].matched) where.op_type = m[2];
  }
  return where;
}

std::string FirstLine(const std::string& s) {
  auto pos = s.find("\n\n==>");
  return pos == std::string::npos ? s : s.substr(0, pos);
}

struct Dim {
  bool has_value = false;
  long long value = 0;
  std::string param;
};

std::vector<Dim> DimsOf(const onnx::TypeProto& type) {
  std::vector<Dim> dims;
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    Dim dim;
    if (d.has_dim_value()) {
      dim.has_value = true;
      dim.value = d.dim_value();
    } else if (d.has_dim_param()) {
      dim.param = d.dim_param();
    }
    dims.push_back(dim);
  }
  return dims;
}

std::string DimText(const Dim& d) {
  if (d.has_value) return std::to_string(d.value);
  return d.param.empty() ? "?" : d.param;
}

// ONNX 1.12's check_model(ModelProto) resolves external data locations against the current
// directory and exports no way to pass the model's folder, so a model checked from elsewhere would
// fail for files that are where they belong. While this guard lives, every location names a file
// that always exists; the external-data layer checks the real ones against the model's folder.
class HiddenExternalLocations {
 public:
  explicit HiddenExternalLocations(onnx::ModelProto& model) {
    Collect(*model.mutable_graph(), 0);
    for (auto& function : *model.mutable_functions()) {
      for (auto& node : *function.mutable_node()) CollectAttributes(node, 1);
    }
    for (auto& [entry, original] : entries_) entry->mutable_value()->swap(original);
  }
  ~HiddenExternalLocations() {
    for (auto& [entry, original] : entries_) entry->mutable_value()->swap(original);
  }
  HiddenExternalLocations(const HiddenExternalLocations&) = delete;
  HiddenExternalLocations& operator=(const HiddenExternalLocations&) = delete;

 private:
  void Add(onnx::TensorProto& tensor) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
    for (auto& entry : *tensor.mutable_external_data()) {
      if (entry.key() == "location") entries_.emplace_back(&entry, "/dev/null");
    }
  }
  void Add(onnx::SparseTensorProto& sparse) {
    if (sparse.has_values()) Add(*sparse.mutable_values());
    if (sparse.has_indices()) Add(*sparse.mutable_indices());
  }
  void CollectAttributes(onnx::NodeProto& node, int depth) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) Add(*attr.mutable_t());
      for (auto& t : *attr.mutable_tensors()) Add(t);
      if (attr.has_sparse_tensor()) Add(*attr.mutable_sparse_tensor());
      for (auto& s : *attr.mutable_sparse_tensors()) Add(s);
      if (attr.has_g()) Collect(*attr.mutable_g(), depth + 1);
      for (auto& g : *attr.mutable_graphs()) Collect(g, depth + 1);
    }
  }
  void Collect(onnx::GraphProto& graph, int depth) {
    if (depth > 64) return;  // as deep as ForEachGraph goes
    for (auto& t : *graph.mutable_initializer()) Add(t);
    for (auto& s : *graph.mutable_sparse_initializer()) Add(s);
    for (auto& node : *graph.mutable_node()) CollectAttributes(node, depth);
  }

  std::vector<std::pair<onnx::StringStringEntryProto*, std::string>> entries_;  ///< entry, the value swapped out
};

using OpsetVersions = std::map<std::string, int>;  // domain ("" for ai.onnx) -> imported version

OpsetVersions ImportedOpsets(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  OpsetVersions versions;
  for (const auto& op : imports) versions[op.domain() == "ai.onnx" ? "" : op.domain()] = static_cast<int>(op.version());
  return versions;
}

// As deep as ForEachGraph and the lint rules go; deeper nesting is no real model.
constexpr int kMaxSubgraphDepth = 64;

std::string UnsafeNodesForInference(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                                    const OpsetVersions& opsets, int depth) {
  if (depth > kMaxSubgraphDepth) return fmt::format("subgraphs nest more than {} levels deep", kMaxSubgraphDepth);
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    const auto opset = opsets.find(domain);
    const auto* schema = opset == opsets.end() ? nullptr : onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain);
    if (schema != nullptr) {
      for (const auto& [name, attribute] : schema->attributes()) {
        if (!attribute.required) continue;
        const bool present = std::any_of(node.attribute().begin(), node.attribute().end(),
                                          [&name = name](const onnx::AttributeProto& a) { return a.name() == name; });
        if (!present) {
          return fmt::format("node '{}' ({}) lacks its required attribute '{}'", NodeDisplayName(node, i), node.op_type(), name);
        }
      }
    }
    for (const auto& attribute : node.attribute()) {
      std::string reason = attribute.has_g() ? UnsafeNodesForInference(attribute.g().node(), opsets, depth + 1) : "";
      for (const auto& graph : attribute.graphs()) {
        if (reason.empty()) reason = UnsafeNodesForInference(graph.node(), opsets, depth + 1);
      }
      if (!reason.empty()) return reason;
    }
  }
  return "";
}

// Why ONNX 1.12's shape inference must not run on `model`, or "" when it may. Its inference
// functions trust what the checker verifies: Scan-8's dereferences the required attribute
// num_scan_inputs unchecked, so a node without it crashes the process (fuzz/regressions/), and
// recursion through absurdly nested subgraphs could exhaust the stack.
std::string UnsafeForShapeInference(const onnx::ModelProto& model) {
  std::string reason = UnsafeNodesForInference(model.graph().node(), ImportedOpsets(model.opset_import()), 0);
  for (const auto& function : model.functions()) {
    if (reason.empty()) reason = UnsafeNodesForInference(function.node(), ImportedOpsets(function.opset_import()), 1);
  }
  return reason;
}

}  // namespace

int KnownIrVersion() { return onnx::Version::IR_VERSION; }

int KnownOnnxOpset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find("");
  return it == map.end() ? 0 : it->second.second;
}

std::vector<Diagnosis> OnnxLibraryLimits(const onnx::ModelProto& model) {
  std::vector<Diagnosis> out;
  if (model.ir_version() > KnownIrVersion()) {
    out.push_back(Diagnose("checker.ir-version-too-new",
                           fmt::format("the model's IR version is {}; the ONNX library in ortkit knows up to {}",
                                       model.ir_version(), KnownIrVersion())));
  }
  const int opset = ModelOpset(model, "");
  if (opset > KnownOnnxOpset()) {
    out.push_back(Diagnose("checker.opset-too-new",
                           fmt::format("the model imports ai.onnx opset {}; the ONNX library in ortkit knows up to {}", opset,
                                       KnownOnnxOpset())));
  }
  return out;
}

LayerOutcome RunChecker(onnx::ModelProto& model) {
  LayerOutcome outcome;
  auto limits = OnnxLibraryLimits(model);
  if (!limits.empty()) {
    outcome.ran = false;
    outcome.skipped_reason = limits.front().message;
    outcome.diagnoses = std::move(limits);
    return outcome;
  }
  try {
    HiddenExternalLocations hidden(model);
    onnx::checker::check_model(model);
  } catch (const onnx::checker::ValidationError& e) {
    const std::string message = FirstLine(e.what());
    outcome.diagnoses.push_back(Diagnose("checker.failed", message, LocationFromOnnxMessage(message)));
  } catch (const std::exception& e) {
    const std::string message = FirstLine(e.what());
    outcome.diagnoses.push_back(Diagnose("checker.failed", message, LocationFromOnnxMessage(message)));
  }
  return outcome;
}

LayerOutcome RunShapeInference(onnx::ModelProto& model) {
  LayerOutcome outcome;
  auto limits = OnnxLibraryLimits(model);
  if (!limits.empty()) {
    outcome.ran = false;
    outcome.skipped_reason = limits.front().message;
    return outcome;
  }
  if (std::string unsafe = UnsafeForShapeInference(model); !unsafe.empty()) {
    outcome.ran = false;
    outcome.skipped_reason = "the ONNX library's shape inference cannot run safely: " + unsafe;
    return outcome;
  }
  std::map<std::string, std::vector<Dim>> declared;
  for (const auto& out : model.graph().output()) declared[out.name()] = DimsOf(out.type());
  std::set<std::string> input_params;
  std::map<std::string, std::pair<std::string, long long>> fixed_params;  // name -> (where, value) for inconsistency
  for (const auto& in : model.graph().input()) {
    for (const auto& d : DimsOf(in.type())) {
      if (!d.param.empty()) input_params.insert(d.param);
    }
  }

  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    const std::string message = FirstLine(e.what());
    outcome.diagnoses.push_back(Diagnose("shape.inference-failed", message, LocationFromOnnxMessage(message)));
    return outcome;
  }

  // Inferred value_info may say more about outputs than the declared outputs do.
  std::map<std::string, const onnx::TypeProto*> inferred;
  for (const auto& vi : model.graph().value_info()) inferred[vi.name()] = &vi.type();
  for (const auto& out : model.graph().output()) inferred[out.name()] = &out.type();

  for (const auto& out : model.graph().output()) {
    const auto& before = declared[out.name()];
    const auto after = DimsOf(*inferred[out.name()]);
    for (std::size_t i = 0; i < after.size(); ++i) {
      Location where;
      where.output = out.name();
      where.dimension = std::to_string(i);
      const Dim& d = after[i];
      const bool was_dynamic = i < before.size() && !before[i].has_value;
      if (d.has_value) {
        if (was_dynamic && !input_params.empty()) {
          outcome.diagnoses.push_back(Diagnose(
              "shape.output-dim-fixed",
              fmt::format("output '{}' dimension {} is declared '{}' but shape inference fixes it to {}", out.name(), i,
                          DimText(before[i]), d.value),
              where));
        }
      } else if (d.param.empty()) {
        outcome.diagnoses.push_back(Diagnose(
            "shape.output-dim-unknown",
            fmt::format("output '{}' dimension {} has neither a size nor a name after shape inference", out.name(), i), where));
      } else if (!input_params.empty() && !input_params.count(d.param)) {
        auto diag = Diagnose("shape.output-dim-unrelated",
                             fmt::format("output '{}' dimension {} is '{}', a name that no input dimension has (inputs use: {})",
                                         out.name(), i, d.param, fmt::format("{}", fmt::join(input_params, ", "))),
                             where);
        diag.severity = Severity::kInfo;
        // Exporter-generated names lose the link to the inputs: worth a warning.
        static const std::regex generated(R"(^(unk__\d+|.*_dim_\d+|[A-Za-z]+\d*_output_\d+.*)$)");
        if (std::regex_match(d.param, generated)) diag.severity = Severity::kWarning;
        outcome.diagnoses.push_back(std::move(diag));
      }
    }
  }
  return outcome;
}

}  // namespace ortkit
