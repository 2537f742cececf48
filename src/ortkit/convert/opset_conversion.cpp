#include "ortkit/convert/opset_conversion.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <onnx/version_converter/convert.h>

#include "ortkit/check/onnx_checker.h"
#include "ortkit/model/graph_walk.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {
namespace {

namespace vc = onnx::version_conversion;
using onnx::Graph;
using onnx::Node;
using onnx::OpSetID;
using onnx::Symbol;
using onnx::Value;
using DataType = onnx::TensorProto_DataType;

/// Thrown by ortkit's adapters when a node's use of its operator has no form in the older opset.
class NotExpressible : public std::runtime_error {
 public:
  NotExpressible(const Node* node, const std::string& why)
      : std::runtime_error(why), node_(node->has_name() ? node->name() : ""), op_(node->kind().toString()) {}
  const std::string& node() const { return node_; }
  const std::string& op() const { return op_; }

 private:
  std::string node_;
  std::string op_;
};

/// What ortkit's adapters did, shared with ConvertOpset. One converter per conversion, used by one thread.
using RewriteLog = std::vector<NodeRewrite>;

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string NameOf(const Node* node) { return node->has_name() ? node->name() : std::string("(unnamed)"); }

void Record(RewriteLog& log, const Node* node, const std::string& op, std::string change) {
  log.push_back(NodeRewrite{NameOf(node), op, std::move(change)});
}

bool IsAbsent(const Value* value) { return value->node()->kind() == onnx::kUndefined || value->uniqueName().empty(); }

bool IsFloating(std::int32_t type) {
  return type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE || type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16;
}

/// A scalar of element type `type` (a floating type) holding `value`.
onnx::Tensor ScalarOf(std::int32_t type, double value) {
  onnx::Tensor t;
  t.elem_type() = type;
  t.sizes() = {};
  switch (type) {
    case onnx::TensorProto::DOUBLE: t.doubles().push_back(value); break;
    case onnx::TensorProto::FLOAT16: t.int32s().push_back(FloatToHalf(static_cast<float>(value))); break;
    case onnx::TensorProto::BFLOAT16: t.int32s().push_back(FloatToBFloat16(static_cast<float>(value))); break;
    default: t.floats().push_back(static_cast<float>(value)); break;
  }
  return t;
}

onnx::Tensor Int64s(const std::vector<std::int64_t>& values) {
  onnx::Tensor t;
  t.elem_type() = onnx::TensorProto::INT64;
  t.sizes() = {static_cast<std::int64_t>(values.size())};
  t.int64s() = values;
  return t;
}

Value* ConstantBefore(Graph& graph, Node* node, const onnx::Tensor& tensor) {
  Node* constant = graph.create(onnx::kConstant);
  constant->t_(onnx::kvalue, tensor);
  constant->insertBefore(node);
  constant->output()->setElemType(tensor.elem_type());
  std::vector<onnx::Dimension> dims;
  for (auto d : tensor.sizes()) dims.emplace_back(d);
  constant->output()->setSizes(dims);
  return constant->output();
}

/// Makes `replacement` stand where `node`'s only output stood, under the same name (a graph output
/// keeps its name; subgraphs that capture it by name still find it), and removes `node`.
Node* ReplaceOutput(Node* node, Value* replacement) {
  Value* old = node->output();
  const std::string name = old->uniqueName();
  old->replaceAllUsesWith(replacement);
  old->setUniqueName(name + "/replaced", false);
  replacement->copyMetadata(old);
  replacement->setUniqueName(name, false);
  node->destroy();
  return replacement->node();
}

/// Gelu-20 (no earlier version) as the formula it defines: 0.5x(1 + erf(x/sqrt 2)), or with
/// approximate="tanh" 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))). Erf, Tanh, Mul, Add exist in
/// every opset an exporter writes.
class GeluFormula final : public vc::Adapter {
 public:
  explicit GeluFormula(RewriteLog& log) : Adapter("Gelu", OpSetID(20), OpSetID(19)), log_(log) {}

