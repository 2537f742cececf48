#include "ortkit/validate/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/check/lint.h"
#include "ortkit/core/memory.h"
#include "ortkit/core/numbers.h"
#include "ortkit/core/units.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/model/quantization.h"
#include "ortkit/validate/purpose_judgement.h"

namespace ortkit {
namespace {

/// Values one sweep axis may list: the grid crosses the axes, and each cell is a run.
constexpr std::size_t kMostSweepValues = 64;

bool IsBatchLike(const std::string& symbol) {
  if (const int axis = UnnamedAxisOf(symbol); axis >= 0) return axis == 0;
  return DefaultDimSize(symbol, 1) == 1 && !symbol.empty();
}

std::vector<std::string> SymbolsInOrder(const std::vector<TensorSpec>& inputs) {
  std::vector<std::string> out;
  for (const auto& spec : inputs) {
    for (const auto& d : spec.dims) {
      if (!d.fixed() && !d.symbol.empty() && std::find(out.begin(), out.end(), d.symbol) == out.end())
        out.push_back(d.symbol);
    }
  }
  return out;
}

// Input bytes with every symbolic dimension at `plan`'s size (defaults elsewhere).
std::uint64_t InputBytes(const std::vector<TensorSpec>& inputs, const InputPlan& plan) {
  std::uint64_t total = 0;
  for (const auto& spec : inputs) {
    auto shape = ResolveShape(spec, plan);
    if (!shape.ok()) continue;
    auto count = ElementCountOf(*shape);
    const DataTypeInfo* info = FindDataType(spec.type);
    if (count.ok() && info != nullptr) total += static_cast<std::uint64_t>(*count) * std::max(1, info->size);
  }
  return total;
}

// The axis of `spec` that carries `symbol`, or -1.
int AxisOf(const TensorSpec& spec, const std::string& symbol) {
  for (std::size_t i = 0; i < spec.dims.size(); ++i) {
    if (!spec.dims[i].fixed() && spec.dims[i].symbol == symbol) return static_cast<int>(i);
  }
  return -1;
}

// "at batch=4 seq=16: " to start a cell's message; "" where every dimension is fixed.
std::string AtCell(const std::map<std::string, std::int64_t>& dims) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : dims) parts.push_back(fmt::format("{}={}", k, v));
  return parts.empty() ? "" : fmt::format("at {}: ", fmt::join(parts, " "));
}

void CheckOutputs(const std::vector<TensorSpec>& output_specs, const std::vector<NamedTensor>& outputs,
                  const std::map<std::string, std::int64_t>& dims, SweepCell& cell) {
  for (const auto& out : outputs) {
    const Tensor& t = out.tensor;
    if (!t.is_string() && FindDataType(t.type())->is_float) {
      std::int64_t bad = 0;
      for (std::int64_t i = 0; i < t.element_count(); ++i) bad += !std::isfinite(t.AsDouble(i));
      if (bad > 0) {
        Location where;
        where.output = out.name;
        cell.diagnoses.push_back(Diagnose("sweep.nan-inf",
                                          fmt::format("{}output '{}' ({}) holds {} NaN/Inf value{}", AtCell(dims),
                                                      out.name, t.Describe(), bad, bad == 1 ? "" : "s"),
                                          where));
      }
    }
    auto spec =
        std::find_if(output_specs.begin(), output_specs.end(), [&](const TensorSpec& s) { return s.name == out.name; });
    if (spec == output_specs.end() || spec->dims.size() != t.shape().size()) continue;
    for (std::size_t d = 0; d < spec->dims.size(); ++d) {
      if (spec->dims[d].fixed() && spec->dims[d].value != t.shape()[d]) {
        // A size the file declares fixed that the run does not keep: consumers that trust the declaration break.
        Location where;
        where.output = out.name;
        where.dimension = std::to_string(d);
        cell.diagnoses.push_back(Diagnose(
            "runtime.output-shape-differs",
            fmt::format("{}output '{}' is declared {} but the run returned {}: dimension {} is fixed to {} in the "
                        "file",
                        AtCell(dims), out.name, spec->Describe(), t.Describe(), d, spec->dims[d].value),
            where));
        continue;
      }
      auto it = dims.find(spec->dims[d].symbol);
      if (spec->dims[d].fixed() || it == dims.end() || it->second == t.shape()[d]) continue;
      Location where;
      where.output = out.name;
      where.dimension = std::to_string(d);
      cell.diagnoses.push_back(
          Diagnose("sweep.output-dim-mismatch",
                   fmt::format("{}output '{}' dimension {} ('{}') is {} but {}={}", AtCell(dims), out.name, d,
                               spec->dims[d].symbol, t.shape()[d], it->first, it->second),
                   where));
    }
  }
}

// The first node that quantises with a scale computed at run time (onnxruntime.quantization's
// quantize_dynamic writes DynamicQuantizeLinear, or MatMulInteger/ConvInteger behind it).
std::optional<std::string> DynamicQuantisationNode(const onnx::ModelProto& model) {
  for (int i = 0; i < model.graph().node_size(); ++i) {
    const auto& node = model.graph().node(i);
    if (node.op_type() == "DynamicQuantizeLinear" || node.op_type() == "DynamicQuantizeLSTM" ||
        node.op_type() == "DynamicQuantizeMatMul")
      return fmt::format("'{}' ({})", node.name().empty() ? "#" + std::to_string(i) : node.name(), node.op_type());
  }
  return std::nullopt;
}

/// How a batched row is judged against the same row run alone: a quantised model's rows by their purpose.
struct RowJudging {
  const onnx::ModelProto& model;
  QuantizationSummary quantization;
  std::optional<std::string> dynamic_node;  ///< DynamicQuantisationNode
};

