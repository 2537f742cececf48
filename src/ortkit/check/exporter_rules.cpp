// Lint rules for exporter habits: what PyTorch, TensorFlow and other exporters typically get wrong
// in a graph ONNX itself accepts (static batch, training mode, float64 leaks, baked reshapes, ...).

#include "ortkit/check/lint_index.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "ortkit/model/graph_walk.h"

namespace ortkit::lint {

void CheckOpsetTooOld(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const int opset = index.onnx_opset();
  if (opset < 0 || opset >= 7) return;
  findings.Add(
      fmt::format("the model imports ai.onnx opset {}; ONNX Runtime implements opset 7 and newer only "
                  "(older kernels such as BatchNormalization-6 or PRelu-6 are missing)",
                  opset));
}

void CheckOpsetTooNew(const ModelIndex& index, const LintOptions& options, Findings& findings) {
  const int opset = index.onnx_opset();
  if (options.max_supported_opset <= 0 || opset <= options.max_supported_opset) return;
  findings.Add(fmt::format("the model imports ai.onnx opset {}; the installed ONNX Runtime accepts up to opset {}",
                           opset, options.max_supported_opset));
  if (Diagnosis* d = findings.Last()) {
    d->fix = fmt::format(
        "Export with opset {} or lower (torch.onnx.export(..., opset_version={}), tf2onnx --opset {}), "
        "or upgrade ONNX Runtime.",
        options.max_supported_opset, options.max_supported_opset, options.max_supported_opset);
  }
}

namespace {

// What a session needs to run operators of a non-standard domain. A prefix matches the domain
// itself and its dotted sub-domains (com.microsoft.nchwc).
struct DomainNeed {
  std::string_view prefix;
  std::string_view need;
};

constexpr std::array kDomainNeeds = std::to_array<DomainNeed>({
    {"com.microsoft",
     "ONNX Runtime contrib operators: only ONNX Runtime runs them, each exists from a given runtime "
     "version on and often only on some execution providers"},
    {"ai.onnx.contrib",
     "onnxruntime-extensions operators: register the extensions library with the session "
     "(RegisterCustomOpsLibrary with onnxruntime_extensions.get_library_path())"},
    {"ai.onnx.training", "training operators: only ONNX Runtime training builds run them, not inference sessions"},
    {"ai.onnx.preview.training",
     "training operators: only ONNX Runtime training builds run them, not inference sessions"},
    {"org.pytorch.aten",
     "PyTorch ATen fallback operators: they need an ONNX Runtime build with the ATen operator "
     "(onnxruntime-training)"},
});

std::string DomainNeedText(const std::string& domain) {
  for (const auto& entry : kDomainNeeds) {
    if (domain == entry.prefix ||
        (domain.size() > entry.prefix.size() && domain.compare(0, entry.prefix.size(), entry.prefix) == 0 &&
         domain[entry.prefix.size()] == '.')) {
      return std::string(entry.need);
    }
  }
  return fmt::format("custom operators: the session needs a custom-op library that registers domain '{}'", domain);
}

}  // namespace

void CheckCustomDomain(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const auto& model = index.model();
  // Model-local functions are expanded by the runtime: calling them needs nothing installed.
  std::set<std::pair<std::string, std::string>> local_functions;
  for (const auto& f : model.functions()) local_functions.emplace(f.domain(), f.name());

  struct Use {
    std::map<std::string, int> ops;  // op_type -> node count
    int nodes = 0;
    Location first;
    std::string first_where;
  };
  std::map<std::string, Use> uses;
  auto record = [&](const onnx::NodeProto& n, int i, const std::string& where) {
    const std::string& domain = n.domain();
    if (IsOnnxDomain(domain) || domain == "ai.onnx.ml") return;
    if (local_functions.count({domain, n.op_type()})) return;
    Use& use = uses[domain];
    if (use.nodes++ == 0) {
      use.first = NodeLocation(n, i);
      use.first_where = where;
    }
    ++use.ops[n.op_type()];
  };
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) record(g.node(i), i, index.Where(s));
  }
  for (const auto& f : model.functions()) {
    for (int i = 0; i < f.node_size(); ++i) record(f.node(i), i, fmt::format(" in function '{}'", f.name()));
  }
  std::map<std::string, long long> imported;
  for (const auto& opset : model.opset_import()) imported.emplace(opset.domain(), opset.version());
  for (const auto& [domain, use] : uses) {
    auto imp = imported.find(domain);
    const std::string import_text =
        imp == imported.end() ? "not declared in opset_import" : fmt::format("opset {}", imp->second);
    constexpr std::size_t kOpsListed = 8;
    std::string ops;
    std::size_t listed = 0;
    for (const auto& [op, count] : use.ops) {
      if (listed++ == kOpsListed) {
        ops += fmt::format(" and {} more operator types", use.ops.size() - kOpsListed);
        break;
      }
      ops += fmt::format("{}{} ({})", ops.empty() ? "" : ", ", op, count);
    }
    findings.Add(fmt::format("{} node{} domain '{}' ({}): {}; first: '{}'{}. These are {}", use.nodes,
                             use.nodes == 1 ? " uses" : "s use", domain, import_text, ops, use.first.node,
                             use.first_where, DomainNeedText(domain)),
                 use.first);
  }
}