  Node* adapt(std::shared_ptr<Graph> graph, Node* node) const override {
    Value* x = node->inputs().at(0);
    const std::int32_t type = x->elemType();
    if (!IsFloating(type)) {
      throw NotExpressible(node,
                           "its input's element type is not known (shape inference could not type it), "
                           "so the formula's constants cannot be typed");
    }
    const std::string approximate = node->hasAttribute(Symbol("approximate")) ? node->s(Symbol("approximate")) : "none";
    if (approximate != "none" && approximate != "tanh") {
      throw NotExpressible(node, fmt::format("approximate='{}' is not one Gelu-20 defines", approximate));
    }
    auto constant = [&](double v) { return ConstantBefore(*graph, node, ScalarOf(type, v)); };
    auto apply = [&](Symbol kind, Value* a, Value* b) {
      Node* n = graph->create(kind);
      n->addInput(a);
      if (b != nullptr) n->addInput(b);
      n->insertBefore(node);
      n->output()->setElemType(type);
      if (x->has_sizes()) n->output()->setSizes(x->sizes());
      return n->output();
    };
    Value* inner = nullptr;
    if (approximate == "tanh") {
      Value* cube = apply(onnx::kMul, apply(onnx::kMul, x, x), x);
      Value* sum = apply(onnx::kAdd, x, apply(onnx::kMul, cube, constant(0.044715)));
      inner = apply(onnx::kTanh, apply(onnx::kMul, sum, constant(std::sqrt(2.0 / M_PI))), nullptr);
    } else {
      inner = apply(Symbol("Erf"), apply(onnx::kMul, x, constant(M_SQRT1_2)), nullptr);
    }
    Value* y = apply(onnx::kMul, apply(onnx::kMul, x, apply(onnx::kAdd, inner, constant(1.0))), constant(0.5));
    Record(log_, node, "Gelu",
           fmt::format("Gelu-20 (approximate='{}') -> its formula with {}", approximate,
                       approximate == "tanh" ? "Tanh" : "Erf"));
    return ReplaceOutput(node, y);
  }

 private:
  RewriteLog& log_;
};

/// Shape-15's start/end as Shape-13 followed by a Slice over its result.
class ShapeStartEnd final : public vc::Adapter {
 public:
  explicit ShapeStartEnd(RewriteLog& log) : Adapter("Shape", OpSetID(15), OpSetID(14)), log_(log) {}

  Node* adapt(std::shared_ptr<Graph> graph, Node* node) const override {
    const bool has_start = node->hasAttribute(onnx::kstart);
    const bool has_end = node->hasAttribute(onnx::kend);
    if (!has_start && !has_end) return node;
    const std::int64_t start = has_start ? node->i(onnx::kstart) : 0;
    const std::int64_t end = has_end ? node->i(onnx::kend) : std::numeric_limits<std::int64_t>::max();
    node->removeAttribute(onnx::kstart);
    if (has_end) node->removeAttribute(onnx::kend);
    Node* slice = graph->create(onnx::kSlice);
    slice->addInput(node->output());
    slice->addInput(ConstantBefore(*graph, node, Int64s({start})));
    slice->addInput(ConstantBefore(*graph, node, Int64s({end})));
    slice->addInput(ConstantBefore(*graph, node, Int64s({0})));
    slice->insertAfter(node);
    slice->output()->setElemType(onnx::TensorProto::INT64);
    // Every reader of the Shape now reads the Slice, which takes over the output's name.
    Value* shape = node->output();
    const std::string name = shape->uniqueName();
    shape->replaceAllUsesWith(slice->output());
    slice->replaceInput(0, shape);
    shape->setUniqueName(name + "/full", false);
    slice->output()->setUniqueName(name, false);
    Record(log_, node, "Shape",
           fmt::format("Shape-15 (start={}{}) -> Shape + Slice", start, has_end ? fmt::format(", end={}", end) : ""));
    return slice;
  }

 private:
  RewriteLog& log_;
};

/// Split-18's num_outputs: dropped, with the split sizes made explicit when the axis has a known
/// size that the outputs do not divide evenly (Split-13 without sizes splits evenly).
class SplitNumOutputs final : public vc::Adapter {
 public:
  explicit SplitNumOutputs(RewriteLog& log) : Adapter("Split", OpSetID(18), OpSetID(17)), log_(log) {}