/// A row that differs from itself run alone: for a quantised model judged by its purpose, so that rounding
/// passes; beyond rounding a warning while the purpose survives, else an error. nullopt when it passes.
std::optional<Diagnosis> JudgeRow(const RowJudging& judging, const std::string& name, Tensor expected,
                                  const Tensor& alone, const Tolerance& tolerance, const std::string& at,
                                  std::int64_t row) {
  ComparisonReport one;
  one.outputs.push_back(CompareTensors(name, expected, alone, tolerance));
  if (judging.quantization.quantized() && !one.outputs.front().passed) {
    const NamedTensor batched[] = {{name, std::move(expected)}};
    const NamedTensor single[] = {{name, alone.Clone()}};
    JudgeByPurpose(one, batched, single, judging.model, judging.quantization);
  }
  const OutputComparison& c = one.outputs.front();
  if (c.passed) return std::nullopt;
  Location where;
  where.output = name;
  Diagnosis d = Diagnose("sweep.batch-inconsistent",
                         fmt::format("at {}: row {} of output '{}' differs from the same row run alone: {} (max abs "
                                     "error {:.3g})",
                                     at, row, name, c.judgement.empty() ? c.problem : c.judgement, c.max_abs_error),
                         where);
  if (c.judged == OutputComparison::Judged::kBeyondRounding) d.severity = Severity::kWarning;
  // Rows of a dynamically quantised model differ when batched by design: one scale for the whole batch.
  if (judging.dynamic_node && c.judged != OutputComparison::Judged::kPurposeLost) {
    d.severity = Severity::kWarning;
    d.message += fmt::format(
        "; the model is dynamically quantised ({}): the scale is computed over the whole batch, so a row's result "
        "depends on the other rows. It is usable one request at a time, or batched where results within the "
        "quantisation step are acceptable",
        *judging.dynamic_node);
  }
  return d;
}

void CheckBatchConsistency(Session& session, const std::vector<TensorSpec>& input_specs,
                           const std::vector<TensorSpec>& output_specs, const std::vector<NamedTensor>& inputs,
                           const std::vector<NamedTensor>& outputs, const std::string& batch_dim, std::int64_t batch,
                           const SweepOptions& options, const RowJudging& judging, SweepCell& cell) {
  for (const auto& spec : input_specs) {
    const int axis = AxisOf(spec, batch_dim);
    if (axis > 0) return;  // batch on another axis than the first: row slicing is not defined here
  }
  std::set<std::int64_t> rows = {0, batch / 2, batch - 1};
  int checked = 0;
  for (std::int64_t row : rows) {
    if (checked++ >= options.rows_checked) break;
    std::vector<NamedTensor> row_inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (AxisOf(input_specs[i], batch_dim) == 0) {
        auto slice = inputs[i].tensor.SliceRows(row, row + 1);
        if (!slice.ok()) return;
        row_inputs.push_back({inputs[i].name, std::move(slice).value()});
      } else {
        row_inputs.push_back({inputs[i].name, inputs[i].tensor.Clone()});
      }
    }
    auto row_outputs = RunSession(session, RunRequest{row_inputs, {}});
    if (!row_outputs.ok()) {
      auto d = TranslateRuntimeError(row_outputs.error().message, {}, /*during_run=*/true);
      d.message = fmt::format("row {} alone ({}=1) failed: {}", row, batch_dim, d.message);
      cell.diagnoses.push_back(std::move(d));
      return;
    }
    cell.batch_checked = true;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const Tensor& full = outputs[o].tensor;
      auto spec = std::find_if(output_specs.begin(), output_specs.end(),
                               [&](const TensorSpec& s) { return s.name == outputs[o].name; });
      const bool batched = spec != output_specs.end() ? AxisOf(*spec, batch_dim) == 0
                                                      : (!full.shape().empty() && full.shape()[0] == batch);
      if (!batched || full.shape().empty() || full.shape()[0] != batch) continue;
      auto expected = full.SliceRows(row, row + 1);
      if (!expected.ok()) continue;
      const Tensor& alone = (*row_outputs)[o].tensor;
      const Tolerance tolerance = options.tolerance.For(outputs[o].name, full.type());
      cell.batch_max_abs_error = std::max(cell.batch_max_abs_error,
                                          CompareTensors(outputs[o].name, *expected, alone, tolerance).max_abs_error);
      auto differs = JudgeRow(judging, outputs[o].name, std::move(expected).value(), alone, tolerance,
                              fmt::format("{}={}", batch_dim, batch), row);
      if (differs) {
        cell.diagnoses.push_back(std::move(*differs));
        return;
      }
    }
  }
}