// Domains imported that no node uses (ONNX Runtime's quantiser imports training, preview and aten domains it
// never writes a node of): nothing is needed to run the model, so one note for the model, not a warning each.
void CheckUnusedOpsetImport(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const auto& model = index.model();
  std::set<std::string> used;
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) used.insert(g.node(i).domain());
  }
  for (const auto& f : model.functions()) {
    used.insert(f.domain());
    for (int i = 0; i < f.node_size(); ++i) used.insert(f.node(i).domain());
  }
  std::vector<std::string> unused;
  for (const auto& opset : model.opset_import()) {
    const std::string& domain = opset.domain();
    if (IsOnnxDomain(domain) || domain == "ai.onnx.ml" || used.count(domain)) continue;
    unused.push_back(fmt::format("'{}' (opset {})", domain, opset.version()));
  }
  if (unused.empty()) return;
  findings.Add(
      fmt::format("the model imports {} domain{} that no node uses: {}; ONNX Runtime ignores such an import, "
                  "so nothing is needed to run the model",
                  unused.size(), unused.size() == 1 ? "" : "s", fmt::join(unused, ", ")));
}

void CheckStaticBatch(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const auto inputs = index.RuntimeInputs();
  const auto& outputs = index.main().graph->output();

  // Evidence that the exporter knew about dynamic axes: a symbolic or unknown dimension anywhere.
  std::string symbolic_elsewhere;
  auto look_for_symbolic = [&](const onnx::ValueInfoProto& value, const char* kind) {
    const auto* shape = ShapeOf(value.type());
    if (shape == nullptr || !symbolic_elsewhere.empty()) return;
    for (int d = 0; d < shape->dim_size(); ++d) {
      if (IsFixed(shape->dim(d))) continue;
      symbolic_elsewhere = fmt::format("{} '{}' dimension {} is '{}'", kind, value.name(), d, DimText(shape->dim(d)));
      return;
    }
  };
  for (const auto* in : inputs) look_for_symbolic(*in, "input");
  for (const auto& out : outputs) look_for_symbolic(out, "output");

  const onnx::ValueInfoProto* dynamic_batch_input = nullptr;             // an input whose first dimension is dynamic
  std::vector<std::pair<const onnx::ValueInfoProto*, long long>> fixed;  // rank >= 2 inputs with a fixed first dim
  int ranked_inputs = 0;
  for (const auto* in : inputs) {
    const auto* shape = ShapeOf(in->type());
    if (shape == nullptr || shape->dim_size() == 0) continue;
    if (!IsFixed(shape->dim(0))) {
      if (dynamic_batch_input == nullptr) dynamic_batch_input = in;
      continue;
    }
    // A rank-1 input is a vector of parameters (a scale, lengths) as often as a batch of scalars.
    if (shape->dim_size() < 2) continue;
    ++ranked_inputs;
    if (shape->dim(0).dim_value() > 0) fixed.emplace_back(in, shape->dim(0).dim_value());
  }
  std::set<long long> output_first_dims;
  for (const auto& out : outputs) {
    const auto* shape = ShapeOf(out.type());
    if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0)))
      output_first_dims.insert(shape->dim(0).dim_value());
  }

  // Every rank >= 2 input starts with the same fixed number.
  const bool all_same =
      !fixed.empty() && static_cast<int>(fixed.size()) == ranked_inputs &&
      std::all_of(fixed.begin(), fixed.end(), [&](const auto& f) { return f.second == fixed.front().second; });
  for (const auto& [in, value] : fixed) {
    // The first dimension looks like a batch when it is 1, or when inputs and outputs agree on it.
    const bool batch_like = value == 1 || (all_same && fixed.size() >= 2) || output_first_dims.count(value) > 0;
    Location where;
    where.input = in->name();
    where.dimension = "0";
    const std::string shape = ShapeText(*ShapeOf(in->type()));
    if (dynamic_batch_input != nullptr) {
      // Another input has a dynamic batch: a leading 1 here may be a forgotten axis or a broadcast one.
      if (value != 1) continue;
      const auto* other = ShapeOf(dynamic_batch_input->type());
      // A first axis named as a sequence (a recurrent model over chunks, its state [layers, 1, hidden]) is no batch.
      static const std::regex sequence_name(R"((seq|len|time|step|frame|chunk))", std::regex::icase);
      if (other->dim(0).has_dim_param() && std::regex_search(other->dim(0).dim_param(), sequence_name)) continue;
      findings.Add(
          fmt::format("input '{}' has a fixed first dimension 1 (shape {}) while input '{}' has a dynamic first "
                      "dimension '{}' (shape {}): batches of other sizes will be refused unless this input "
                      "is meant to broadcast",
                      in->name(), shape, dynamic_batch_input->name(), DimText(other->dim(0)), ShapeText(*other)),
          where, /*heuristic=*/true);
    } else if (!symbolic_elsewhere.empty()) {
      if (!batch_like) continue;
      findings.Add(fmt::format("input '{}' has a fixed first dimension {} (shape {}) although the export made other "
                               "dimensions dynamic ({}): only batch size {} will be accepted",
                               in->name(), value, shape, symbolic_elsewhere, value),
                   where);
    } else if (batch_like && all_same) {
      findings.Add(fmt::format("input '{}' has a fixed first dimension {} (shape {}) and every input and output "
                               "dimension of the model is fixed: only batch size {} will be accepted",
                               in->name(), value, shape, value),
                   where, /*heuristic=*/true);
    }
  }
}

