#include "ortkit/validate/model_equivalence.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/runtime/run.h"

namespace ortkit {
namespace {

constexpr std::string_view kOriginal = "original";
constexpr std::string_view kConverted = "converted";

/// The symbolic dimensions the inputs have and the plan leaves open, in order of appearance.
std::vector<std::string> OpenSymbols(const std::vector<TensorSpec>& specs, const InputPlan& plan) {
  std::vector<std::string> symbols;
  for (const auto& spec : specs) {
    if (plan.shapes.count(spec.name) != 0) continue;
    for (std::size_t axis = 0; axis < spec.dims.size(); ++axis) {
      const auto& dim = spec.dims[axis];
      if (dim.fixed() || dim.symbol.empty() || plan.dims.count(dim.symbol) != 0 || plan.dim_sums.count(dim.symbol) != 0)
        continue;
      if (std::find(symbols.begin(), symbols.end(), dim.symbol) == symbols.end()) symbols.push_back(dim.symbol);
    }
  }
  return symbols;
}

/// The second shape: every open symbolic dimension at twice its first size (a batch of 1 becomes 3,
/// so that batch-size bugs at 2 do not hide). Without symbolic dimensions, the same shapes with
/// other values (another seed).
InputPlan SecondPlan(const std::vector<TensorSpec>& specs, const InputPlan& first) {
  InputPlan second = first;
  for (const auto& symbol : OpenSymbols(specs, first)) {
    const std::int64_t size = DefaultDimSize(symbol, 0);
    second.dims[symbol] = size == 1 ? 3 : size * 2;
  }
  second.seed = first.seed + 1;
  return second;
}

std::string PlanLabel(const std::vector<TensorSpec>& specs, const InputPlan& plan) {
  std::vector<std::string> parts;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    for (std::size_t axis = 0; axis < spec.dims.size(); ++axis) {
      const auto& dim = spec.dims[axis];
      if (dim.fixed() || dim.symbol.empty() || !seen.insert(dim.symbol).second) continue;
      auto it = plan.dims.find(dim.symbol);
      parts.push_back(
          fmt::format("{}={}", dim.symbol, it != plan.dims.end() ? it->second : DefaultDimSize(dim.symbol, axis)));
    }
  }
  if (parts.empty()) return fmt::format("fixed shapes, seed {}", plan.seed);
  return fmt::format("{}", fmt::join(parts, ", "));
}

bool FromSide(const Error& error, std::string_view side) {
  return error.message.rfind(fmt::format("{}: ", side), 0) == 0;
}

}  // namespace

nlohmann::json ShapeTrial::ToJson() const {
  nlohmann::json json = {{"label", label}, {"inputs", shapes}};
  if (report) json["comparison"] = report->ToJson();
  if (!skipped.empty()) json["skipped"] = skipped;
  json["nan_both"] = nan_both;
  return json;
}

bool EquivalenceReport::Passed() const {
  bool ran = false;
  for (const auto& trial : trials) {
    if (!trial.report) continue;
    ran = true;
    if (!trial.report->Passed()) return false;
  }
  return ran;
}

double EquivalenceReport::MaxAbsError() const {
  double worst = 0;
  for (const auto& trial : trials) {
    if (!trial.report) continue;
    for (const auto& output : trial.report->comparison.outputs) worst = std::max(worst, output.max_abs_error);
  }
  return worst;
}

nlohmann::json EquivalenceReport::ToJson() const {
  nlohmann::json json_trials = nlohmann::json::array();
  for (const auto& t : trials) json_trials.push_back(t.ToJson());
  return {{"passed", Passed()}, {"max_abs_error", MaxAbsError()}, {"trials", json_trials}};
}

std::int64_t EquivalenceReport::NanBoth() const {
  std::int64_t total = 0;
  for (const auto& trial : trials) total += trial.nan_both;
  return total;
}

Result<EquivalenceReport> CheckEquivalence(Runtime& runtime, const ModelToLoad& original,
                                           std::string_view candidate_bytes, const onnx::ModelProto& original_proto,
                                           const EquivalenceOptions& options) {
  std::vector<TensorSpec> specs;
  {
    auto session = OpenModel(runtime, original, options.session);
    if (!session.ok()) return MakeError(ErrorKind::kRuntime, fmt::format("{}: {}", kOriginal, session.error().message));
    ORTKIT_ASSIGN_OR_RETURN(specs, DescribeInputs(**session));
  }
  const auto hints = AnalyzeInputValues(original_proto);
  CrossCheckPlan plan;
  plan.a = CrossCheckSide{std::string(kOriginal), options.session, original};
  plan.b = CrossCheckSide{std::string(kConverted), options.session, ModelToLoad{{}, candidate_bytes}};

  EquivalenceReport proof;
  const InputPlan plans[] = {options.inputs, SecondPlan(specs, options.inputs)};
  for (std::size_t i = 0; i < 2; ++i) {
    ShapeTrial trial;
    trial.label = PlanLabel(specs, plans[i]);
    auto inputs = SynthesizeInputs(specs, hints, plans[i]);
    if (!inputs.ok()) {
      if (i == 0) return inputs.error();
      trial.skipped = inputs.error().message;
      proof.trials.push_back(std::move(trial));
      continue;
    }
    for (const auto& input : *inputs) trial.shapes.push_back(fmt::format("{} {}", input.name, input.tensor.Describe()));
    auto report = CrossCheck(runtime, original, plan, *inputs, options.tolerance);
    if (!report.ok()) {
      // At the second shape the original may simply not run (a model that fixes its batch
      // internally): that shape says nothing about the conversion.
      if (i == 1 && FromSide(report.error(), kOriginal)) {
        trial.skipped = fmt::format("the original model does not run at this shape: {}", report.error().message);
        proof.trials.push_back(std::move(trial));
        continue;
      }
      return MakeError(ErrorKind::kRuntime, report.error().message);
    }
    // The cross-check fails outputs that are NaN on both sides; here such elements are equal (the
    // conversion kept them) but prove nothing: counted and reported, not a difference.
    for (auto& o : report->comparison.outputs) {
      if (o.nan_both == 0) continue;
      trial.nan_both += o.nan_both;
      if (o.mismatches == 0 && o.shape_match && o.type_match) {
        o.passed = true;
        o.problem.clear();
      }
    }
    trial.report = std::move(report).value();
    proof.trials.push_back(std::move(trial));
  }
  return proof;
}

}  // namespace ortkit