  Node* adapt(std::shared_ptr<Graph> graph, Node* node) const override {
    if (!node->hasAttribute(onnx::knum_outputs)) return node;
    const std::int64_t parts = node->i(onnx::knum_outputs);
    node->removeAttribute(onnx::knum_outputs);
    const bool has_sizes = node->inputs().size() >= 2 && !IsAbsent(node->inputs()[1]);
    if (has_sizes || parts <= 0) return node;
    const Value* input = node->inputs()[0];
    std::int64_t axis = node->hasAttribute(onnx::kaxis) ? node->i(onnx::kaxis) : 0;
    std::string change = "Split-18 num_outputs -> an even Split-13";
    if (input->has_sizes()) {
      const auto rank = static_cast<std::int64_t>(input->sizes().size());
      if (axis < 0) axis += rank;
      if (axis >= 0 && axis < rank && input->sizes()[axis].is_int && input->sizes()[axis].dim % parts != 0) {
        const std::int64_t length = input->sizes()[axis].dim;
        const std::int64_t chunk = (length + parts - 1) / parts;
        std::vector<std::int64_t> sizes(parts, chunk);
        sizes.back() = length - chunk * (parts - 1);
        if (sizes.back() < 0) throw NotExpressible(node, "num_outputs exceeds what the axis can be split into");
        node->addInput(ConstantBefore(*graph, node, Int64s(sizes)));
        change = fmt::format("Split-18 num_outputs={} -> Split-13 with sizes of {} along axis {}", parts, length, axis);
      }
    }
    Record(log_, node, "Split", change);
    return node;
  }

 private:
  RewriteLog& log_;
};

/// Pad-18's optional axes input has no form in Pad-13; without it the two are the same.
class PadWithoutAxes final : public vc::Adapter {
 public:
  PadWithoutAxes() : Adapter("Pad", OpSetID(18), OpSetID(17)) {}

  Node* adapt(std::shared_ptr<Graph>, Node* node) const override {
    if (node->inputs().size() >= 4 && !IsAbsent(node->inputs()[3])) {
      throw NotExpressible(node, "it pads the axes given by its 'axes' input, which Pad-13 does not have");
    }
    return node;
  }
};

/// GridSample-20 renamed its modes and took N-D inputs; GridSample-16 has 4-D and the old names.
class GridSampleModes final : public vc::Adapter {
 public:
  GridSampleModes() : Adapter("GridSample", OpSetID(20), OpSetID(19)) {}

  Node* adapt(std::shared_ptr<Graph>, Node* node) const override {
    const Value* x = node->inputs().at(0);
    if (!x->has_sizes() || x->sizes().size() != 4) {
      throw NotExpressible(node, "GridSample-16 takes 4-D inputs only, and this input's rank is not known to be 4");
    }
    if (node->hasAttribute(onnx::kmode)) {
      const std::string mode = node->s(onnx::kmode);
      if (mode == "linear") node->s_(onnx::kmode, "bilinear");
      if (mode == "cubic") node->s_(onnx::kmode, "bicubic");
    }
    return node;
  }
};

/// BatchNormalization-15 let scale/bias and mean/var differ in type from X; BatchNormalization-14 does not.
class BatchNormSameTypes final : public vc::Adapter {
 public:
  BatchNormSameTypes() : Adapter("BatchNormalization", OpSetID(15), OpSetID(14)) {}

  Node* adapt(std::shared_ptr<Graph>, Node* node) const override {
    const std::int32_t type = node->inputs().at(0)->elemType();
    for (const Value* input : node->inputs()) {
      if (input->elemType() != type) {
        throw NotExpressible(node,
                             "its parameters' element types differ from the input's, which "
                             "BatchNormalization-14 does not allow");
      }
    }
    return node;
  }
};

/// Attributes that arrived with the newer version, dropped when they hold their neutral value (an
/// int equal to it, or a list of ints all equal to it): Reshape-14's allowzero 0, LpPool-18's
/// ceil_mode 0 and dilations of ones, Cast-19's saturate (meaningful for float8 only, which the
/// older version refuses anyway). Any other value has no form in the older version.
class NeutralAttributes final : public vc::TypeRestriction {
 public:
  struct Neutral {
    const char* attribute;
    std::optional<std::int64_t> value;  ///< empty: any value is dropped
  };
  NeutralAttributes(const char* op, int from, std::vector<Neutral> neutral, const std::vector<DataType>& unallowed = {})
      : TypeRestriction(op, OpSetID(from), OpSetID(from - 1), unallowed), neutral_(std::move(neutral)) {}

