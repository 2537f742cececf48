#include "ortkit/tensor/synthesis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/text.h"
#include "ortkit/core/units.h"

namespace ortkit {
namespace {

// Ops through which an input's values reach a consumer unchanged in meaning (indices stay indices).
bool PassesValuesThrough(const std::string& op) {
  static const std::set<std::string> kOps = {"Cast",   "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity",
                                             "Expand", "Transpose", "Slice",   "Concat",  "Tile",    "CastLike"};
  return kOps.count(op) > 0;
}

bool IsComparison(const std::string& op) {
  return op == "Equal" || op == "Greater" || op == "Less" || op == "GreaterOrEqual" || op == "LessOrEqual";
}

double FirstValue(const onnx::TensorProto& t) {
  if (t.float_data_size() > 0) return t.float_data(0);
  if (t.int64_data_size() > 0) return static_cast<double>(t.int64_data(0));
  if (t.int32_data_size() > 0) return t.int32_data(0);
  if (t.double_data_size() > 0) return t.double_data(0);
  const std::string& raw = t.raw_data();
  auto read = [&](auto sample) -> double {
    using T = decltype(sample);
    if (raw.size() < sizeof(T)) return 0;
    T v;
    std::memcpy(&v, raw.data(), sizeof(T));
    return static_cast<double>(v);
  };
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: return read(float{});
    case onnx::TensorProto::DOUBLE: return read(double{});
    case onnx::TensorProto::INT64: return read(std::int64_t{});
    case onnx::TensorProto::INT32: return read(std::int32_t{});
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8: return read(std::uint8_t{});
    case onnx::TensorProto::INT8: return read(std::int8_t{});
    default: return 0;
  }
}

struct Use {
  const onnx::NodeProto* node;
  int input_index;
};

// The graph's constant values (initializers and Constant nodes) and, for every value, the nodes reading it.
struct GraphUses {
  std::unordered_map<std::string, const onnx::TensorProto*> constants;
  std::unordered_map<std::string, std::vector<Use>> uses;

  const onnx::TensorProto* ConstantNamed(const std::string& name) const {
    auto it = constants.find(name);
    return it == constants.end() ? nullptr : it->second;
  }
};

GraphUses IndexUses(const onnx::GraphProto& graph) {
  GraphUses index;
  for (const auto& init : graph.initializer()) index.constants[init.name()] = &init;
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && node.output_size() == 1) {
      for (const auto& attr : node.attribute()) {
        if (attr.name() == "value" && attr.has_t()) index.constants[node.output(0)] = &attr.t();
      }
    }
    for (int i = 0; i < node.input_size(); ++i) index.uses[node.input(i)].push_back({&node, i});
  }
  return index;
}

// What the consumers of one input's values say about it.
struct ObservedUse {
  std::int64_t limit = -1;  // rows of the smallest table it indexes
  std::string table;
  double choice = 0;  // the constant it is first compared against
  bool has_choice = false;
  bool one_minus = false;  // 1 - mask: the additive mask pattern, (1 - mask) * large negative
};

// The rows of the table a Gather reads at the gathered axis; 0 when the table is not a constant.
std::int64_t GatheredRows(const onnx::NodeProto& gather, const GraphUses& index) {
  const onnx::TensorProto* table = index.ConstantNamed(gather.input(0));
  if (table == nullptr || table->dims_size() == 0) return 0;
  std::int64_t axis = 0;
  for (const auto& a : gather.attribute()) {
    if (a.name() == "axis") axis = a.i();
  }
  if (axis < 0) axis += table->dims_size();
  if (axis < 0 || axis >= table->dims_size()) return 0;
  return table->dims(static_cast<int>(axis));
}