// An auto sweep's extremes that fail where the typical size runs are the model's limits, not its
// defects: each non-batch axis's smallest and largest value is probed with every other axis at its
// typical size, and one that fails is replaced by the boundary found (a size finding).
void NarrowExtremes(Session& session, const ShapeSearch& search, const std::map<std::string, ValueHint>& hints,
                    SweepReport& report) {
  const std::vector<TensorSpec>& specs = search.specs;
  InputPlan typical = search.Plan();
  const std::string batch = DetectBatchDim(specs);
  auto typical_of = [](const SweepAxis& axis) { return axis.values[std::min<std::size_t>(1, axis.values.size() - 1)]; };
  for (const auto& axis : report.axes) typical.dims[axis.dim] = typical_of(axis);
  if (RunFailure(session, specs, hints, typical)) return;  // nothing runs: the grid will say why
  for (auto& axis : report.axes) {
    if (axis.values.size() < 2) continue;
    const std::int64_t middle = typical_of(axis);
    // A batch is left as it is: a model that runs at its traced batch only (a batch baked into a Reshape)
    // must fail the sweep. Unless two batches run, the typical one and its double: then a batch that fails
    // is a requirement of the model's (ICLabel takes its components in fours), narrowed like any other.
    const bool batch_axis = axis.dim == batch || IsBatchLike(axis.dim);
    if (batch_axis) {
      InputPlan doubled = typical;
      doubled.dims[axis.dim] = middle * 2;
      if (middle < 1 || RunFailure(session, specs, hints, doubled)) continue;
    }
    for (const bool low : {true, false}) {
      const std::int64_t extreme = low ? axis.values.front() : axis.values.back();
      if (extreme == middle || (batch_axis && !low)) continue;
      auto finding =
          FindSizeBoundary(session, specs, hints, typical, axis.dim, middle, extreme, search.StepOf(axis.dim));
      if (!finding) continue;
      const std::int64_t bound = low ? finding->at_least : finding->at_most;
      for (auto& v : axis.values) v = low ? std::max(v, bound) : std::min(v, bound);
      axis.values.erase(std::unique(axis.values.begin(), axis.values.end()), axis.values.end());
      report.notes.push_back(fmt::format("sweep of '{}' kept to {} {}: {}", axis.dim,
                                         low ? "sizes from" : "sizes up to", bound, finding->Describe()));
      report.size_findings.push_back(std::move(*finding));
    }
  }
}

}  // namespace

Result<SweepAxis> ParseSweepAxis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("sweep axis '{}': expected NAME=V1,V2,... e.g. batch=1,4,16", text));
  }
  SweepAxis axis;
  axis.dim = text.substr(0, eq);
  ORTKIT_ASSIGN_OR_RETURN(
      axis.values, ParseWholeNumberList(std::string_view(text).substr(eq + 1), fmt::format("sweep axis '{}'", text),
                                        {0, std::int64_t{1} << 62}, kMostSweepValues));
  return axis;
}

std::string DetectBatchDim(const std::vector<TensorSpec>& inputs) {
  std::string candidate;
  for (const auto& spec : inputs) {
    if (spec.dims.empty()) continue;
    const DimSpec& first = spec.dims[0];
    if (first.fixed() || first.symbol.empty()) return "";
    if (candidate.empty())
      candidate = first.symbol;
    else if (candidate != first.symbol)
      return "";
  }
  return candidate;
}

namespace {

/// One automatic axis before its values are settled.
struct AutoAxis {
  std::string symbol;
  std::int64_t least = 1;
  std::int64_t typical = 1;
  std::int64_t large = 1;
  std::int64_t chosen_alone = 1;  ///< the large size chosen with every other axis at its typical size
};

// Activations are assumed to take up to 64x the input bytes: a rough bound that keeps a cell inside the
// budget for common encoders and CNNs.
constexpr std::uint64_t kActivationFactor = 64;

// The grid's largest cell holds every axis at its large size, each chosen with the others at their typical
// sizes: together they may overflow the budget (a Relu over four dynamic axes, 64 x 256 x 256 x 256 floats,
// is 4 GiB). The large size furthest above its typical one is halved, again and again, until that cell fits
// or every axis is back at its typical size. Says what it shrank in `notes`.
void KeepLargestCellInBudget(const std::vector<TensorSpec>& inputs, const InputPlan& plan,
                             std::uint64_t memory_budget_bytes, std::vector<AutoAxis>& axes,
                             std::vector<std::string>* notes) {
  auto largest_cell = [&] {
    InputPlan cell = plan;
    for (const auto& axis : axes) cell.dims[axis.symbol] = axis.large;
    return InputBytes(inputs, cell);
  };
  const std::uint64_t most = memory_budget_bytes / kActivationFactor;
  while (largest_cell() > most) {
    AutoAxis* widest = nullptr;
    for (auto& axis : axes) {
      if (axis.large <= axis.typical) continue;
      // large / typical above widest's: compared as products, both sides positive.
      if (widest == nullptr || axis.large * widest->typical > widest->large * axis.typical) widest = &axis;
    }
    if (widest == nullptr) break;
    widest->large = std::max(widest->typical, widest->large / 2);
  }
  std::vector<std::string> shrunk;
  for (const auto& axis : axes) {
    if (axis.large < axis.chosen_alone)
      shrunk.push_back(fmt::format("'{}' up to {} (alone {})", axis.symbol, axis.large, axis.chosen_alone));
  }
  if (notes != nullptr && !shrunk.empty()) {
    notes->push_back(fmt::format(
        "large sizes lowered so that the largest cell (every axis at its largest) stays within the memory budget of {} "
        "(inputs x {} for activations): {}",
        HumanBytes(memory_budget_bytes), kActivationFactor, fmt::join(shrunk, ", ")));
  }
}

}  // namespace

