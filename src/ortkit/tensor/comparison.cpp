#include "ortkit/tensor/comparison.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit {

Tolerance DefaultTolerance(DataType type) {
  switch (type) {
    case DataType::kFloat32: return {1e-5, 1e-3};
    case DataType::kFloat16: return {1e-3, 1e-2};
    case DataType::kBFloat16: return {1e-2, 2e-2};
    // One step of the mantissa relative, and the smallest subnormal absolute.
    case DataType::kFloat8E4M3FN: return {0x1p-9, 0.125};
    case DataType::kFloat8E4M3FNUZ: return {0x1p-10, 0.125};
    case DataType::kFloat8E5M2: return {0x1p-16, 0.25};
    case DataType::kFloat8E5M2FNUZ: return {0x1p-17, 0.25};
    case DataType::kFloat4E2M1: return {0.5, 0.5};
    case DataType::kFloat64: return {1e-8, 1e-6};
    default: return {0, 0};
  }
}

Tolerance ToleranceRules::For(const std::string& output, DataType type) const {
  if (auto it = per_output.find(output); it != per_output.end()) return it->second;
  Tolerance t = DefaultTolerance(type);
  t.scaled = !atol && t.atol > 0;
  if (atol) t.atol = *atol;
  if (rtol) t.rtol = *rtol;
  return t;
}

Status ToleranceRules::Validate() const {
  auto check = [](double value, const std::string& what) -> Status {
    if (std::isfinite(value) && value >= 0) return OkStatus();
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{} is {}: a tolerance must be a finite number >= 0 (0 asks for exact equality)", what, value));
  };
  if (atol) ORTKIT_RETURN_IF_ERROR(check(*atol, "--atol"));
  if (rtol) ORTKIT_RETURN_IF_ERROR(check(*rtol, "--rtol"));
  for (const auto& [output, t] : per_output) {
    ORTKIT_RETURN_IF_ERROR(check(t.atol, fmt::format("--per-output {}: ATOL", output)));
    ORTKIT_RETURN_IF_ERROR(check(t.rtol, fmt::format("--per-output {}: RTOL", output)));
  }
  return OkStatus();
}