// Notes what one use of a value derived from the input says; true when its outputs carry the values on.
bool ObserveUse(const Use& use, const GraphUses& index, ObservedUse& observed) {
  const auto& node = *use.node;
  if (node.op_type() == "Gather" && use.input_index == 1 && node.input_size() > 0) {
    const std::int64_t rows = GatheredRows(node, index);
    if (rows > 0 && (observed.limit < 0 || rows < observed.limit)) {
      observed.limit = rows;
      observed.table = node.input(0);
    }
  } else if (IsComparison(node.op_type()) && node.input_size() == 2) {
    const onnx::TensorProto* other = index.ConstantNamed(node.input(1 - use.input_index));
    if (other != nullptr && !observed.has_choice) {
      observed.has_choice = true;
      observed.choice = FirstValue(*other);
    }
  } else if (node.op_type() == "Sub" && use.input_index == 1) {
    const onnx::TensorProto* minuend = index.ConstantNamed(node.input(0));
    observed.one_minus = observed.one_minus || (minuend != nullptr && FirstValue(*minuend) == 1);
  } else if (PassesValuesThrough(node.op_type()) && use.input_index == 0) {
    return true;
  }
  return false;
}

// Breadth-first over values derived from the input without changing meaning; bounded.
ObservedUse ObserveInput(const std::string& input, const GraphUses& index) {
  ObservedUse observed;
  std::vector<std::string> frontier = {input};
  std::set<std::string> seen = {input};
  for (std::size_t k = 0; k < frontier.size() && k < 256; ++k) {
    auto uses = index.uses.find(frontier[k]);
    if (uses == index.uses.end()) continue;
    for (const Use& use : uses->second) {
      if (!ObserveUse(use, index, observed)) continue;
      for (const auto& out : use.node->output()) {
        if (seen.insert(out).second) frontier.push_back(out);
      }
    }
  }
  return observed;
}

// The hint for `input` from what its uses say; nullopt when they say nothing.
std::optional<ValueHint> HintFor(const onnx::ValueInfoProto& input, const ObservedUse& observed) {
  // A mask compared with 0 (`mask == 0` selecting -inf) must not become all zeros: every position
  // masked out makes a healthy attention emit NaN. Masks are recognised by name, or as a tensor of
  // rank 2 or more compared with 0; control scalars keep the value their comparison names.
  const int rank = input.type().tensor_type().has_shape() ? input.type().tensor_type().shape().dim_size() : -1;
  const int type = input.type().tensor_type().elem_type();
  const bool whole_numbers = type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::FLOAT16 &&
                             type != onnx::TensorProto::DOUBLE && type != onnx::TensorProto::BFLOAT16;
  const bool mask_like = NameHas(input.name(), {"mask"}) ||
                         (observed.has_choice && observed.choice == 0 && rank >= 2) ||
                         (observed.one_minus && whole_numbers && rank >= 2);
  ValueHint hint;
  if (input.name() == "logits_to_keep" || input.name() == "num_logits_to_keep") {
    // Transformers' meaning: keep the logits of that many final positions, 0 for all of them; any other
    // value is wrong for a sequence shorter than it (graph.logits-to-keep-input).
    hint.kind = ValueHint::Kind::kChoice;
    hint.choice = 0;
    hint.reason = "Transformers' logits_to_keep: 0 keeps the logits of every position";
  } else if (observed.limit > 0) {
    hint.kind = ValueHint::Kind::kIndices;
    hint.index_limit = observed.limit;
    hint.reason = fmt::format("indices into '{}' ({} rows)", observed.table, observed.limit);
  } else if (mask_like) {
    hint.kind = ValueHint::Kind::kOnes;
    hint.reason = observed.has_choice
                      ? fmt::format("a mask (compared with {}): all ones, nothing masked out", observed.choice)
                  : observed.one_minus ? "a mask (1 - mask biases the scores): all ones, nothing masked out"
                                       : "a mask: all ones";
  } else if (observed.has_choice) {
    hint.kind = ValueHint::Kind::kChoice;
    hint.choice = observed.choice;
    hint.reason = fmt::format("compared against the constant {}", observed.choice);
  } else {
    return std::nullopt;
  }
  return hint;
}