std::vector<SweepAxis> ChooseAutoAxes(const std::vector<TensorSpec>& inputs, const InputPlan& base,
                                      std::uint64_t memory_budget_bytes,
                                      const std::map<std::string, std::int64_t>& max_sizes,
                                      const std::map<std::string, std::int64_t>& typical_sizes,
                                      const std::map<std::string, std::int64_t>& min_sizes,
                                      std::vector<std::string>* notes) {
  std::vector<AutoAxis> chosen;
  const std::string batch = DetectBatchDim(inputs);
  InputPlan typical_plan = base;
  for (const auto& [dim, size] : typical_sizes) typical_plan.dims.emplace(dim, size);
  for (const auto& symbol : SymbolsInOrder(inputs)) {
    if (base.dims.count(symbol) || base.dim_sums.count(symbol)) continue;  // fixed by the user, or a sum of others
    // Only in inputs whose whole shape the user gave (--shape): sweeping it would change nothing.
    if (std::all_of(inputs.begin(), inputs.end(),
                    [&](const TensorSpec& s) { return base.shapes.count(s.name) || AxisOf(s, symbol) < 0; }))
      continue;
    const bool batch_like = symbol == batch || IsBatchLike(symbol);
    const auto limit = max_sizes.find(symbol);
    const std::int64_t most = limit == max_sizes.end() ? std::numeric_limits<std::int64_t>::max() : limit->second;
    const auto low = min_sizes.find(symbol);
    const std::int64_t least = low == min_sizes.end() ? 1 : low->second;
    const auto known = typical_sizes.find(symbol);
    const std::int64_t guess = batch_like                     ? 4
                               : known != typical_sizes.end() ? known->second
                                                              : std::max<std::int64_t>(DefaultDimSize(symbol, 1), 2);
    const std::int64_t typical = std::min(std::max(guess, least), std::max<std::int64_t>(most, 1));
    std::vector<std::int64_t> large_candidates = batch_like      ? std::vector<std::int64_t>{64, 32, 16, 8}
                                                 : typical >= 64 ? std::vector<std::int64_t>{typical * 2}
                                                                 : std::vector<std::int64_t>{256, 128, 64, 32};
    // The model's own limit is the largest size worth trying: one past it fails by design.
    if (most < large_candidates.front()) {
      std::erase_if(large_candidates, [&](std::int64_t c) { return c > most; });
      large_candidates.insert(large_candidates.begin(), most);
    }
    std::int64_t large = typical;
    for (std::int64_t candidate : large_candidates) {
      InputPlan plan = typical_plan;
      plan.dims[symbol] = candidate;
      if (InputBytes(inputs, plan) * kActivationFactor <= memory_budget_bytes) {
        large = candidate;
        break;
      }
    }
    chosen.push_back(AutoAxis{symbol, least, typical, std::max(large, typical), std::max(large, typical)});
  }
  KeepLargestCellInBudget(inputs, typical_plan, memory_budget_bytes, chosen, notes);
  std::vector<SweepAxis> axes;
  for (const auto& c : chosen) {
    SweepAxis axis{c.symbol, {c.least}};
    if (c.typical > c.least) axis.values.push_back(c.typical);
    if (c.large > c.typical) axis.values.push_back(c.large);
    axes.push_back(std::move(axis));
  }
  return axes;
}

bool SweepReport::Passed() const {
  return std::all_of(cells.begin(), cells.end(),
                     [](const SweepCell& c) { return c.state != SweepCell::State::kFailed; });
}

nlohmann::json SweepReport::ToJson() const {
  nlohmann::json j = {{"passed", Passed()},
                      {"batch_dim", batch_dim},
                      {"axes", nlohmann::json::array()},
                      {"cells", nlohmann::json::array()}};
  for (const auto& a : axes) j["axes"].push_back({{"dim", a.dim}, {"values", a.values}});
  j["size_findings"] = nlohmann::json::array();
  for (const auto& f : size_findings) j["size_findings"].push_back(f.ToJson());
  j["notes"] = notes;
  for (const auto& c : cells) {
    const char* state = c.state == SweepCell::State::kPassed   ? "passed"
                        : c.state == SweepCell::State::kFailed ? "failed"
                                                               : "skipped";
    j["cells"].push_back({{"dims", c.dims},
                          {"state", state},
                          {"run_ms", c.run_ms},
                          {"peak_bytes", c.peak_bytes},
                          {"batch_checked", c.batch_checked},
                          {"batch_max_abs_error", c.batch_max_abs_error},
                          {"diagnoses", c.diagnoses}});
    if (c.state == SweepCell::State::kSkipped) j["cells"].back()["skipped"] = c.skipped;
  }
  return j;
}

std::string OutputDimBehaviour::Describe() const {
  const std::string runs = fmt::format("{} run{}", seen.size(), seen.size() == 1 ? "" : "s");
  switch (kind) {
    case Kind::kFixed: return fmt::format("is {} in all {}", value, runs);
    case Kind::kFollows: {
      std::string expression = fmt::format("'{}'", axis);
      if (scale != 1) expression = fmt::format("{} x {}", scale, expression);
      if (offset != 0) expression += fmt::format(" {} {}", offset > 0 ? "+" : "-", std::abs(offset));
      return fmt::format("follows {} ({} in {})", expression, fmt::join(seen, ", "), runs);
    }
    case Kind::kGrows: return fmt::format("grows with '{}' ({} in {})", axis, fmt::join(seen, ", "), runs);
    case Kind::kVaries:
      return fmt::format(
          "varies ({} in {}) in a way no input dimension's size orders: runs at the same sizes "
          "disagree, or it rises and falls",
          fmt::join(seen, ", "), runs);
    case Kind::kUnjudged: break;
  }
  return fmt::format("cannot be judged from {}", runs);
}