void CheckTrainingDropout(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const int opset = index.onnx_opset();
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      if (!IsOnnxOp(n, "Dropout")) continue;
      const Location where = NodeLocation(n, i);
      // Dropout-1 and -6 carry is_test (default 0: training); 7 to 11 always infer; 12 on take a
      // training_mode input (default false).
      if (opset >= 1 && opset < 7) {
        const auto is_test = IntAttribute(n, "is_test");
        if (!is_test || *is_test == 0) {
          findings.Add(fmt::format("Dropout '{}'{} has is_test={} at opset {}, so it drops activations at inference",
                                   where.node, index.Where(s), is_test ? "0" : "unset (default 0)", opset),
                       where);
        }
      }
      const std::string training_mode = Input(n, 2);
      if (!training_mode.empty() && (opset < 0 || opset >= 12)) {
        const auto value = index.ConstantInts(s, training_mode, 1);
        if (value && !value->empty() && value->front() != 0) {
          Location at = where;
          at.tensor = training_mode;
          findings.Add(
              fmt::format("Dropout '{}'{} takes training_mode from '{}', a constant true: it drops activations "
                          "at inference",
                          where.node, index.Where(s), training_mode),
              at);
        }
      }
      const std::string mask = Output(n, 1);
      if (!mask.empty() && (index.IsReadExplicitly(mask) || index.IsGraphOutput(mask))) {
        Location at = where;
        at.tensor = mask;
        const auto* readers = index.Consumers(mask);
        std::string reader = "a graph output";
        if (readers != nullptr && !readers->empty()) {
          const NodeRef r = readers->front();
          reader = fmt::format("node '{}' ({})", NodeDisplayName(index.node(r), r.node), index.node(r).op_type());
        }
        findings.Add(fmt::format("Dropout '{}'{} has its mask output '{}' consumed by {}: the mask matters only when "
                                 "training",
                                 where.node, index.Where(s), mask, reader),
                     at);
      }
    }
  }
}