// "2" for 2, "-0.5" for -0.5: as Python's str() of a number would write it, without a trailing ".0".
std::string NumberAsText(double v) {
  if (v == std::floor(v) && std::abs(v) < 9.0e15) return fmt::format("{}", static_cast<std::int64_t>(v));
  return fmt::format("{}", v);
}

}  // namespace

std::map<std::string, ValueHint> AnalyzeInputValues(const onnx::ModelProto& model) {
  const GraphUses index = IndexUses(model.graph());
  std::map<std::string, ValueHint> hints;
  for (const auto& input : model.graph().input()) {
    if (index.constants.count(input.name())) continue;
    if (auto hint = HintFor(input, ObserveInput(input.name(), index))) hints[input.name()] = std::move(*hint);
  }
  return hints;
}

int UnnamedAxisOf(const std::string& symbol) {
  const auto colon = symbol.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == symbol.size() || colon + 4 < symbol.size()) return -1;
  int axis = 0;
  for (std::size_t i = colon + 1; i < symbol.size(); ++i) {
    if (symbol[i] < '0' || symbol[i] > '9') return -1;
    axis = axis * 10 + (symbol[i] - '0');
  }
  return axis;
}

std::vector<TensorSpec> NameUnnamedAxes(std::vector<TensorSpec> specs) {
  for (auto& spec : specs) {
    for (std::size_t i = 0; i < spec.dims.size(); ++i) {
      if (!spec.dims[i].fixed() && spec.dims[i].symbol.empty())
        spec.dims[i].symbol = fmt::format("{}:{}", spec.name, i);
    }
  }
  return specs;
}

std::int64_t DefaultDimSize(const std::string& symbol, std::size_t axis) {
  // Unnamed axes start at 1: two inputs' unnamed batches agree, and the size search grows what must grow.
  if (UnnamedAxisOf(symbol) >= 0) return 1;
  if (NameHas(symbol, {"batch", "bs"}) || symbol == "N" || symbol == "n" || (symbol.empty() && axis == 0)) return 1;
  if (NameHas(symbol, {"seq", "len", "token", "time", "step", "sentence", "frames"})) return 16;
  if (NameHas(symbol, {"height", "width"}) || symbol == "H" || symbol == "W" || symbol == "h" || symbol == "w")
    return 32;
  return 4;
}

Status ValidatePlan(const InputPlan& plan, const std::vector<TensorSpec>& inputs) {
  std::set<std::string> symbols;
  for (const auto& spec : inputs) {
    for (const auto& d : spec.dims) {
      if (!d.fixed() && !d.symbol.empty()) symbols.insert(d.symbol);
    }
  }
  for (const auto& [name, value] : plan.dims) {
    if (!symbols.count(name)) {
      return MakeError(ErrorKind::kInvalidArgument,
                       symbols.empty()
                           ? fmt::format("--dim {}={}: the model has no symbolic input dimensions", name, value)
                           : fmt::format("--dim {}={}: no input has a dimension named '{}'; symbolic dimensions: {}",
                                         name, value, name, fmt::join(symbols, ", ")));
    }
    if (value < 0)
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("--dim {}={}: sizes must be >= 0", name, value));
  }
  for (const auto& [name, shape] : plan.shapes) {
    auto spec =
        std::find_if(inputs.begin(), inputs.end(), [&input = name](const TensorSpec& s) { return s.name == input; });
    if (spec == inputs.end()) {
      std::vector<std::string> names;
      for (const auto& s : inputs) names.push_back(s.name);
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("--shape {}: the model has no input named '{}'; inputs: {}", name, name, fmt::join(names, ", ")));
    }
    if (spec->dims.size() != shape.size()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--shape {}={}: the input has rank {} ({})", name, ShapeToString(shape),
                                   spec->dims.size(), spec->Describe()));
    }
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < 0)
        return MakeError(ErrorKind::kInvalidArgument, fmt::format("--shape {}: negative dimension", name));
      if (spec->dims[i].fixed() && spec->dims[i].value != shape[i]) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--shape {}={}: dimension {} is fixed to {} ({})", name, ShapeToString(shape), i,
                                     spec->dims[i].value, spec->Describe()));
      }
    }
  }
  // Sizes given that no input could be made at are refused before anything runs: a command would
  // otherwise find no inputs and report what it could not run as if it had passed.
  // Only the inputs the plan sizes: others may come from files, whatever their fixed sizes.
  auto sized = [&](const TensorSpec& spec) {
    if (!spec.is_tensor) return false;
    if (plan.shapes.count(spec.name)) return true;
    return std::any_of(spec.dims.begin(), spec.dims.end(),
                       [&](const DimSpec& d) { return !d.fixed() && plan.dims.count(d.symbol); });
  };
  std::vector<TensorSpec> planned;
  std::copy_if(inputs.begin(), inputs.end(), std::back_inserter(planned), sized);
  return CheckSynthesisSize(planned, plan);
}

