#include "ortkit/check/onnx_checker.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string_view>

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
  static const std::regex op_re(R"(\(op_type:(\w+)(?:, node name: ([^)]*))?\))");  // unnamed nodes: no node name
  std::smatch m;
  if (std::regex_search(message, m, op_re)) {
    where.op_type = m[1];
    if (m[2].matched) where.node = m[2];
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

// check_model(ModelProto) resolves external data locations against the current directory (it has
// no way to take the model's folder), so a model checked from elsewhere would fail for files that
// are where they belong. While this guard lives, every location starts with '#', which the ONNX
// checker takes as data held elsewhere and does not look for; the external-data layer checks the
// real locations against the model's folder.
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
      if (entry.key() == "location") entries_.emplace_back(&entry, "#checked-by-the-external-data-layer");
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

// Deeper than ForEachGraph and the lint rules go; the ONNX library recurses once per level.
constexpr int kMaxSubgraphDepth = 64;

int SubgraphDepth(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, int depth) {
  int deepest = depth;
  for (const auto& node : nodes) {
    for (const auto& attribute : node.attribute()) {
      if (deepest > kMaxSubgraphDepth) return deepest;
      if (attribute.has_g()) deepest = std::max(deepest, SubgraphDepth(attribute.g().node(), depth + 1));
      for (const auto& graph : attribute.graphs()) deepest = std::max(deepest, SubgraphDepth(graph.node(), depth + 1));
    }
  }
  return deepest;
}

// Whether `tensor`'s raw_data holds exactly what its shape and type need. ONNX 1.12's ParseData
// (used by Reshape's, Slice's, ... inference on constant inputs) sizes its buffer by whole elements
// and copies every raw byte into it, so a length that is not a multiple of the element size
// overflows the heap (fuzz/regressions/).
bool RawDataFits(const onnx::TensorProto& tensor) {
  if (!tensor.has_raw_data() || tensor.data_location() == onnx::TensorProto::EXTERNAL) return true;
  const long long count = ElementCount(tensor);
  const int element_size = ElementSize(tensor.data_type());
  if (count < 0 || element_size == 0) return true;  // strings, unknown types: ParseData is not used for them
  unsigned long long expected = 0;
  return !__builtin_mul_overflow(static_cast<unsigned long long>(count), element_size, &expected) &&
         expected == tensor.raw_data().size();
}

std::string RawDataMismatch(const onnx::TensorProto& tensor, const std::string& what) {
  unsigned long long expected = 0;
  const bool overflows = __builtin_mul_overflow(static_cast<unsigned long long>(ElementCount(tensor)),
                                                ElementSize(tensor.data_type()), &expected);
  return fmt::format("{} holds {} bytes of raw data, but its shape [{}] of {} needs {}", what, tensor.raw_data().size(),
                     fmt::join(tensor.dims(), ", "), ElementTypeName(tensor.data_type()),
                     overflows ? std::string("more than 2^64") : std::to_string(expected));
}

std::string RawDataMismatch(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  for (int i = 0; i < nodes.size(); ++i) {
    for (const auto& attribute : nodes[i].attribute()) {
      const onnx::TensorProto* bad = attribute.has_t() && !RawDataFits(attribute.t()) ? &attribute.t() : nullptr;
      for (const auto& t : attribute.tensors()) {
        if (bad == nullptr && !RawDataFits(t)) bad = &t;
      }
      if (bad != nullptr) {
        return RawDataMismatch(*bad, fmt::format("attribute '{}' of node '{}' ({})", attribute.name(),
                                                 NodeDisplayName(nodes[i], i), nodes[i].op_type()));
      }
    }
  }
  return "";
}

// Why ONNX 1.12's shape inference must not run on `model`, or "" when it may.
std::string UnsafeForShapeInference(const onnx::ModelProto& model) {
  int depth = SubgraphDepth(model.graph().node(), 0);
  for (const auto& function : model.functions()) depth = std::max(depth, SubgraphDepth(function.node(), 1));
  if (depth > kMaxSubgraphDepth) return fmt::format("subgraphs nest more than {} levels deep", kMaxSubgraphDepth);
  std::string mismatch;
  ForEachGraph(model.graph(), [&](const onnx::GraphProto& graph, const std::string&) {
    for (const auto& initializer : graph.initializer()) {
      if (mismatch.empty() && !RawDataFits(initializer)) {
        mismatch = RawDataMismatch(initializer, fmt::format("initializer '{}'", initializer.name()));
      }
    }
    for (const auto& sparse : graph.sparse_initializer()) {
      for (const auto* part : {&sparse.values(), &sparse.indices()}) {
        if (mismatch.empty() && !RawDataFits(*part)) {
          mismatch = RawDataMismatch(*part, fmt::format("sparse initializer '{}'", sparse.values().name()));
        }
      }
    }
    if (mismatch.empty()) mismatch = RawDataMismatch(graph.node());
  });
  for (const auto& function : model.functions()) {
    if (mismatch.empty()) mismatch = RawDataMismatch(function.node());
  }
  return mismatch;
}

// An input rank an ONNX 1.12 inference function relies on without checking it.
struct RankPrecondition {
  std::string_view op_type;  ///< ai.onnx
  int below_version;         ///< schemas with SinceVersion() below this one
  int input;
  int rank;             ///< the rank it needs, or -1
  int same_rank_as;     ///< another input whose rank it must have, or -1
  bool shape_required;  ///< the function reads the shape even when it is unknown: skip the node then
};

constexpr int kAllVersions = 1 << 30;

constexpr std::array kRankPreconditions = std::to_array<RankPrecondition>({
    // Gemm-1 and Gemm-6 read dimension 1 of A and B whatever their rank (Gemm-7 checks it).
    {"Gemm", 7, 0, 2, -1, false},
    {"Gemm", 7, 1, 2, -1, false},
    // The convolutions take one kernel size per spatial axis of X from W's dimensions 2..: with
    // another rank, convPoolShapeInference and convTransposeShapeInference index past either shape.
    {"Conv", kAllVersions, 1, -1, 0, false},
    {"ConvInteger", kAllVersions, 1, -1, 0, false},
    {"QLinearConv", kAllVersions, 3, -1, 0, false},
    {"ConvTranspose", kAllVersions, 1, -1, 0, false},
    // MaxUnpool reads dimension 1 of the indices I, shape known or not.
    {"MaxUnpool", kAllVersions, 1, -1, 0, true},
});

int RankOf(const onnx::InferenceContext& ctx, int input) {
  if (static_cast<std::size_t>(input) >= ctx.getNumInputs()) return -1;
  const onnx::TypeProto* type = ctx.getInputType(input);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
  return type->tensor_type().shape().dim_size();
}

// False when the node must be left uninferred; throws (fails shape inference) when a rank is wrong.
bool CheckRank(const onnx::InferenceContext& ctx, const RankPrecondition& precondition) {
  const int rank = RankOf(ctx, precondition.input);
  if (rank < 0)
    return !precondition.shape_required || static_cast<std::size_t>(precondition.input) >= ctx.getNumInputs();
  if (precondition.rank >= 0 && rank != precondition.rank) {
    fail_shape_inference("input ", precondition.input, " has rank ", rank, "; ", precondition.op_type, "-",
                         precondition.below_version - 1, " and older need rank ", precondition.rank);
  }
  const int other = precondition.same_rank_as >= 0 ? RankOf(ctx, precondition.same_rank_as) : -1;
  if (other >= 0 && rank != other) {
    fail_shape_inference("input ", precondition.input, " has rank ", rank, " but input ", precondition.same_rank_as,
                         " has rank ", other, "; ", precondition.op_type, " needs them equal");
  }
  return !precondition.shape_required || other >= 0;
}

// ONNX 1.23's Einsum inference loops forever on a character of the left-hand side that is neither a
// letter nor part of "..." (it skips it without moving on): a space, or any other byte
// (fuzz/regressions/shape-einsum-equation-loops.onnx). Spaces are removed from equations before
// inference (StripEinsumSpaces); anything else fails inference cleanly here.
void CheckEinsumEquation(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* equation = ctx.getAttribute("equation");
  if (equation == nullptr) return;
  const std::string& text = equation->s();
  const std::string_view left = std::string_view(text).substr(0, text.find("->"));
  for (std::size_t i = 0; i < left.size(); ++i) {
    const char c = left[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == ',') continue;
    if (left.substr(i, 3) == "...") {
      i += 2;
      continue;
    }
    const bool printable = std::isprint(static_cast<unsigned char>(c)) != 0;
    fail_shape_inference(
        "the Einsum equation holds ",
        printable ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c)),
        " at position ", i, ": only letters, ',', '...' and '->' may appear");
  }
}