  Node* adapt(std::shared_ptr<Graph> graph, Node* node) const override {
    TypeRestriction::adapt(graph, node);
    for (const Neutral& n : neutral_) {
      const Symbol key(n.attribute);
      if (!node->hasAttribute(key)) continue;
      if (n.value) {
        std::vector<std::int64_t> values;
        if (node->kindOf(key) == onnx::AttributeKind::i) values.push_back(node->i(key));
        if (node->kindOf(key) == onnx::AttributeKind::is) values = node->is(key);
        for (std::int64_t v : values) {
          if (v != *n.value) {
            throw NotExpressible(node, fmt::format("{} other than {} have no form before opset {}", n.attribute,
                                                   *n.value, initial_version().version()));
          }
        }
      }
      node->removeAttribute(key);
    }
    return node;
  }

 private:
  std::vector<Neutral> neutral_;
};

/// Reduce*-18 to 17: the stock adapter moves `axes` from the input back to an attribute but keeps
/// noop_with_empty_axes, which only ReduceSum has before opset 18 (PyTorch's exporter writes it, as 0).
/// Its 0 is what opset 17 does; 1 (no reduction when axes are empty) has no form there.
class ReduceAxesToAttribute final : public vc::AxesInputToAttribute {
 public:
  explicit ReduceAxesToAttribute(const char* op) : AxesInputToAttribute(op, OpSetID(18), OpSetID(17)) {}