Result<std::vector<std::int64_t>> ResolveShape(const TensorSpec& spec, const InputPlan& plan) {
  if (auto it = plan.shapes.find(spec.name); it != plan.shapes.end()) return it->second;
  std::vector<std::int64_t> shape;
  for (std::size_t i = 0; i < spec.dims.size(); ++i) {
    const DimSpec& d = spec.dims[i];
    auto size_of = [&](const std::string& symbol) {
      auto it = plan.dims.find(symbol);
      return !symbol.empty() && it != plan.dims.end() ? it->second : DefaultDimSize(symbol, i);
    };
    if (d.fixed()) {
      shape.push_back(d.value);
    } else if (auto sum = plan.dim_sums.find(d.symbol); !d.symbol.empty() && sum != plan.dim_sums.end()) {
      std::int64_t total = 0;
      for (const auto& part : sum->second) total += size_of(part);
      shape.push_back(total);
    } else {
      shape.push_back(size_of(d.symbol));
    }
  }
  return shape;
}

// Sizes every input before any is allocated, against plan.max_bytes.
Status CheckSynthesisSize(const std::vector<TensorSpec>& specs, const InputPlan& plan) {
  std::uint64_t total = 0;
  std::string largest;
  std::uint64_t largest_bytes = 0;
  for (const auto& spec : specs) {
    if (!spec.is_tensor) {
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("input '{}' is not a tensor (sequence/map/optional); give it with --input", spec.name));
    }
    ORTKIT_ASSIGN_OR_RETURN(auto shape, ResolveShape(spec, plan));
    const DataTypeInfo* info = FindDataType(spec.type);
    auto count = ElementCountOf(shape);
    const std::uint64_t element = info != nullptr && info->size > 0 ? info->size : 8;  // strings: a pointer or more
    const bool huge = !count.ok() || static_cast<std::uint64_t>(*count) > UINT64_MAX / element;
    const std::uint64_t bytes = huge ? UINT64_MAX : static_cast<std::uint64_t>(*count) * element;
    if (bytes >= largest_bytes) {
      largest_bytes = bytes;
      largest = fmt::format("'{}' {}{}", spec.name, DataTypeName(spec.type), ShapeToString(shape));
    }
    total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
  }
  if (total <= plan.max_bytes) return OkStatus();
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("the synthesised inputs would take {} (the largest, {}, {}), over ortkit's limit of {} "
                               "for made-up inputs: give smaller sizes with --dim or --shape, or the inputs "
                               "themselves with --input",
                               total == UINT64_MAX ? std::string("more than 16 EiB") : HumanBytes(total), largest,
                               largest_bytes == UINT64_MAX ? std::string("beyond counting") : HumanBytes(largest_bytes),
                               HumanBytes(plan.max_bytes)));
}