// Numpy and ONNX Runtime ignore spaces in Einsum equations ("ij, jk -> ik"); the ONNX library's
// inference does not (see CheckEinsumEquation). Removed from the check's own copy of the model.
void StripEinsumSpaces(onnx::GraphProto& graph, int depth = 0) {
  if (depth > kMaxSubgraphDepth) return;
  for (auto& node : *graph.mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (node.op_type() == "Einsum" && node.domain().empty() && attribute.name() == "equation") {
        std::erase_if(*attribute.mutable_s(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
      }
      if (attribute.has_g()) StripEinsumSpaces(*attribute.mutable_g(), depth + 1);
      for (auto& g : *attribute.mutable_graphs()) StripEinsumSpaces(g, depth + 1);
    }
  }
}

// ONNX 1.12's inference functions trust what the checker verifies, and shape inference runs on
// models the checker rejected: Scan-8's dereferences its required attribute num_scan_inputs
// unchecked, Gemm-6's indexes dimension 1 of a rank-1 input, Shape's data propagation dereferences
// the type of an input that no one produces, and each crashes the process (fuzz/regressions/).
// This registry gives InferShapes copies of the schemas whose functions first check those
// preconditions: a missing attribute or a wrong rank fails shape inference cleanly, and a node
// whose required input has no type is left uninferred (the checker and graph.undefined-value
// report it). It lives for one InferShapes call; GetSchema is const in the interface, hence the
// mutable cache.
class HardenedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    if (schema == nullptr) return nullptr;
    if (!schema->has_type_and_shape_inference_function() && !schema->has_data_propagation_function()) return schema;
    auto [it, inserted] = hardened_.try_emplace(schema);
    if (inserted) it->second = Harden(*schema);
    return it->second.get();
  }

 private:
  struct Preconditions {
    std::vector<std::string> required_attributes;
    std::vector<std::size_t> required_inputs;  ///< formal inputs that are neither optional nor variadic
    std::vector<RankPrecondition> ranks;
    bool einsum = false;  ///< ai.onnx Einsum: its equation must hold only what CheckEinsumEquation allows

    template <typename Context>
    bool InputsHaveTypes(const Context& ctx) const {
      for (std::size_t i : required_inputs) {
        if (i < ctx.getNumInputs() && ctx.getInputType(i) == nullptr) return false;
      }
      return true;
    }
  };

  static std::unique_ptr<onnx::OpSchema> Harden(const onnx::OpSchema& schema) {
    Preconditions preconditions;
    for (const auto& [name, attribute] : schema.attributes()) {
      if (attribute.required) preconditions.required_attributes.push_back(name);
    }
    for (std::size_t i = 0; i < schema.inputs().size(); ++i) {
      if (schema.inputs()[i].GetOption() == onnx::OpSchema::Single) preconditions.required_inputs.push_back(i);
    }
    for (const auto& precondition : kRankPreconditions) {
      if (schema.domain().empty() && schema.Name() == precondition.op_type &&
          schema.SinceVersion() < precondition.below_version) {
        preconditions.ranks.push_back(precondition);
      }
    }
    preconditions.einsum = schema.domain().empty() && schema.Name() == "Einsum";
    auto hardened = std::make_unique<onnx::OpSchema>(schema);
    if (schema.has_type_and_shape_inference_function()) {
      hardened->TypeAndShapeInferenceFunction(
          [infer = schema.GetTypeAndShapeInferenceFunction(), preconditions](onnx::InferenceContext& ctx) {
            for (const auto& name : preconditions.required_attributes) {
              if (ctx.getAttribute(name) == nullptr)
                fail_shape_inference("the required attribute '", name, "' is missing");
            }
            if (!preconditions.InputsHaveTypes(ctx)) return;
            for (const auto& precondition : preconditions.ranks) {
              if (!CheckRank(ctx, precondition)) return;
            }
            if (preconditions.einsum) CheckEinsumEquation(ctx);
            infer(ctx);
          });
    }
    if (schema.has_data_propagation_function()) {
      hardened->PartialDataPropagationFunction(
          [propagate = schema.GetDataPropagationFunction(), preconditions](onnx::DataPropagationContext& ctx) {
            if (preconditions.InputsHaveTypes(ctx)) propagate(ctx);
          });
    }
    return hardened;
  }

  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> hardened_;
};