OutputDimBehaviour ExplainOutputDim(const SweepReport& sweep, const std::string& output, std::size_t dimension) {
  OutputDimBehaviour behaviour;
  std::vector<const SweepCell*> cells;
  for (const auto& cell : sweep.cells) {
    auto shape = cell.output_shapes.find(output);
    if (cell.state != SweepCell::State::kPassed || shape == cell.output_shapes.end() ||
        dimension >= shape->second.size())
      continue;
    cells.push_back(&cell);
    behaviour.seen.push_back(shape->second[dimension]);
  }
  // The input sizes that changed between the runs: without a change nothing can be told apart.
  std::set<std::string> changed;
  for (const auto* cell : cells) {
    for (const auto& [axis, size] : cell->sizes) {
      if (cells.front()->sizes.count(axis) && cells.front()->sizes.at(axis) != size) changed.insert(axis);
    }
  }
  if (cells.size() < 2 || changed.empty()) return behaviour;
  const auto& seen = behaviour.seen;
  if (std::all_of(seen.begin(), seen.end(), [&](std::int64_t v) { return v == seen.front(); })) {
    behaviour.kind = OutputDimBehaviour::Kind::kFixed;
    behaviour.value = seen.front();
    return behaviour;
  }
  // size = scale * axis + offset, from the first two runs the axis differs in, checked on every run.
  for (const auto& axis : changed) {
    std::size_t other = 1;
    while (other < cells.size() && cells[other]->sizes.at(axis) == cells[0]->sizes.at(axis)) ++other;
    if (other == cells.size()) continue;
    const std::int64_t da = cells[other]->sizes.at(axis) - cells[0]->sizes.at(axis);
    const std::int64_t dv = seen[other] - seen[0];
    if (dv % da != 0) continue;
    const std::int64_t scale = dv / da;
    const std::int64_t offset = seen[0] - scale * cells[0]->sizes.at(axis);
    bool holds = scale != 0;
    for (std::size_t i = 0; i < cells.size() && holds; ++i) {
      auto size = cells[i]->sizes.find(axis);
      holds = size != cells[i]->sizes.end() && seen[i] == scale * size->second + offset;
    }
    if (!holds) continue;
    behaviour.kind = OutputDimBehaviour::Kind::kFollows;
    behaviour.axis = axis;
    behaviour.scale = scale;
    behaviour.offset = offset;
    return behaviour;
  }
  // Else one axis that orders it: equal wherever the axis is equal, and monotone in it.
  for (const auto& axis : changed) {
    std::map<std::int64_t, std::int64_t> by_size;
    bool consistent = true;
    for (std::size_t i = 0; i < cells.size() && consistent; ++i) {
      auto size = cells[i]->sizes.find(axis);
      if (size == cells[i]->sizes.end()) {
        consistent = false;
        break;
      }
      auto [it, inserted] = by_size.emplace(size->second, seen[i]);
      consistent = inserted || it->second == seen[i];
    }
    if (!consistent || by_size.size() < 2) continue;
    bool rising = true, falling = true;
    for (auto it = std::next(by_size.begin()); it != by_size.end(); ++it) {
      rising = rising && it->second >= std::prev(it)->second;
      falling = falling && it->second <= std::prev(it)->second;
    }
    if (!rising && !falling) continue;
    behaviour.kind = OutputDimBehaviour::Kind::kGrows;
    behaviour.axis = axis;
    return behaviour;
  }
  behaviour.kind = OutputDimBehaviour::Kind::kVaries;
  return behaviour;
}

namespace {

// The sweep's memory, measured: each run's peak resident memory (the runtime's arena and the outputs as much
// as the inputs), and the peak of a larger run extrapolated from the two largest measured below it, as a
// power of the input bytes fitted to them (attention's memory grows with the square of a sequence, a
// convolution's with its size), so that no run starts that would take more than the limit. The sizes the
// input bytes alone allowed once let a speech model's sweep grow to 20 GB and be killed.
class MemoryGuard {
 public:
  explicit MemoryGuard(std::uint64_t limit) : limit_(limit), baseline_(ReadResidentMemory().now) {}

  std::uint64_t limit() const { return limit_; }

  /// Runs `run` and records its peak against `input_bytes`; returns what `run` returns.
  template <typename Run>
  auto Measure(std::uint64_t input_bytes, Run run) {
    ResetPeakMemory();
    auto result = run();
    last_peak_ = ReadResidentMemory().peak;
    points_[input_bytes] = std::max(points_[input_bytes], last_peak_);
    return result;
  }
  std::uint64_t last_peak() const { return last_peak_; }

  /// Why a run with `input_bytes` is not started, or "" when it may be: its predicted peak is over the limit.
  std::string Refusal(std::uint64_t input_bytes) const {
    const auto prediction = Predict(input_bytes);
    if (!prediction || prediction->peak <= static_cast<double>(limit_)) return "";
    return fmt::format("it would take about {} ({}), over the sweep's limit of {} (--sweep-memory)",
                       HumanBytes(static_cast<std::uint64_t>(prediction->peak)), prediction->basis, HumanBytes(limit_));
  }

 private:
  struct Prediction {
    double peak = 0;
    std::string basis;  ///< the measurements behind it, for the note
  };

  // Growth below this is noise (allocator pages, the arena's rounding): a cost that small is taken to grow
  // with the square of the inputs, as attention's does, so that two cheap small runs never vouch for a
  // large one.
  static constexpr double kNoise = 4.0 * (1 << 20);