void CheckTrainingBatchNorm(const ModelIndex& index, const LintOptions&, Findings& findings) {
  const int opset = index.onnx_opset();
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      if (!IsOnnxOp(n, "BatchNormalization")) continue;
      std::vector<std::string> reasons;
      if (IntAttribute(n, "training_mode").value_or(0) != 0) reasons.push_back("training_mode=1");
      if (opset >= 1 && opset < 7) {  // BatchNormalization-1 and -6: is_test defaults to 0, training
        const auto is_test = IntAttribute(n, "is_test");
        if (!is_test || *is_test == 0)
          reasons.push_back(fmt::format("is_test={} at opset {}", is_test ? "0" : "unset (default 0)", opset));
      }
      std::vector<std::string> extra;
      for (int o = 1; o < n.output_size(); ++o) {
        if (!n.output(o).empty()) extra.push_back(n.output(o));
      }
      if (!extra.empty()) {
        reasons.push_back(fmt::format("{} running-statistics output{} ({})", extra.size(), extra.size() == 1 ? "" : "s",
                                      NameList(extra)));
      }
      if (reasons.empty()) continue;
      const Location where = NodeLocation(n, i);
      std::string joined;
      for (const auto& r : reasons) joined += (joined.empty() ? "" : ", ") + r;
      findings.Add(fmt::format("BatchNormalization '{}'{} is in training mode: {}", where.node, index.Where(s), joined),
                   where);
    }
  }
}

void CheckFloat64Mixed(const ModelIndex& index, const LintOptions&, Findings& findings) {
  struct Offender {
    std::string message;
    Location location;
  };
  std::vector<Offender> offenders;
  int float32_like = 0;  // float32, float16, bfloat16 tensors: the precision the model computes in
  std::unordered_set<Name> seen;
  auto count = [&](int elem_type) {
    float32_like += elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::FLOAT16 ||
                    elem_type == onnx::TensorProto::BFLOAT16;
  };
  auto value = [&](const onnx::ValueInfoProto& v, const char* kind, std::string Location::*field, int s) {
    const int type = ElementTypeOf(v.type());
    if (!seen.insert(v.name()).second) return;
    count(type);
    if (type != onnx::TensorProto::DOUBLE) return;
    Location where;
    where.*field = v.name();
    offenders.push_back({fmt::format("{} '{}'{} is float64", kind, v.name(), index.Where(s)), where});
  };
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (const auto& init : g.initializer()) {
      if (!seen.insert(init.name()).second) continue;
      count(init.data_type());
      if (init.data_type() != onnx::TensorProto::DOUBLE) continue;
      Location where;
      where.tensor = init.name();
      offenders.push_back(
          {fmt::format("initializer '{}'{} is float64 ({} elements)", init.name(), index.Where(s), ElementCount(init)),
           where});
    }
    for (const auto& in : g.input()) value(in, "graph input", &Location::input, s);
    for (const auto& out : g.output()) value(out, "graph output", &Location::output, s);
    for (const auto& vi : g.value_info()) value(vi, "value", &Location::tensor, s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      // Tensor-valued attributes (Constant, ConstantOfShape) and type attributes (Cast's `to`,
      // the Random* family's `dtype`) are where doubles enter a graph.
      for (const auto& attr : n.attribute()) {
        if (attr.has_t()) {
          count(attr.t().data_type());
          if (attr.t().data_type() != onnx::TensorProto::DOUBLE) continue;
          const Location where = NodeLocation(n, i);
          offenders.push_back({fmt::format("node '{}' ({}){} has a float64 tensor in attribute '{}' (output '{}')",
                                           where.node, n.op_type(), index.Where(s), attr.name(), Output(n, 0)),
                               where});
        } else if ((attr.name() == "to" || attr.name() == "dtype") && attr.has_i()) {
          count(static_cast<int>(attr.i()));
          if (attr.i() != onnx::TensorProto::DOUBLE) continue;
          const Location where = NodeLocation(n, i);
          offenders.push_back({fmt::format("node '{}' ({}){} produces float64 ({}=DOUBLE) in '{}'", where.node,
                                           n.op_type(), index.Where(s), attr.name(), Output(n, 0)),
                               where});
        }
      }
    }
  }
  if (offenders.empty() || static_cast<int>(offenders.size()) >= float32_like) return;
  const std::string context = fmt::format(
      " in a model that otherwise computes in float32 ({} float32/float16 "
      "tensors and casts against {} float64 ones)",
      float32_like, offenders.size());
  for (auto& o : offenders) findings.Add(o.message + context, std::move(o.location));
}