// An exporter's arithmetic over input dims ("past_len + seq_len", "((32*batch)//batch)") names a size that
// the inputs determine: every identifier in it is an input dim, and it has at least one.
bool IsExpressionOf(const std::string& param, const std::set<std::string>& input_params) {
  static const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_.]*)");
  static const std::regex arithmetic(R"([A-Za-z0-9_.+\-*/%() ]+)");
  if (!std::regex_match(param, arithmetic)) return false;
  int names = 0;
  for (std::sregex_iterator it(param.begin(), param.end(), identifier), end; it != end; ++it, ++names) {
    if (!input_params.count(it->str())) return false;
  }
  return names > 0;
}

// The names the graph inputs give their dimensions: what output dimensions are judged against.
std::set<std::string> InputDimNames(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const auto& in : graph.input()) {
    for (const auto& d : DimsOf(in.type())) {
      if (!d.param.empty()) names.insert(d.param);
    }
  }
  return names;
}

// Strict inference with the hardened schemas; its failure as shape.inference-failed, else nullopt.
std::optional<Diagnosis> InferShapesInPlace(onnx::ModelProto& model) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/true);
    HardenedSchemaRegistry registry;
    StripEinsumSpaces(*model.mutable_graph());
    onnx::shape_inference::InferShapes(model, &registry, options);
  } catch (const std::exception& e) {
    const std::string message = FirstLine(e.what());
    return Diagnose("shape.inference-failed", message, LocationFromOnnxMessage(message));
  }
  return std::nullopt;
}