  std::optional<Prediction> Predict(std::uint64_t input_bytes) const {
    if (points_.lower_bound(input_bytes) != points_.end()) return std::nullopt;  // measured at that size or above
    if (points_.empty()) return std::nullopt;
    const auto [x2, p2] = *points_.rbegin();
    // With one run measured, or costs below the noise, the cost is taken to grow with the square.
    std::pair<std::uint64_t, std::uint64_t> before{x2 / 2, p2};
    if (points_.size() > 1) before = *std::next(points_.rbegin());
    const auto [x1, p1] = before;
    const double c2 = static_cast<double>(p2) - baseline_;
    const double c1 = static_cast<double>(p1) - baseline_;
    const bool measurable = points_.size() > 1 && c2 >= kNoise && c1 > 0;
    const double exponent =
        measurable ? std::clamp(std::log(c2 / c1) / std::log(static_cast<double>(x2) / x1), 1.0, 3.0) : 2.0;
    const double cost = std::max(c2, kNoise);
    Prediction prediction;
    prediction.peak = baseline_ + cost * std::pow(static_cast<double>(input_bytes) / x2, exponent);
    prediction.basis =
        measurable ? fmt::format(
                         "runs with {} and {} of inputs peaked at {} and {}: growing as the inputs to the "
                         "power {:.1f}",
                         HumanBytes(x1), HumanBytes(x2), HumanBytes(p1), HumanBytes(p2), exponent)
                   : fmt::format("a run with {} of inputs peaked at {}: taken to grow with the square of the inputs",
                                 HumanBytes(x2), HumanBytes(p2));
    return prediction;
  }

  std::uint64_t limit_;
  double baseline_;
  std::uint64_t last_peak_ = 0;
  std::map<std::uint64_t, std::uint64_t> points_;  ///< input bytes -> the largest peak measured at them
};

std::uint64_t MemoryLimitOf(const SweepOptions& options) {
  return options.memory_limit_bytes > 0 ? options.memory_limit_bytes : UsableMemory().bytes / 4 * 3;
}

// Each axis's values above its typical size are checked against the memory limit before anything runs
// at them: the run at the typical sizes and one at twice the axis's typical size are measured, and the
// sizes predicted to exceed the limit are dropped, said in the notes.
void KeepAxesWithinMemory(Session& session, const ShapeSearch& search, const std::map<std::string, ValueHint>& hints,
                          MemoryGuard& guard, SweepReport& report) {
  auto typical_of = [](const SweepAxis& axis) { return axis.values[std::min<std::size_t>(1, axis.values.size() - 1)]; };
  InputPlan typical = search.Plan();
  for (const auto& axis : report.axes) typical.dims[axis.dim] = typical_of(axis);
  auto run = [&](const InputPlan& plan) {
    return guard.Measure(InputBytes(search.specs, plan),
                         [&] { return RunFailure(session, search.specs, hints, plan); });
  };
  if (run(typical)) return;  // nothing runs at the typical sizes: the grid will say why
  for (auto& axis : report.axes) {
    const std::int64_t middle = typical_of(axis);
    if (axis.values.back() <= middle) continue;
    // Walk up from the typical size by doubling, measuring each, while the large size is not vouched for:
    // each step's prediction comes from the two before it, so that a cost that grows with the square shows
    // before it is paid for. A size predicted over the limit becomes the axis's largest, said in the notes.
    InputPlan plan = typical;
    std::int64_t reached = middle;
    std::string why;
    for (std::int64_t next = std::max<std::int64_t>(middle * 2, middle + 1); next < axis.values.back(); next *= 2) {
      plan.dims[axis.dim] = axis.values.back();
      if (guard.Refusal(InputBytes(search.specs, plan)).empty()) break;  // the largest size is vouched for
      plan.dims[axis.dim] = next;
      why = guard.Refusal(InputBytes(search.specs, plan));
      if (!why.empty() || run(plan)) break;  // over the limit, or a size the model refuses (NarrowExtremes)
      reached = next;
      why.clear();
    }
    std::vector<std::string> dropped;
    plan.dims[axis.dim] = axis.values.back();
    if (why.empty()) why = guard.Refusal(InputBytes(search.specs, plan));
    if (!why.empty()) {
      dropped.push_back(std::to_string(axis.values.back()));
      while (axis.values.size() > 1 && axis.values.back() > reached) axis.values.pop_back();
      if (axis.values.back() < reached) axis.values.push_back(reached);
    }
    if (!dropped.empty()) {
      report.notes.push_back(fmt::format("sweep of '{}' kept to sizes up to {}: at {} {}", axis.dim, axis.values.back(),
                                         dropped.front(), why));
    }
  }
}

// The grid's axes: the options' own, or in auto mode every symbolic dimension from its smallest size
// that runs (the search's findings, the exporter's stride) to a large one, extremes narrowed to what runs.
void ChooseAxes(Session& session, const ShapeSearch& search, const std::map<std::string, ValueHint>& hints,
                const SweepOptions& options, MemoryGuard& guard, SweepReport& report) {
  if (!options.axes.empty()) {
    report.axes = options.axes;
    return;
  }
  std::map<std::string, std::int64_t> least;
  for (const auto& [dim, step] : search.steps) {
    least[dim] = step;
    report.notes.push_back(
        fmt::format("'{}' is swept from {}, a multiple of the stride the exporter recorded (metadata 'stride': {})",
                    dim, step, step));
  }
  for (const auto& f : search.findings) {
    if (f.at_least > 0) least[f.dim] = f.at_least;
  }
  report.axes = ChooseAutoAxes(search.specs, options.base, options.memory_budget_bytes, options.max_sizes, search.grown,
                               least, &report.notes);
  if (!search.runs) return;
  KeepAxesWithinMemory(session, search, hints, guard, report);
  NarrowExtremes(session, search, hints, report);
}

// Every axis has values, and the grid's first cell is a plan the inputs accept.
Status CheckAxes(const std::vector<SweepAxis>& axes, const InputPlan& base, const std::vector<TensorSpec>& specs) {
  InputPlan check = base;
  for (const auto& axis : axes) {
    if (axis.values.empty())
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("sweep axis '{}' has no values", axis.dim));
    check.dims[axis.dim] = axis.values.front();
  }
  auto status = ValidatePlan(check, specs);
  if (!status.ok())
    return MakeError(ErrorKind::kInvalidArgument,
                     "--sweep: " + status.error().message.substr(status.error().message.find(": ") + 2));
  return OkStatus();
}

