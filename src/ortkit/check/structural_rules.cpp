// Structural lint rules: what makes a graph invalid or unusable whoever exported it (undefined
// values, duplicate names, cycles, impossible dimensions, no outputs, inconsistent dim names).

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

void CheckUndefinedValue(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      for (const auto& in : n.input()) {
        if (in.empty() || index.DefiningScope(s, in) >= 0) continue;
        Location where = NodeLocation(n, i);
        where.tensor = in;
        findings.Add(
            fmt::format("node '{}' ({}){} reads '{}', which no node, initializer or graph input{} produces", where.node,
                        n.op_type(), index.Where(s), in, s > 0 ? " of this or an enclosing graph" : ""),
            where);
      }
    }
    for (const auto& out : g.output()) {
      if (out.name().empty() || index.DefiningScope(s, out.name()) >= 0) continue;
      Location where;
      where.output = out.name();
      findings.Add(fmt::format("graph output '{}'{} is produced by no node, initializer or graph input", out.name(),
                               index.Where(s)),
                   where);
    }
  }
}

void CheckDuplicateName(const ModelIndex& index, const LintOptions&, Findings& findings) {
  // Who wrote a value first: a node index, or one of these.
  constexpr int kGraphInput = -1, kInitializer = -2;
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    std::unordered_map<Name, int> writers;
    auto describe = [&](Name name, int writer) {
      if (writer == kGraphInput) return fmt::format("graph input '{}'", name);
      if (writer == kInitializer) return fmt::format("initializer '{}'", name);
      return fmt::format("node '{}' ({})", NodeDisplayName(g.node(writer), writer), g.node(writer).op_type());
    };
    auto report = [&](Name name, const std::string& first, const std::string& second, Location where) {
      where.tensor = std::string(name);
      findings.Add(fmt::format("value '{}'{} is written by {} and again by {}", name, index.Where(s), first, second),
                   std::move(where));
    };
    for (const auto& in : g.input()) {
      if (in.name().empty() || writers.emplace(in.name(), kGraphInput).second) continue;
      Location where;
      where.input = in.name();
      report(in.name(), describe(in.name(), kGraphInput), "a second graph input of that name", where);
    }
    std::unordered_set<Name> initializers;
    for (const auto& init : g.initializer()) {
      if (init.name().empty()) continue;
      // An initializer listed as an input is the IR 3 convention, not a duplicate.
      if (!initializers.insert(init.name()).second) {
        report(init.name(), describe(init.name(), kInitializer), "a second initializer of that name", {});
      } else {
        writers.emplace(init.name(), kInitializer);
      }
    }
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      for (const auto& out : n.output()) {
        if (out.empty()) continue;
        auto [it, first] = writers.emplace(out, i);
        if (!first) {
          report(out, describe(out, it->second), describe(out, i), NodeLocation(n, i));
        } else if (s > 0 && index.DefiningScope(index.scopes()[s].parent, out) >= 0) {
          report(out, "the enclosing graph", describe(out, i) + " (shadowing the outer value)", NodeLocation(n, i));
        }
      }
    }
  }
}

// Kahn's algorithm over node dependencies; what it cannot order lies on or behind a cycle. One
// cycle is then named by walking predecessors inside the leftover until a node repeats.
void CheckCycle(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& scope = index.scopes()[s];
    const int n = scope.graph->node_size();
    std::vector<std::vector<int>> successors(n), predecessors(n);
    std::vector<int> pending(n, 0);
    for (int j = 0; j < n; ++j) {
      index.ForEachInput(s, j, [&](Name name) {
        auto it = scope.producer.find(name);
        if (it == scope.producer.end()) return;
        successors[it->second].push_back(j);
        predecessors[j].push_back(it->second);
        ++pending[j];
      });
    }
    std::vector<int> ready;
    for (int j = 0; j < n; ++j) {
      if (pending[j] == 0) ready.push_back(j);
    }
    int ordered = 0;
    while (!ready.empty()) {
      const int j = ready.back();
      ready.pop_back();
      ++ordered;
      for (int k : successors[j]) {
        if (--pending[k] == 0) ready.push_back(k);
      }
    }
    if (ordered == n) continue;
    int start = 0;
    while (pending[start] == 0) ++start;
    std::unordered_map<int, int> position;  // node -> step at which the walk met it
    std::vector<int> walk;
    int current = start;
    while (!position.count(current)) {
      position[current] = static_cast<int>(walk.size());
      walk.push_back(current);
      int next = -1;
      for (int p : predecessors[current]) {
        if (pending[p] > 0) {
          next = p;
          break;
        }
      }
      if (next < 0) break;  // cannot happen: every leftover node has a leftover predecessor
      current = next;
    }
    std::vector<int> cycle(walk.begin() + position[current], walk.end());
    std::reverse(cycle.begin(), cycle.end());  // predecessors were walked: turn into data-flow order
    constexpr std::size_t kShown = 8;
    std::string text;
    for (std::size_t k = 0; k < cycle.size() && k < kShown; ++k) {
      const auto& node = scope.graph->node(cycle[k]);
      text += fmt::format("{}'{}' ({})", k ? " -> " : "", NodeDisplayName(node, cycle[k]), node.op_type());
    }
    if (cycle.size() > kShown) text += fmt::format(" -> ... ({} nodes)", cycle.size());
    const auto& first = scope.graph->node(cycle.front());
    text += fmt::format(" -> '{}'", NodeDisplayName(first, cycle.front()));
    findings.Add(
        fmt::format("{} of {} nodes{} cannot be ordered because of a cycle: {}", n - ordered, n, index.Where(s), text),
        NodeLocation(first, cycle.front()));
  }
}