void CheckDynamicResize(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::vector<Name> roots;
  for (const auto* in : index.RuntimeInputs()) roots.push_back(in->name());
  const auto derived = index.DerivedValues(roots);
  const int opset = index.onnx_opset();
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      // Resize-10 and Upsample-9: (X, scales); Resize-11 on: (X, roi, scales, sizes). roi does not
      // change the output size, so it is not checked.
      std::vector<std::pair<int, const char*>> checked;
      if (IsOnnxOp(n, "Upsample") || (IsOnnxOp(n, "Resize") && opset >= 0 && opset < 11)) {
        checked = {{1, "scales"}};
      } else if (IsOnnxOp(n, "Resize")) {
        checked = {{2, "scales"}, {3, "sizes"}};
      }
      for (const auto& [position, role] : checked) {
        const std::string name = Input(n, position);
        auto it = name.empty() ? derived.end() : derived.find(name);
        if (it == derived.end()) continue;
        Location where = NodeLocation(n, i);
        where.tensor = name;
        where.input = it->second;
        findings.Add(
            fmt::format("{} '{}'{} takes its {} from '{}', computed at run time from the values of graph input "
                        "'{}'",
                        n.op_type(), where.node, index.Where(s), role, name, it->second),
            where);
      }
    }
  }
}

namespace {

// " (output 'y' is declared [1, seq, 2])": the outputs whose declared first dimension is `size`.
std::string DeclaredWith(const ModelIndex& index, long long size) {
  std::vector<std::string> outputs;
  for (const auto& out : index.main().graph->output()) {
    const auto* shape = ShapeOf(out.type());
    if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0)) && shape->dim(0).dim_value() == size)
      outputs.push_back(fmt::format("'{}' is declared {}", out.name(), ShapeText(*shape)));
  }
  return outputs.empty() ? "" : fmt::format(" (output {})", fmt::join(outputs, ", output "));
}

}  // namespace

void CheckBakedBatchReshape(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::vector<Name> roots;
  std::unordered_map<Name, std::string> batch_names;  // input -> its first dimension's text
  for (const auto* in : index.RuntimeInputs()) {
    const auto* shape = ShapeOf(in->type());
    if (shape == nullptr || shape->dim_size() < 2 || IsFixed(shape->dim(0))) continue;
    roots.push_back(in->name());
    batch_names[in->name()] = DimText(shape->dim(0));
  }
  if (roots.empty()) return;
  // A fixed first dimension on an output is the traced batch size leaking through, when present.
  std::set<long long> traced;
  for (const auto& out : index.main().graph->output()) {
    const auto* shape = ShapeOf(out.type());
    if (shape != nullptr && shape->dim_size() > 0 && IsFixed(shape->dim(0)) && shape->dim(0).dim_value() > 0) {
      traced.insert(shape->dim(0).dim_value());
    }
  }
  const auto derived = index.DerivedValues(roots);
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      const bool reshape = IsOnnxOp(n, "Reshape");
      if (!reshape && !IsOnnxOp(n, "Expand")) continue;
      auto data = derived.find(Input(n, 0));
      const std::string shape_name = Input(n, 1);
      if (data == derived.end() || shape_name.empty()) continue;
      auto shape = index.ConstantInts(s, shape_name);
      // A target built by a Concat whose first piece is a literal (x.view(1, x.size(1), 3, 192)): the rest
      // is read from the input (Shape), the first element is baked.
      std::string concat;
      if (!shape) {
        const auto& scope = index.scopes()[s];
        auto producer = scope.producer.find(shape_name);
        if (producer == scope.producer.end()) continue;
        const auto& maker = g.node(producer->second);
        if (!IsOnnxOp(maker, "Concat") || maker.input_size() < 2) continue;
        auto piece = index.ConstantInts(s, Input(maker, 0));
        if (!piece || piece->size() != 1) continue;
        shape = std::vector<long long>{piece->front(), -2};  // -2: the rest, read at run time
        concat = fmt::format("Concat '{}' builds from the literal {} (from '{}') and sizes read at run time",
                             NodeLocation(maker, producer->second).node, piece->front(), Input(maker, 0));
      }
      if (!shape || shape->size() < 2) continue;
      const long long first = shape->front();
      // 0 copies the input's dimension and -1 infers it: both follow the batch. For Expand a 1 keeps it.
      if (first <= 1 && !(reshape && first == 1 && traced.count(1))) continue;
      if (!traced.empty() && !traced.count(first)) continue;
      Location where = NodeLocation(n, i);
      where.tensor = shape_name;
      where.input = data->second;
      const std::string evidence = traced.empty() ? ""
                                                  : ", the size that the outputs' fixed first dimension also "
                                                    "shows" +
                                                        DeclaredWith(index, first);
      const std::string target = concat.empty()
                                     ? fmt::format("the constant shape {} from '{}'", IntsText(*shape), shape_name)
                                     : fmt::format("the shape that {}", concat);
      findings.Add(fmt::format("{} '{}'{} gives '{}' (computed from input '{}', first dimension '{}') {}; its first "
                               "element {} looks like the batch size of the traced example{}",
                               n.op_type(), where.node, index.Where(s), Input(n, 0), data->second,
                               batch_names[data->second], target, first, evidence),
                   where, /*heuristic=*/true);
    }
  }
}

void CheckUnusedInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (const auto* in : index.RuntimeInputs()) {
    if (in->name().empty() || index.IsReadExplicitly(in->name()) || index.IsGraphOutput(in->name())) continue;
    Location where;
    where.input = in->name();
    findings.Add(fmt::format("graph input '{}' is read by no node in any graph and is not an output", in->name()),
                 where);
  }
}

namespace {

// PyTorch's torch.export-based exporter names an output after the ATen operation that computes it (`linear`,
// `layer_norm_4`, `tanh`) unless output_names is given: the name changes whenever the model does. Each ATen
// name with the ONNX operators it becomes; an empty list: any operator (getitem reads any multi-output node).
struct AtenName {
  std::string_view aten;
  std::string_view onnx;  ///< the operators, space-separated
};
constexpr std::array kAtenNames = std::to_array<AtenName>({
    {"linear", "Gemm MatMul Add"},
    {"matmul", "MatMul"},
    {"mm", "MatMul Gemm"},
    {"bmm", "MatMul"},
    {"addmm", "Gemm Add"},
    {"baddbmm", "Gemm Add"},
    {"add", "Add"},
    {"sub", "Sub"},
    {"mul", "Mul"},
    {"div", "Div"},
    {"tanh", "Tanh"},
    {"relu", "Relu"},
    {"gelu", "Gelu Mul"},
    {"silu", "Mul Sigmoid"},
    {"sigmoid", "Sigmoid"},
    {"softmax", "Softmax"},
    {"log_softmax", "LogSoftmax"},
    {"layer_norm", "LayerNormalization"},
    {"batch_norm", "BatchNormalization"},
    {"group_norm", "GroupNormalization InstanceNormalization Add Reshape"},
    {"conv1d", "Conv"},
    {"conv2d", "Conv"},
    {"conv3d", "Conv"},
    {"convolution", "Conv"},
    {"mean", "ReduceMean"},
    {"sum", "ReduceSum"},
    {"view", "Reshape"},
    {"reshape", "Reshape"},
    {"cat", "Concat"},
    {"concat", "Concat"},
    {"transpose", "Transpose"},
    {"permute", "Transpose"},
    {"squeeze", "Squeeze"},
    {"unsqueeze", "Unsqueeze"},
    {"getitem", ""},
    {"embedding", "Gather"},
    {"clone", "Identity"},
    {"max", "ReduceMax Max"},
    {"argmax", "ArgMax"},
    {"slice", "Slice"},
    {"select", "Gather"},
    {"flatten", "Flatten Reshape"},
    {"expand", "Expand"},
    {"erf", "Erf"},
    {"pow", "Pow"},
    {"sqrt", "Sqrt"},
    {"rsqrt", "Reciprocal Div Sqrt"},
    {"neg", "Neg"},
    {"exp", "Exp"},
    {"where", "Where"},
    {"masked_fill", "Where"},
    {"scaled_dot_product_attention", "MatMul Attention"},
    {"adaptive_avg_pool2d", "GlobalAveragePool AveragePool ReduceMean"},
    {"avg_pool2d", "AveragePool"},
    {"max_pool2d", "MaxPool"},
    {"hardtanh", "Clip"},
    {"cumsum", "CumSum"},
    {"split", "Split Slice"},
    {"chunk", "Split Slice"},
    {"contiguous", "Identity"},
});

// Whether `name` was made by the exporter from the node `op_type` that computes it: the exporter's pattern, an
// ATen name with a numeric suffix ("layer_norm_4"), or the bare ATen name of that very operator ("tanh" from a
// Tanh). A word the user chose that happens to name an operator ("embedding" from a Div) is not.
bool NamedByTheExporter(std::string_view name, std::string_view op_type) {
  std::string_view stem = name;  // "layer_norm_4" -> "layer_norm"
  const auto last = stem.find_last_not_of("0123456789");
  const bool numbered = last != std::string_view::npos && last + 1 < stem.size() && stem[last] == '_';
  if (numbered) stem = stem.substr(0, last);
  const auto* aten =
      std::find_if(kAtenNames.begin(), kAtenNames.end(), [&](const AtenName& a) { return a.aten == stem; });
  if (aten == kAtenNames.end()) return false;
  if (numbered || aten->onnx.empty()) return true;
  for (std::string_view ops = aten->onnx; !ops.empty();) {
    const std::size_t space = ops.find(' ');
    if (ops.substr(0, space) == op_type) return true;
    ops = space == std::string_view::npos ? std::string_view() : ops.substr(space + 1);
  }
  return false;
}

}  // namespace