// Export rules that explain shape failures: a cell whose run fails points at them.
std::vector<Diagnosis> ShapeSuspects(const onnx::ModelProto& model) {
  std::vector<Diagnosis> suspects;
  for (auto& d : LintModel(model)) {
    if (d.code == "graph.baked-batch-reshape" || d.code == "graph.static-batch") suspects.push_back(std::move(d));
  }
  return suspects;
}

void BlameSuspects(const std::vector<Diagnosis>& suspects, Diagnosis& d) {
  for (const auto& s : suspects) {
    d.cause += fmt::format(" Likely root cause: {} ({}).", s.message, s.code);
    if (d.location.node.empty()) {
      d.location.node = s.location.node;
      d.location.op_type = s.location.op_type;
    }
  }
}

/// What every cell of one sweep shares.
struct SweepGrid {
  Session& session;
  const std::vector<TensorSpec>& input_specs;
  const std::vector<TensorSpec>& output_specs;
  const std::map<std::string, ValueHint>& hints;
  const SweepOptions& options;
  const std::string& batch_dim;
  const RowJudging& judging;
  bool rows_run_alone = true;  ///< a batch of 1 runs: each row of a batch can be checked alone
};

// NaN or Inf found in a cell whose integer inputs ortkit made up with no hint of their meaning (graph ids,
// edge lists, counts): the cell is run again with those integers 0, 1, 2, 3, 0, ... in order. When the NaN/Inf change,
// they come from values a caller would not pass (a graph with no node, an edge to a node that is not there), and the
// finding becomes a warning that says so; when they stay, it stays an error. `counts` holds the first draw's
// NaN/Inf counts by output.
void JudgeNanOnMadeUpIntegers(const SweepGrid& grid, const InputPlan& plan, SweepCell& cell);

// One cell at `plan`: the batched run, its outputs checked, and row by row against the batch.
Result<SweepCell> RunCell(const SweepGrid& grid, const InputPlan& plan, SweepCell cell) {
  // Every symbolic dimension gets a size, swept or not, so output checks know them all.
  std::map<std::string, std::int64_t> all_dims = plan.dims;
  for (const auto& spec : grid.input_specs) {
    auto shape = ResolveShape(spec, plan);
    if (!shape.ok()) continue;
    for (std::size_t d = 0; d < spec.dims.size(); ++d) {
      if (!spec.dims[d].fixed() && !spec.dims[d].symbol.empty()) all_dims.emplace(spec.dims[d].symbol, (*shape)[d]);
    }
  }
  ORTKIT_ASSIGN_OR_RETURN(auto inputs, SynthesizeInputs(grid.input_specs, grid.hints, plan));
  const auto start = std::chrono::steady_clock::now();
  auto outputs = RunSession(grid.session, RunRequest{inputs, {}});
  cell.run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outputs.ok()) {
    auto d = TranslateRuntimeError(outputs.error().message, {}, /*during_run=*/true);
    d.message = AtCell(cell.dims) + d.message;
    cell.diagnoses.push_back(std::move(d));
    return cell;
  }
  CheckOutputs(grid.output_specs, *outputs, all_dims, cell);
  JudgeNanOnMadeUpIntegers(grid, plan, cell);
  cell.sizes = all_dims;
  for (const auto& out : *outputs) cell.output_shapes[out.name] = out.tensor.shape();
  auto batch = all_dims.find(grid.batch_dim);
  if (grid.options.batch_consistency && grid.rows_run_alone && !grid.batch_dim.empty() && batch != all_dims.end() &&
      batch->second > 1 && cell.diagnoses.empty()) {
    CheckBatchConsistency(grid.session, grid.input_specs, grid.output_specs, inputs, *outputs, grid.batch_dim,
                          batch->second, grid.options, grid.judging, cell);
  }
  return cell;
}

std::int64_t NonFiniteCount(const std::vector<NamedTensor>& outputs) {
  std::int64_t bad = 0;
  for (const auto& out : outputs) {
    const Tensor& t = out.tensor;
    if (t.is_string() || !FindDataType(t.type())->is_float) continue;
    for (std::int64_t i = 0; i < t.element_count(); ++i) bad += !std::isfinite(t.AsDouble(i));
  }
  return bad;
}

void JudgeNanOnMadeUpIntegers(const SweepGrid& grid, const InputPlan& plan, SweepCell& cell) {
  if (std::none_of(cell.diagnoses.begin(), cell.diagnoses.end(),
                   [](const Diagnosis& d) { return d.code == "sweep.nan-inf"; }))
    return;
  std::vector<std::string> made_up;
  for (const auto& spec : grid.input_specs) {
    const DataTypeInfo* info = FindDataType(spec.type);
    if (info == nullptr || info->is_float || spec.type == DataType::kBool || spec.type == DataType::kString) continue;
    if (grid.hints.count(spec.name) || spec.dims.empty()) continue;
    made_up.push_back(spec.name);
  }
  if (made_up.empty()) return;
  // The first draw again, and one where the integers cover 0 to 3 in order (every small index appears).
  std::int64_t first = 0, second = -1;
  for (const bool covering : {false, true}) {
    InputPlan draw = plan;
    draw.covering_integers = covering;
    auto inputs = SynthesizeInputs(grid.input_specs, grid.hints, draw);
    if (!inputs.ok()) return;
    auto outputs = RunSession(grid.session, RunRequest{*inputs, {}});
    if (!outputs.ok()) return;
    (covering ? second : first) = NonFiniteCount(*outputs);
  }
  if (second == first) return;  // the same whatever the integers hold: the model's own
  for (auto& d : cell.diagnoses) {
    if (d.code != "sweep.nan-inf") continue;
    d.severity = Severity::kWarning;
    d.message += fmt::format(
        "; with another draw of the integer input{} ortkit made up ('{}', whose meaning it cannot "
        "know), 0 to 3 in order, the run holds {} NaN/Inf instead of {}: they come from those values, which a "
        "caller may never pass. Give real ones with --input to judge",
        made_up.size() == 1 ? "" : "s", fmt::join(made_up, "', '"), second, first);
  }
}