namespace {

// The first differing string is the worst: strings have no distance.
void CompareStrings(const Tensor& expected, const Tensor& actual, OutputComparison& c) {
  c.strings = true;
  for (std::int64_t i = 0; i < c.elements; ++i) {
    if (expected.strings()[i] != actual.strings()[i]) {
      if (c.mismatches++ == 0) c.worst_index = i;
    }
  }
  if (c.worst_index >= 0) {
    c.worst_expected_string = expected.strings()[c.worst_index];
    c.worst_actual_string = actual.strings()[c.worst_index];
  }
}

// Whether element (e, a) lies outside `tolerance`; counts NaN/Inf disagreements and accumulates the
// finite errors into `c`. `abs_error` is the finite error, 0 for NaN/Inf elements.
bool ElementMismatches(double e, double a, const Tolerance& tolerance, OutputComparison& c, double& abs_error) {
  abs_error = 0;
  if (std::isnan(e) || std::isnan(a)) {
    if (std::isnan(e) == std::isnan(a)) {
      ++c.nan_both;
      return false;
    }
    (std::isnan(a) ? c.nan_only_actual : c.nan_only_expected)++;
    return true;
  }
  if (std::isinf(e) || std::isinf(a)) {
    if (e == a) return false;
    ++c.inf_mismatch;
    return true;
  }
  abs_error = std::fabs(a - e);
  c.max_abs_error = std::max(c.max_abs_error, abs_error);
  if (e != 0)
    c.max_rel_error = std::max(c.max_rel_error, abs_error / std::fabs(e));
  else if (abs_error > 0)
    c.max_rel_error = std::max(c.max_rel_error, abs_error / std::max(tolerance.atol, 1e-300));
  return abs_error > tolerance.atol + tolerance.rtol * std::fabs(e);
}

// Where the error is largest when no element mismatches, for information.
std::int64_t LargestErrorIndex(const Tensor& expected, const Tensor& actual, std::int64_t elements) {
  std::int64_t index = -1;
  double largest = -1;
  for (std::int64_t i = 0; i < elements; ++i) {
    const double err = std::fabs(actual.AsDouble(i) - expected.AsDouble(i));
    if (std::isfinite(err) && err > largest) {
      largest = err;
      index = i;
    }
  }
  return index;
}

// The scaled absolute tolerance is for the elements whose sum cancels to near zero: a part of an output
// (ONNX's own DFT and STFT tests run by ONNX Runtime: 10% and 5.2% of the elements, the imaginary parts
// that cancel). When more than a quarter (and more than kScaleOnlyFloor elements) pass only thanks to
// it, one large value has stretched the tolerance over values that are simply different: the output fails.
constexpr double kScaleOnlyShare = 0.25;
constexpr std::int64_t kScaleOnlyFloor = 8;

bool TooManyScaleOnly(const OutputComparison& c) {
  return c.scale_only > kScaleOnlyFloor && static_cast<double>(c.scale_only) > kScaleOnlyShare * c.elements;
}

// `tolerance` arrives unscaled; a scaled atol is multiplied by the largest finite |expected| first.
void CompareNumbers(const Tensor& expected, const Tensor& actual, Tolerance tolerance, OutputComparison& c) {
  const double unscaled_atol = tolerance.atol;
  if (tolerance.scaled) {
    for (std::int64_t i = 0; i < c.elements; ++i) {
      const double e = std::fabs(expected.AsDouble(i));
      if (std::isfinite(e)) c.atol_scale = std::max(c.atol_scale, e);
    }
    tolerance.atol *= c.atol_scale;
  }
  double sum_abs = 0;
  double worst_excess = -1;
  for (std::int64_t i = 0; i < c.elements; ++i) {
    const double e = expected.AsDouble(i);
    double abs_error = 0;
    const bool bad = ElementMismatches(e, actual.AsDouble(i), tolerance, c, abs_error);
    sum_abs += abs_error;
    if (!bad && c.atol_scale > 1 && abs_error > unscaled_atol + tolerance.rtol * std::fabs(e)) ++c.scale_only;
    if (!bad) continue;
    ++c.mismatches;
    // Worst: NaN/Inf disagreements first, then the largest excess over the tolerance.
    const double excess = std::isfinite(abs_error) && abs_error > 0
                              ? abs_error - (tolerance.atol + tolerance.rtol * std::fabs(e))
                              : HUGE_VAL;
    if (excess > worst_excess) {
      worst_excess = excess;
      c.worst_index = i;
    }
  }
  const std::int64_t finite = c.elements - c.nan_only_actual - c.nan_only_expected - c.inf_mismatch - c.nan_both;
  c.mean_abs_error = finite > 0 ? sum_abs / static_cast<double>(finite) : 0;
  if (c.worst_index < 0 && c.elements > 0) c.worst_index = LargestErrorIndex(expected, actual, c.elements);
  if (c.worst_index >= 0) {
    c.worst_expected = expected.AsDouble(c.worst_index);
    c.worst_actual = actual.AsDouble(c.worst_index);
  }
}

std::vector<std::int64_t> MultiIndex(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> position(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      position[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  return position;
}

// The sentence for a failed comparison of equal types and shapes.
std::string DescribeMismatches(const OutputComparison& c) {
  if (c.strings) return fmt::format("{} of {} strings differ", c.mismatches, c.elements);
  if (c.mismatches == 0) {  // TooManyScaleOnly
    return fmt::format(
        "{} of {} elements ({:.3g}%) are within the tolerance only because its absolute part was scaled by the "
        "output's largest |value| {:.4g} (atol {:g}): that scale allows for the elements that cancel to near "
        "zero, not for most of them; one large value hides errors everywhere else (give --atol to judge them as "
        "given)",
        c.scale_only, c.elements, 100.0 * static_cast<double>(c.scale_only) / static_cast<double>(c.elements),
        c.atol_scale, c.EffectiveAtol());
  }
  const double atol = c.EffectiveAtol();
  const std::string atol_text = c.atol_scale > 1 ? fmt::format("{:g} ({:g} × the output's largest |value| {:.4g})",
                                                               atol, c.tolerance.atol, c.atol_scale)
                                                 : fmt::format("{:g}", atol);
  std::string problem = fmt::format(
      "{} of {} elements ({:.3g}%) exceed atol {} + rtol {:g} × |expected|", c.mismatches, c.elements,
      100.0 * static_cast<double>(c.mismatches) / static_cast<double>(std::max<std::int64_t>(1, c.elements)), atol_text,
      c.tolerance.rtol);
  if (c.nan_only_actual > 0) problem += fmt::format("; {} NaN only in the run", c.nan_only_actual);
  if (c.nan_only_expected > 0) problem += fmt::format("; {} NaN only in the reference", c.nan_only_expected);
  if (c.inf_mismatch > 0) problem += fmt::format("; {} infinities disagree", c.inf_mismatch);
  return problem;
}

}  // namespace

OutputComparison CompareTensors(const std::string& name, const Tensor& expected, const Tensor& actual,
                                Tolerance tolerance) {
  OutputComparison c;
  c.name = name;
  c.expected_desc = expected.Describe();
  c.actual_desc = actual.Describe();
  c.tolerance = tolerance;
  c.type_match = expected.type() == actual.type();
  c.shape_match = expected.shape() == actual.shape();
  if (!c.type_match) {
    c.passed = false;
    c.problem = fmt::format("element type differs: expected {}, got {}", c.expected_desc, c.actual_desc);
    return c;
  }
  if (!c.shape_match) {
    c.passed = false;
    c.problem = fmt::format("shape differs: expected {}, got {}", c.expected_desc, c.actual_desc);
    return c;
  }
  c.elements = expected.element_count();
  if (expected.is_string()) {
    CompareStrings(expected, actual, c);
  } else {
    CompareNumbers(expected, actual, tolerance, c);
  }
  if (c.worst_index >= 0) c.worst_position = MultiIndex(c.worst_index, expected.shape());
  c.passed = c.mismatches == 0 && !TooManyScaleOnly(c);
  if (!c.passed) c.problem = DescribeMismatches(c);
  return c;
}

nlohmann::json OutputComparison::ToJson() const {
  nlohmann::json j = {{"name", name},
                      {"passed", passed},
                      {"expected", expected_desc},
                      {"actual", actual_desc},
                      {"atol", EffectiveAtol()},
                      {"atol_scale", atol_scale},
                      {"rtol", tolerance.rtol},
                      {"shape_match", shape_match},
                      {"type_match", type_match},
                      {"elements", elements},
                      {"mismatches", mismatches},
                      {"scale_only", scale_only},
                      {"max_abs_error", max_abs_error},
                      {"max_rel_error", max_rel_error},
                      {"mean_abs_error", mean_abs_error},
                      {"nan_only_actual", nan_only_actual},
                      {"nan_only_expected", nan_only_expected},
                      {"nan_both", nan_both},
                      {"inf_mismatch", inf_mismatch}};
  if (worst_index >= 0) {
    j["worst"] =
        strings ? nlohmann::json{{"index", worst_position},
                                 {"expected", worst_expected_string},
                                 {"actual", worst_actual_string}}
                : nlohmann::json{{"index", worst_position}, {"expected", worst_expected}, {"actual", worst_actual}};
  }
  if (!problem.empty()) j["problem"] = problem;
  j["judged"] = ToString(judged);
  if (agreement) j["agreement"] = agreement->ToJson();
  if (quantization_step) j["quantization_step"] = *quantization_step;
  if (!judgement.empty()) j["judgement"] = judgement;
  return j;
}

const char* ToString(OutputComparison::Judged judged) {
  switch (judged) {
    case OutputComparison::Judged::kFloat: return "float";
    case OutputComparison::Judged::kRounding: return "rounding";
    case OutputComparison::Judged::kBeyondRounding: return "beyond-rounding";
    case OutputComparison::Judged::kPurposeLost: return "purpose-lost";
  }
  return "float";
}

bool ComparisonReport::Passed() const {
  return missing_in_run.empty() && std::all_of(outputs.begin(), outputs.end(), [](const auto& o) { return o.passed; });
}

nlohmann::json ComparisonReport::ToJson() const {
  nlohmann::json j = {{"passed", Passed()}, {"outputs", nlohmann::json::array()}};
  for (const auto& o : outputs) j["outputs"].push_back(o.ToJson());
  j["missing_in_run"] = missing_in_run;
  j["not_in_reference"] = not_in_reference;
  return j;
}

ComparisonReport CompareOutputs(std::span<const NamedTensor> expected, std::span<const NamedTensor> actual,
                                const ToleranceRules& rules) {
  ComparisonReport report;
  for (const auto& e : expected) {
    auto a = std::find_if(actual.begin(), actual.end(), [&](const NamedTensor& t) { return t.name == e.name; });
    if (a == actual.end()) {
      report.missing_in_run.push_back(e.name);
      continue;
    }
    report.outputs.push_back(CompareTensors(e.name, e.tensor, a->tensor, rules.For(e.name, e.tensor.type())));
  }
  for (const auto& a : actual) {
    if (std::none_of(expected.begin(), expected.end(), [&](const NamedTensor& t) { return t.name == a.name; })) {
      report.not_in_reference.push_back(a.name);
    }
  }
  return report;
}

}  // namespace ortkit