// Inferred value_info may say more about outputs than the declared outputs do.
std::map<std::string, const onnx::TypeProto*> InferredTypes(const onnx::GraphProto& graph) {
  std::map<std::string, const onnx::TypeProto*> inferred;
  for (const auto& vi : graph.value_info()) inferred[vi.name()] = &vi.type();
  for (const auto& out : graph.output()) inferred[out.name()] = &out.type();
  return inferred;
}

// Findings about one output's dimensions, `before` as declared and `after` as inferred: a dynamic
// dimension fixed, one left without size or name, and (one finding for all) names no input has.
void JudgeOutputDims(const std::string& output, const std::vector<Dim>& before, const std::vector<Dim>& after,
                     const std::set<std::string>& input_params, std::vector<Diagnosis>& diagnoses) {
  std::vector<std::string> unrelated;  // "dimension 0 is 'unk__0'", one finding per output
  std::vector<std::size_t> unrelated_dims;
  bool generated_name = false;
  for (std::size_t i = 0; i < after.size(); ++i) {
    Location where;
    where.output = output;
    where.dimension = std::to_string(i);
    const Dim& d = after[i];
    const bool was_dynamic = i < before.size() && !before[i].has_value;
    if (d.has_value) {
      if (was_dynamic && !input_params.empty()) {
        diagnoses.push_back(
            Diagnose("shape.output-dim-fixed",
                     fmt::format("output '{}' dimension {} is declared '{}' but shape inference fixes it to {}", output,
                                 i, DimText(before[i]), d.value),
                     where));
      }
    } else if (d.param.empty()) {
      diagnoses.push_back(Diagnose(
          "shape.output-dim-unknown",
          fmt::format("output '{}' dimension {} has neither a size nor a name after shape inference", output, i),
          where));
    } else if (!input_params.empty() && !input_params.count(d.param) && !IsExpressionOf(d.param, input_params)) {
      unrelated.push_back(fmt::format("{} is '{}'", i, d.param));
      unrelated_dims.push_back(i);
      // Exporter-generated names lose the link to the inputs: worth a warning.
      static const std::regex generated(R"(^(unk__\d+|.*_dim_\d+|[A-Za-z]+\d*_output_\d+.*)$)");
      if (std::regex_match(d.param, generated)) generated_name = true;
    }
  }
  if (unrelated.empty()) return;
  Location where;
  where.output = output;
  where.dimension = fmt::format("{}", fmt::join(unrelated_dims, ","));
  auto diag = Diagnose("shape.output-dim-unrelated",
                       fmt::format("output '{}' dimension {}: {} that no input dimension has (inputs use: {})", output,
                                   fmt::join(unrelated, ", dimension "), unrelated.size() == 1 ? "a name" : "names",
                                   fmt::join(input_params, ", ")),
                       where);
  diag.severity = generated_name ? Severity::kWarning : Severity::kInfo;
  diagnoses.push_back(std::move(diag));
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
                           fmt::format("the model imports ai.onnx opset {}; the ONNX library in ortkit knows up to {}",
                                       opset, KnownOnnxOpset())));
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
  const std::set<std::string> input_params = InputDimNames(model.graph());
  if (auto failed = InferShapesInPlace(model)) {
    outcome.diagnoses.push_back(std::move(*failed));
    return outcome;
  }
  const auto inferred = InferredTypes(model.graph());
  for (const auto& out : model.graph().output()) {
    JudgeOutputDims(out.name(), declared[out.name()], DimsOf(*inferred.at(out.name())), input_params,
                    outcome.diagnoses);
  }
  return outcome;
}

}  // namespace ortkit