namespace {

// Calls fn(value, kind, field, scope, axis, size, shape) for every fixed dimension declared on a graph's
// inputs, outputs and value_info, sequence/optional/map element types included.
template <typename Fn>
void ForEachDeclaredDim(const ModelIndex& index, Fn fn) {
  auto visit = [&](const onnx::ValueInfoProto& value, const char* kind, std::string Location::*field, int s) {
    // Sequence/optional/map types nest: follow them iteratively, a few levels at most.
    const onnx::TypeProto* type = &value.type();
    for (int level = 0; type != nullptr && level < 16; ++level) {
      if (const auto* shape = ShapeOf(*type)) {
        for (int d = 0; d < shape->dim_size(); ++d) {
          if (shape->dim(d).has_dim_value()) fn(value, kind, field, s, d, shape->dim(d).dim_value(), *shape);
        }
        break;
      }
      if (type->has_sequence_type())
        type = &type->sequence_type().elem_type();
      else if (type->has_optional_type())
        type = &type->optional_type().elem_type();
      else if (type->has_map_type())
        type = &type->map_type().value_type();
      else
        type = nullptr;
    }
  };
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& g = index.graph(s);
    for (const auto& in : g.input()) visit(in, "input", &Location::input, s);
    for (const auto& out : g.output()) visit(out, "output", &Location::output, s);
    for (const auto& vi : g.value_info()) visit(vi, "value", &Location::tensor, s);
  }
}

}  // namespace

// A negative dimension other than -1, or one too large to be real.
void CheckBadDimension(const ModelIndex& index, const LintOptions&, Findings& findings) {
  ForEachDeclaredDim(index, [&](const onnx::ValueInfoProto& value, const char* kind, std::string Location::*field,
                                int s, int d, long long v, const onnx::TensorShapeProto& shape) {
    if ((v >= 0 && v <= kMaxPlausibleDim) || v == -1) return;
    Location where;
    where.*field = value.name();
    where.dimension = std::to_string(d);
    findings.Add(fmt::format("{} '{}'{} declares dimension {} as {} (shape {})", kind, value.name(), index.Where(s), d,
                             v, ShapeText(shape)),
                 where);
  });
}

// -1: what old converters (paddle2onnx, early tf2onnx) write for "unknown". ONNX Runtime runs it as a
// dynamic dimension; the format says dim_param. One finding per tensor.
void CheckMinusOneDimension(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::set<std::string> seen;
  ForEachDeclaredDim(index, [&](const onnx::ValueInfoProto& value, const char* kind, std::string Location::*field,
                                int s, int d, long long v, const onnx::TensorShapeProto& shape) {
    if (v != -1 || !seen.insert(std::string(kind) + value.name()).second) return;
    Location where;
    where.*field = value.name();
    where.dimension = std::to_string(d);
    findings.Add(fmt::format("{} '{}'{} declares dimension {} as -1 (shape {}): ONNX Runtime runs it as a dynamic "
                             "dimension, but -1 is not a size in the ONNX format",
                             kind, value.name(), index.Where(s), d, ShapeText(shape)),
                 where);
  });
}

void CheckNoOutputs(const ModelIndex& index, const LintOptions&, Findings& findings) {
  for (int s = 0; s < static_cast<int>(index.scopes().size()); ++s) {
    const auto& scope = index.scopes()[s];
    if (scope.graph->output_size() > 0) continue;
    if (s == 0) {
      findings.Add(fmt::format("the main graph '{}' ({} nodes) declares no outputs", scope.graph->name(),
                               scope.graph->node_size()));
      continue;
    }
    const auto& owner = index.graph(scope.parent).node(scope.owner_node);
    findings.Add(fmt::format("subgraph '{}' of node '{}' ({}) declares no outputs", scope.path,
                             NodeDisplayName(owner, scope.owner_node), owner.op_type()),
                 NodeLocation(owner, scope.owner_node));
  }
}