namespace {

// The length an input of lengths describes (tashkeel's input_lengths[batch] beside char_inputs[batch, seq],
// a GRU's sequence_lens): the size of the first dynamic axis after the batch of another input with the same
// batch (the same symbol, or the same fixed size). Lengths made
// up at random would include 0, an empty text whose masked softmax is NaN, or exceed the sequence; the
// sequence's own size is what a caller that pads nothing passes. Nothing for any other input.
std::optional<std::int64_t> DescribedLength(const TensorSpec& spec, const std::vector<TensorSpec>& specs,
                                            const InputPlan& plan) {
  const DataTypeInfo* info = FindDataType(spec.type);
  if (info == nullptr || info->is_float || spec.type == DataType::kBool || spec.dims.size() != 1 ||
      !NameHas(spec.name, {"length", "lens"}))
    return std::nullopt;
  const DimSpec& rows = spec.dims[0];
  for (const auto& other : specs) {
    if (&other == &spec || other.dims.size() < 2) continue;
    const DimSpec& batch = other.dims[0];
    const bool same =
        rows.fixed() ? batch.fixed() && batch.value == rows.value : !batch.fixed() && batch.symbol == rows.symbol;
    if (!same) continue;
    for (std::size_t axis = 1; axis < other.dims.size(); ++axis) {
      if (other.dims[axis].fixed()) continue;
      auto shape = ResolveShape(other, plan);
      if (shape.ok()) return (*shape)[axis];
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<NamedTensor>> SynthesizeInputs(const std::vector<TensorSpec>& specs,
                                                  const std::map<std::string, ValueHint>& hints,
                                                  const InputPlan& plan) {
  std::vector<NamedTensor> out;
  ORTKIT_RETURN_IF_ERROR(CheckSynthesisSize(specs, plan));
  for (const auto& spec : specs) {
    ORTKIT_ASSIGN_OR_RETURN(auto shape, ResolveShape(spec, plan));
    ORTKIT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(spec.type, shape));
    if (!hints.count(spec.name)) {
      if (const auto length = DescribedLength(spec, specs, plan)) {
        for (std::int64_t i = 0; i < t.element_count(); ++i) t.SetFromDouble(i, static_cast<double>(*length));
        out.push_back({spec.name, std::move(t)});
        continue;
      }
    }
    std::mt19937_64 rng(plan.seed * 1000003u + std::hash<std::string>{}(spec.name));
    const ValueHint hint = hints.count(spec.name) ? hints.at(spec.name) : ValueHint{};
    const DataTypeInfo* info = FindDataType(spec.type);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> positive(0.1, 1.0);
    // An integer scalar is often a step, a length or a count: 0 there makes some kernels divide
    // by zero (ONNX Runtime's STFT with frame_step 0 dies of SIGFPE), so scalars start at 1.
    std::uniform_int_distribution<std::int64_t> small(t.element_count() == 1 ? 1 : 0, 3);
    std::uniform_int_distribution<std::int64_t> index(0, std::max<std::int64_t>(0, hint.index_limit - 1));
    for (std::int64_t i = 0; i < t.element_count(); ++i) {
      double v;
      switch (hint.kind) {
        case ValueHint::Kind::kIndices: v = static_cast<double>(index(rng)); break;
        case ValueHint::Kind::kOnes: v = 1; break;
        case ValueHint::Kind::kChoice: v = hint.choice; break;
        case ValueHint::Kind::kNormal:
        default:
          // Booleans are true: a mask keeps every position and a Loop's condition lets the loop run (false
          // runs it 0 times, and a healthy Loop then returns empty scan outputs).
          if (spec.type == DataType::kBool)
            v = 1;
          else if (info != nullptr && info->is_float)
            v = plan.positive_floats ? positive(rng) : normal(rng);
          else if (plan.covering_integers && t.element_count() > 1)
            v = static_cast<double>(i % 4);
          else
            v = static_cast<double>(small(rng));
      }
      // Strings are whole numbers written as text ("0" to "3"): a Cast from string parses them as a number
      // of any type, and a label lookup treats them as unknown labels, as it would any other word.
      if (t.is_string())
        t.strings()[static_cast<std::size_t>(i)] = NumberAsText(v);
      else
        t.SetFromDouble(i, v);
    }
    out.push_back({spec.name, std::move(t)});
  }
  return out;
}

}  // namespace ortkit