  Node* adapt(std::shared_ptr<Graph> graph, Node* node) const override {
    const Symbol noop("noop_with_empty_axes");
    if (node->hasAttribute(noop) && node->i(noop) != 0) {
      throw NotExpressible(node, "noop_with_empty_axes = 1 has no form before opset 18");
    }
    node = AxesInputToAttribute::adapt(std::move(graph), node);
    if (node->hasAttribute(noop)) node->removeAttribute(noop);
    return node;
  }
};

/// The stock converter with ortkit's adapters added (registering one replaces the stock adapter
/// for the same step, such as "no previous version" for Gelu-20).
class Converter final : public vc::DefaultVersionConverter {
 public:
  explicit Converter(RewriteLog& log) {
    using vc::CompatibleAdapter;
    using vc::TypeRestriction;
    const std::vector<DataType> float8 = {onnx::TensorProto::FLOAT8E4M3FN, onnx::TensorProto::FLOAT8E4M3FNUZ,
                                          onnx::TensorProto::FLOAT8E5M2, onnx::TensorProto::FLOAT8E5M2FNUZ};
    std::vector<DataType> bfloat16_or_float8 = float8;
    bfloat16_or_float8.push_back(onnx::TensorProto::BFLOAT16);
    const std::vector<DataType> small_ints = {onnx::TensorProto::INT8, onnx::TensorProto::INT16,
                                              onnx::TensorProto::UINT8, onnx::TensorProto::UINT16};
    const std::vector<DataType> signed_ints = {onnx::TensorProto::INT8, onnx::TensorProto::INT16,
                                               onnx::TensorProto::INT32, onnx::TensorProto::INT64};
    const std::vector<DataType> bfloat16 = {onnx::TensorProto::BFLOAT16};
    const std::vector<DataType> halves = {onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16};

    // Opset 14: Add/Sub/Mul/Div gained 8- and 16-bit integers, Relu signed integers, CumSum halves.
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      registerAdapter(std::make_unique<TypeRestriction>(op, OpSetID(14), OpSetID(13), small_ints));
    }
    registerAdapter(std::make_unique<TypeRestriction>("Relu", OpSetID(14), OpSetID(13), signed_ints));
    registerAdapter(std::make_unique<TypeRestriction>("CumSum", OpSetID(14), OpSetID(13), halves));
    registerAdapter(
        std::make_unique<NeutralAttributes>("Reshape", 14, std::vector<NeutralAttributes::Neutral>{{"allowzero", 0}}));
    registerAdapter(std::make_unique<NeutralAttributes>("BatchNormalization", 14,
                                                        std::vector<NeutralAttributes::Neutral>{{"training_mode", 0}}));
    registerAdapter(std::make_unique<CompatibleAdapter>("Identity", OpSetID(14), OpSetID(13)));
    // Opset 15: Pow gained bfloat16, Shape start/end, BatchNormalization mixed parameter types.
    registerAdapter(std::make_unique<TypeRestriction>("Pow", OpSetID(15), OpSetID(14), bfloat16));
    registerAdapter(std::make_unique<ShapeStartEnd>(log));
    registerAdapter(std::make_unique<BatchNormSameTypes>());
    // Opset 16: optional types in Identity, If, Loop (tensors pass unchanged).
    for (const char* op : {"Identity", "If", "Loop"}) {
      registerAdapter(std::make_unique<CompatibleAdapter>(op, OpSetID(16), OpSetID(15)));
    }
    // Opset 18: Pad's axes input, Split's num_outputs, LpPool's ceil_mode.
    registerAdapter(std::make_unique<PadWithoutAxes>());
    registerAdapter(std::make_unique<SplitNumOutputs>(log));
    registerAdapter(std::make_unique<NeutralAttributes>(
        "LpPool", 18, std::vector<NeutralAttributes::Neutral>{{"ceil_mode", 0}, {"dilations", 1}}));
    // Opset 19: AveragePool's dilations, Cast's and CastLike's saturate (and float8 types).
    for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                           "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
      registerAdapter(std::make_unique<ReduceAxesToAttribute>(op));
    }
    registerAdapter(std::make_unique<NeutralAttributes>("AveragePool", 19,
                                                        std::vector<NeutralAttributes::Neutral>{{"dilations", 1}}));
    for (const char* op : {"Cast", "CastLike"}) {
      registerAdapter(std::make_unique<NeutralAttributes>(
          op, 19, std::vector<NeutralAttributes::Neutral>{{"saturate", std::nullopt}}, float8));
    }
    // Opset 20: Gelu is new, ConstantOfShape gained bfloat16 and float8, GridSample renamed its modes.
    registerAdapter(std::make_unique<GeluFormula>(log));
    registerAdapter(std::make_unique<TypeRestriction>("ConstantOfShape", OpSetID(20), OpSetID(19), bfloat16_or_float8));
    registerAdapter(std::make_unique<GridSampleModes>());
    // Opset 22: GlobalMaxPool gained bfloat16.
    registerAdapter(std::make_unique<TypeRestriction>("GlobalMaxPool", OpSetID(22), OpSetID(21), bfloat16));
  }
};

int DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return static_cast<int>(opset.version());
  }
  return 0;
}

/// Names of the nodes running `op_type` (ai.onnx), in every graph: "'a', 'b' and 3 more".
std::string NodesRunning(const onnx::ModelProto& model, const std::string& op_type, Location* first) {
  std::vector<std::string> names;
  int unnamed = 0;
  ForEachGraph(model.graph(), [&](const onnx::GraphProto& graph, const std::string&) {
    for (const auto& node : graph.node()) {
      if (node.op_type() != op_type || !(node.domain().empty() || node.domain() == "ai.onnx")) continue;
      if (node.name().empty()) {
        ++unnamed;
      } else {
        names.push_back(node.name());
      }
    }
  });
  if (first != nullptr) {
    first->op_type = op_type;
    if (!names.empty()) first->node = names.front();
  }
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) {
    text += fmt::format("{}'{}'", i == 0 ? "" : ", ", names[i]);
  }
  const std::size_t more = (names.size() > 3 ? names.size() - 3 : 0) + static_cast<std::size_t>(unnamed);
  if (text.empty()) return more == 1 ? "an unnamed node" : fmt::format("{} unnamed nodes", more);
  if (more > 0) text += fmt::format(" and {} more", more);
  return (names.size() == 1 && more == 0 ? "node " : "nodes ") + text;
}