namespace {

// Operators whose inputs broadcast numpy-style: aligned from the right, their dimensions must be
// equal or 1.
constexpr std::array<std::string_view, 24> kElementwiseOps = {
    "Add",  "Sub",         "Mul", "Div",  "Pow",   "Mod",      "Equal",      "Greater",   "GreaterOrEqual",
    "Less", "LessOrEqual", "And", "Or",   "Xor",   "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    "Max",  "Min",         "Sum", "Mean", "Where", "PRelu"};

}  // namespace

std::vector<AlignedInputDims> AlignedInputDimensions(const ModelIndex& index) {
  std::unordered_map<std::string, const onnx::TensorShapeProto*> input_shapes;
  for (const auto* in : index.RuntimeInputs()) {
    if (const auto* shape = ShapeOf(in->type())) input_shapes[in->name()] = shape;
  }
  std::vector<AlignedInputDims> pairs;
  const auto& g = *index.main().graph;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (!IsOnnxDomain(n.domain()) ||
        std::find(kElementwiseOps.begin(), kElementwiseOps.end(), n.op_type()) == kElementwiseOps.end()) {
      continue;
    }
    std::vector<std::string> operands;
    for (const auto& in : n.input()) {
      if (input_shapes.count(in) && std::find(operands.begin(), operands.end(), in) == operands.end())
        operands.push_back(in);
    }
    for (std::size_t a = 0; a < operands.size(); ++a) {
      for (std::size_t b = a + 1; b < operands.size(); ++b) {
        const auto& sa = *input_shapes[operands[a]];
        const auto& sb = *input_shapes[operands[b]];
        for (int k = 1; k <= std::min(sa.dim_size(), sb.dim_size()); ++k) {
          pairs.push_back({i, operands[a], sa.dim_size() - k, &sa, operands[b], sb.dim_size() - k, &sb});
        }
      }
    }
  }
  return pairs;
}

// shape.dim-name-inconsistent, kept to what the declared types prove: an element-wise node of the
// main graph that combines two graph inputs directly. Aligned dimensions must then be equal (or
// 1), so two different names for them, or a name facing a fixed size above 1, misstate the model:
// the names promise independent sizes that the graph cannot accept. Anything needing shape
// inference (values further down the graph) is left to the shape-inference layer.
void CheckDimNameInconsistent(const ModelIndex& index, const LintOptions&, Findings& findings) {
  std::set<std::pair<std::string, std::string>> reported;
  for (const auto& pair : AlignedInputDimensions(index)) {
    const auto& da = pair.shape_a->dim(pair.axis_a);
    const auto& db = pair.shape_b->dim(pair.axis_b);
    const bool named_a = !da.has_dim_value() && !da.dim_param().empty();
    const bool named_b = !db.has_dim_value() && !db.dim_param().empty();
    std::string problem;
    std::pair<std::string, std::string> key;
    if (named_a && named_b && da.dim_param() != db.dim_param()) {
      key = std::minmax(da.dim_param(), db.dim_param());
      problem = "so both names stand for one size";
    } else if (named_a != named_b && (named_a ? db : da).has_dim_value() && (named_a ? db : da).dim_value() > 1) {
      const auto& named = named_a ? da : db;
      const long long fixed = (named_a ? db : da).dim_value();
      key = {named.dim_param(), std::to_string(fixed)};
      problem = fmt::format("so '{}' can only be {} (or 1), not a free size", named.dim_param(), fixed);
    } else {
      continue;
    }
    if (!reported.insert(key).second) continue;
    const auto& n = index.main().graph->node(pair.node);
    Location where = NodeLocation(n, pair.node);
    where.input = pair.input_a;
    where.dimension = named_a ? da.dim_param() : db.dim_param();
    findings.Add(fmt::format("node '{}' ({}) combines input '{}' (dimension {} '{}', shape {}) element-wise with "
                             "input '{}' (dimension {} '{}', shape {}), {}",
                             where.node, n.op_type(), pair.input_a, pair.axis_a, DimText(da), ShapeText(*pair.shape_a),
                             pair.input_b, pair.axis_b, DimText(db), ShapeText(*pair.shape_b), problem),
                 where);
  }
}

}  // namespace ortkit::lint