// Once one cell showed its NaN/Inf to come from the integers ortkit made up (JudgeNanOnMadeUpIntegers), the
// NaN/Inf of the other cells are taken to come from them too (a grid with more graph slots than nodes leaves
// graphs empty whatever the order): warnings that point at the cell that showed it.
void SettleNanOnMadeUpIntegers(SweepReport& report) {
  std::string shown;
  for (const auto& cell : report.cells) {
    for (const auto& d : cell.diagnoses) {
      if (d.code == "sweep.nan-inf" && d.severity == Severity::kWarning && shown.empty()) shown = AtCell(cell.dims);
    }
  }
  if (shown.empty()) return;
  for (auto& cell : report.cells) {
    bool changed = false;
    for (auto& d : cell.diagnoses) {
      if (d.code != "sweep.nan-inf" || d.severity != Severity::kError) continue;
      d.severity = Severity::kWarning;
      d.message += fmt::format(
          "; {}the integer inputs ortkit made up were shown to cause such values: give real ones "
          "with --input to judge",
          shown);
      changed = true;
    }
    if (changed && WorstSeverity(cell.diagnoses) != Severity::kError) cell.state = SweepCell::State::kPassed;
  }
}

// Moves `odometer` to the next cell of the row-major grid; false after the last.
bool NextCell(const std::vector<SweepAxis>& axes, std::vector<std::size_t>& odometer) {
  for (std::size_t a = axes.size(); a-- > 0;) {
    if (++odometer[a] < axes[a].values.size()) return true;
    odometer[a] = 0;
  }
  return false;
}

}  // namespace

Result<SweepReport> RunSweep(Session& session, const onnx::ModelProto& model, const SweepOptions& options) {
  ORTKIT_ASSIGN_OR_RETURN(auto described, DescribeInputs(session));
  ORTKIT_ASSIGN_OR_RETURN(auto output_specs, DescribeOutputs(session));
  const auto hints = AnalyzeInputValues(model);
  const ShapeSearch search =
      options.search ? *options.search : SearchShapes(session, described, hints, options.base, &model);
  SweepReport report;
  report.size_findings = search.findings;
  report.notes = search.notes;
  MemoryGuard guard(MemoryLimitOf(options));
  ChooseAxes(session, search, hints, options, guard, report);
  ORTKIT_RETURN_IF_ERROR(CheckAxes(report.axes, options.base, search.specs));
  report.batch_dim = options.batch_dim.empty() ? DetectBatchDim(search.specs) : options.batch_dim;
  const std::vector<Diagnosis> suspects = ShapeSuspects(model);
  const RowJudging judging{model, SummarizeQuantization(model), DynamicQuantisationNode(model)};
  SweepGrid grid{session, search.specs, output_specs, hints, options, report.batch_dim, judging};
  // A model whose batch must be at least n (a requirement the size search found) cannot run a row alone.
  for (const auto& axis : report.axes) {
    if (axis.dim != report.batch_dim || axis.values.empty() || axis.values.front() <= 1) continue;
    grid.rows_run_alone = false;
    if (options.batch_consistency)
      report.notes.push_back(
          fmt::format("batch consistency not checked: '{}' is never 1 (the model needs at least {}), "
                      "so no row runs alone",
                      axis.dim, axis.values.front()));
  }
  std::vector<std::size_t> odometer(report.axes.size(), 0);
  do {
    InputPlan plan = search.Plan();
    SweepCell cell;
    for (std::size_t a = 0; a < report.axes.size(); ++a) {
      plan.dims[report.axes[a].dim] = report.axes[a].values[odometer[a]];
      cell.dims[report.axes[a].dim] = report.axes[a].values[odometer[a]];
    }
    const std::uint64_t input_bytes = InputBytes(search.specs, plan);
    if (std::string refusal = guard.Refusal(input_bytes); !refusal.empty()) {
      cell.state = SweepCell::State::kSkipped;
      cell.skipped = std::move(refusal);
      report.notes.push_back(fmt::format("{}not run: {}", AtCell(cell.dims), cell.skipped));
      report.cells.push_back(std::move(cell));
      continue;
    }
    ORTKIT_ASSIGN_OR_RETURN(cell, guard.Measure(input_bytes, [&] { return RunCell(grid, plan, std::move(cell)); }));
    cell.peak_bytes = guard.last_peak();
    for (auto& d : cell.diagnoses) {
      if (d.code.rfind("runtime.", 0) == 0) BlameSuspects(suspects, d);
    }
    if (WorstSeverity(cell.diagnoses) == Severity::kError) cell.state = SweepCell::State::kFailed;
    report.cells.push_back(std::move(cell));
  } while (NextCell(report.axes, odometer));
  SettleNanOnMadeUpIntegers(report);
  return report;
}

}  // namespace ortkit