/// The operator an error of the stock converter is about, when its message names one.
std::string OperatorInMessage(const std::string& message) {
  static const std::regex patterns[] = {std::regex(R"(No Previous Version of (\w+))"),
                                        std::regex(R"(No Adapter (?:To|From) Version \$?\d+ for (\w+))"),
                                        std::regex(R"(No Adapter For (\w+))"), std::regex(R"(operator '(\w+)')")};
  std::smatch match;
  for (const auto& pattern : patterns) {
    if (std::regex_search(message, match, pattern)) return match[1];
  }
  return "";
}

/// The IR version each element type first appeared in (float8: 9, 4-bit: 10, float4: 11, ...).
int IrVersionForType(int type) {
  if (type >= onnx::TensorProto::FLOAT8E4M3FN && type <= onnx::TensorProto::FLOAT8E5M2FNUZ) return 9;
  if (type == onnx::TensorProto::UINT4 || type == onnx::TensorProto::INT4) return 10;
  if (type == onnx::TensorProto::FLOAT4E2M1) return 11;
  if (type > onnx::TensorProto::FLOAT4E2M1) return 12;
  return 3;
}

/// The newest element type the model's values, initializers and Cast targets use, by the IR it needs.
std::pair<int, int> NewestType(const onnx::ModelProto& model) {
  std::pair<int, int> newest{3, 0};  // IR, type
  auto note = [&](int type) {
    const int ir = IrVersionForType(type);
    if (ir > newest.first) newest = {ir, type};
  };
  ForEachGraph(model.graph(), [&](const onnx::GraphProto& graph, const std::string&) {
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
      for (const auto& value : *list) {
        if (value.type().has_tensor_type()) note(value.type().tensor_type().elem_type());
      }
    }
    for (const auto& tensor : graph.initializer()) note(tensor.data_type());
    for (const auto& node : graph.node()) {
      for (const auto& attribute : node.attribute()) {
        if (attribute.name() == "to" && node.op_type() == "Cast") note(static_cast<int>(attribute.i()));
        if (attribute.has_t()) note(attribute.t().data_type());
      }
    }
  });
  return newest;
}

/// Whether the model has an ai.onnx opset to convert from and `opset` is one the converter reaches;
/// when not, the reason is added to `outcome`.
bool CanConvert(int opset, ConversionOutcome& outcome) {
  const Location file;
  if (outcome.from_opset == 0) {
    outcome.diagnoses.push_back(Diagnose(
        "convert.no-adapter", "the model imports no ai.onnx opset, so there is no opset to convert from", file));
    return false;
  }
  if (opset < 7 || opset > KnownOnnxOpset()) {
    outcome.diagnoses.push_back(Diagnose(
        "convert.no-adapter",
        fmt::format("opset {} is outside what the converter handles (7 to {})", opset, KnownOnnxOpset()), file));
    return false;
  }
  return true;
}

/// The IR version to write: the one asked for, else the opset's own, never moving against the conversion.
int TargetIrVersion(const ConversionOptions& options, int from_opset, int from_ir) {
  const int for_opset = IrVersionForOpset(options.opset);
  if (options.ir_version > 0) return options.ir_version;
  if (options.opset <= from_opset) return std::min(from_ir, for_opset);
  return std::max(from_ir, for_opset);
}

/// A warning for each imported domain the converter leaves alone.
void WarnOfCustomDomains(const onnx::ModelProto& model, ConversionOutcome& outcome) {
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx" || opset.domain() == "ai.onnx.ml") continue;
    outcome.diagnoses.push_back(
        Diagnose("convert.custom-domain",
                 fmt::format("nodes of domain '{}' (opset {}) are kept as they are: the converter knows ai.onnx only",
                             opset.domain(), opset.version()),
                 Location{}));
  }
}