void CheckOutputInternalName(const ModelIndex& index, const LintOptions&, Findings& findings) {
  if (index.model().producer_name() != "pytorch") return;
  const Scope& main = index.main();
  std::vector<std::string> names;
  for (const auto& out : main.graph->output()) {
    auto producer = main.producer.find(out.name());
    const std::string_view op_type =
        producer == main.producer.end() ? std::string_view() : main.graph->node(producer->second).op_type();
    if (NamedByTheExporter(out.name(), op_type)) names.push_back(out.name());
  }
  if (names.empty()) return;
  Location where;
  where.output = names.front();
  findings.Add(fmt::format("output{} {} named after the operation that computes {} ({}), not chosen at export: the "
                           "model is right, only {} may change when the model does",
                           names.size() == 1 ? "" : "s", NameList(names), names.size() == 1 ? "it" : "them",
                           index.model().producer_name(), names.size() == 1 ? "its name" : "their names"),
               where);
}

// tf2onnx's from_function turns a tensor the function closes over (a tf.constant made outside it) into a
// graph input named after the op that reads it, "MatMul/b:0": nobody feeds it, and ONNX Runtime then says
// "Required inputs (['MatMul/b:0']) are missing from input feed".
void CheckCapturedConstantInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  if (index.model().producer_name() != "tf2onnx") return;
  static const std::regex kOpOutput(R"re(^[\w.-]+(/[\w.-]+)+:\d+$)re");
  for (const auto* in : index.RuntimeInputs()) {
    if (!std::regex_match(in->name(), kOpOutput)) continue;
    Location where;
    where.input = in->name();
    findings.Add(fmt::format("input '{}' is named after a TensorFlow op's operand, not an argument of the "
                             "signature: a tensor the function closes over became an input nobody feeds",
                             in->name()),
                 where, /*heuristic=*/true);
  }
}

// TorchScript export of a Transformers causal LM (4.45 and newer) records `logits_to_keep` as a required input.
void CheckLogitsToKeepInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (const auto* in : index.RuntimeInputs()) {
    if (in->name() != "logits_to_keep" && in->name() != "num_logits_to_keep") continue;
    Location where;
    where.input = in->name();
    findings.Add(fmt::format("the model takes '{}': the exported graph computes logits for the last positions only, "
                             "as many as that input says, instead of every position",
                             in->name()),
                 where);
  }
}

void CheckInitializerAsInput(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::vector<std::string> names;
  for (const auto& in : index.main().graph->input()) {
    if (index.main().initializers.count(in.name())) names.push_back(in.name());
  }
  if (names.empty()) return;
  Location where;
  where.input = names.front();
  where.tensor = names.front();
  const long long ir = index.model().ir_version();
  const std::string ir_note =
      ir > 0 && ir < 4
          ? fmt::format(" (IR version {} requires it; re-save with IR version 4 or newer to drop them)", ir)
          : "";
  findings.Add(fmt::format("{} initializer{} also listed as graph input{}: {}{}", names.size(),
                           names.size() == 1 ? " is" : "s are", names.size() == 1 ? "" : "s", NameList(names), ir_note),
               where);
}

}  // namespace ortkit::lint