/// Runs the converter on `typed` and keeps its result in `outcome` when the target IR version can
/// hold it. Throws what the converter and the adapters throw.
void ConvertAndCheckIr(const onnx::ModelProto& typed, const ConversionOptions& options, ConversionOutcome& outcome) {
  const Location file;
  const int for_opset = IrVersionForOpset(options.opset);
  RewriteLog log;
  Converter converter(log);
  onnx::ModelProto converted = converter.convert_version(typed, OpSetID(outcome.from_opset), OpSetID(options.opset));
  converted.set_ir_version(outcome.to_ir);
  outcome.rewrites = std::move(log);
  const auto [type_ir, type] = NewestType(converted);
  if (type_ir > outcome.to_ir) {
    outcome.diagnoses.push_back(
        Diagnose("convert.ir-too-low",
                 fmt::format("the model uses {} tensors, which IR version {} cannot hold (they need {})",
                             DataTypeName(static_cast<ortkit::DataType>(type)), outcome.to_ir, type_ir),
                 file));
    return;
  }
  if (outcome.to_ir < for_opset && options.ir_version > 0) {
    outcome.diagnoses.push_back(
        Diagnose("convert.ir-too-low",
                 fmt::format("opset {} needs IR version {} or newer; --ir-version {} was asked for", options.opset,
                             for_opset, options.ir_version),
                 file));
    return;
  }
  outcome.model = std::move(converted);
}

/// An ortkit adapter's refusal: the node's use of its operator has no form in `opset`.
Diagnosis NotExpressibleDiagnosis(const NotExpressible& e, int opset) {
  Location where;
  where.node = e.node();
  where.op_type = e.op();
  return Diagnose("convert.not-expressible",
                  fmt::format("{} ({}) has no form in opset {}: {}",
                              e.node().empty() ? std::string("an unnamed node") : fmt::format("node '{}'", e.node()),
                              e.op(), opset, e.what()),
                  where);
}

/// The stock converter's failure, with the nodes running the operator its message names.
Diagnosis ConverterFailureDiagnosis(const onnx::ModelProto& model, const std::exception& e, int from_opset, int opset) {
  // ONNX's assertions read "/path/to/BaseConverter.h:66: adapter_lookup: Assertion `false` failed: No Adapter ...".
  std::string message = FirstLine(e.what());
  if (auto failed = message.find("failed: "); failed != std::string::npos) message = message.substr(failed + 8);
  const std::string op = OperatorInMessage(message);
  Location where;
  if (op.empty()) {
    return Diagnose(
        "convert.no-adapter",
        fmt::format("ONNX's version converter stopped between opsets {} and {}: {}", from_opset, opset, message),
        where);
  }
  const std::string nodes = NodesRunning(model, op, &where);
  const bool types = message.find("unallowed") != std::string::npos;
  return Diagnose(types ? "convert.not-expressible" : "convert.no-adapter",
                  fmt::format("{} ({}) cannot be converted from opset {} to {}: {} (ONNX's version converter: \"{}\")",
                              nodes, op, from_opset, opset,
                              types ? "it uses an element type the older version of the operator does not accept"
                                    : "neither ONNX's converter nor ortkit has an adapter for it",
                              message),
                  where);
}

}  // namespace

int IrVersionForOpset(int opset) {
  // ONNX's own table (onnx.helper.VERSION_TABLE): the IR version of the first release with each opset.
  static const std::map<int, int> kFirstIr = {{1, 3},  {7, 3},   {9, 4},   {10, 5},  {11, 6},  {12, 7}, {15, 8},
                                              {19, 9}, {21, 10}, {23, 11}, {24, 12}, {25, 13}, {28, 14}};
  auto it = kFirstIr.upper_bound(opset);
  return it == kFirstIr.begin() ? 3 : std::prev(it)->second;
}

ConversionOutcome ConvertOpset(const onnx::ModelProto& model, const ConversionOptions& options) {
  ConversionOutcome outcome;
  outcome.from_opset = DefaultOpset(model);
  outcome.to_opset = options.opset;
  outcome.from_ir = static_cast<int>(model.ir_version());
  if (!CanConvert(options.opset, outcome)) return outcome;
  outcome.to_ir = TargetIrVersion(options, outcome.from_opset, outcome.from_ir);

  // Types for the adapters that need them (Gelu's constants, type restrictions).
  onnx::ModelProto typed = model;
  (void)RunShapeInference(typed);
  WarnOfCustomDomains(model, outcome);
  try {
    ConvertAndCheckIr(typed, options, outcome);
  } catch (const NotExpressible& e) {
    outcome.diagnoses.push_back(NotExpressibleDiagnosis(e, options.opset));
  } catch (const std::exception& e) {
    outcome.diagnoses.push_back(ConverterFailureDiagnosis(model, e, outcome.from_opset, options.opset));
  }
  return outcome;
}

}  // namespace ortkit
