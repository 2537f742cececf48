#include "ortkit/validate/purpose_judgement.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/model/output_purpose.h"

namespace ortkit {
namespace {

using Judged = OutputComparison::Judged;

// What each purpose must keep. Rounding: the share of rows (or elements) that quantised kernels leave as
// they were; measured on ONNX Runtime's own quantised models (opt-levels cross-check, synthesised inputs):
// top-1 unchanged in every row, per-row cosine >= 0.9996, errors a fraction of a percent of the range.
// Survives: the output still does its job for nearly every row.
struct PurposeBar {
  double rounding;
  double survives;
};
constexpr PurposeBar kTop1Share{0.99, 0.9};      ///< rows keeping their best class (near ties count)
constexpr PurposeBar kMinCosine{0.999, 0.99};    ///< the lowest per-row cosine
constexpr PurposeBar kRelativeError{0.01, 0.1};  ///< max error over the output's range (lower is better)
constexpr PurposeBar kEqualShare{0.99, 0.9};     ///< labels that are equal

const NamedTensor* Find(std::span<const NamedTensor> tensors, const std::string& name) {
  auto it = std::find_if(tensors.begin(), tensors.end(), [&](const NamedTensor& t) { return t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

bool Comparable(const OutputComparison& o, const Tensor& expected) {
  const DataTypeInfo* info = FindDataType(expected.type());
  return o.shape_match && o.type_match && !o.strings && info != nullptr && expected.element_count() > 0;
}

/// Where the agreement stands against `bar`: 2 at rounding level, 1 when the purpose survives, 0 otherwise.
int Level(const Agreement& a) {
  const auto at_least = [](double v, PurposeBar bar) { return v >= bar.rounding ? 2 : v >= bar.survives ? 1 : 0; };
  switch (a.purpose) {
    case OutputPurpose::kScores: return at_least(a.Top1Share(), kTop1Share);
    case OutputPurpose::kEmbedding: return at_least(a.min_cosine, kMinCosine);
    case OutputPurpose::kLabels:
      return at_least(a.elements > 0 ? static_cast<double>(a.equal) / static_cast<double>(a.elements) : 1, kEqualShare);
    case OutputPurpose::kValues: break;
  }
  const double relative = a.RelativeError();
  return relative <= kRelativeError.rounding ? 2 : relative <= kRelativeError.survives ? 1 : 0;
}

std::string StepsText(const OutputComparison& o) {
  if (!o.quantization_step) return "";
  return fmt::format("; max abs error {:.3g} is {:.3g} steps of the quantisation scale {:.3g} it is computed from",
                     o.max_abs_error, o.max_abs_error / *o.quantization_step, *o.quantization_step);
}

std::string Verdict(Judged judged) {
  switch (judged) {
    case Judged::kRounding: return "within the rounding that quantised kernels change";
    case Judged::kBeyondRounding: return "beyond rounding, though the output still serves its purpose";
    case Judged::kPurposeLost: return "beyond rounding: the output no longer serves its purpose";
    case Judged::kFloat: break;
  }
  return "";
}

void Judge(OutputComparison& o, const QuantizationSummary& quantization) {
  const Agreement& a = *o.agreement;
  const bool one_sided_nan = o.nan_only_actual > 0 || o.nan_only_expected > 0 || o.inf_mismatch > 0;
  const bool within_steps = o.quantization_step && o.max_abs_error <= kRoundingSteps * *o.quantization_step;
  const int level = one_sided_nan ? 0 : within_steps ? 2 : Level(a);
  o.judged = level == 2 ? Judged::kRounding : level == 1 ? Judged::kBeyondRounding : Judged::kPurposeLost;
  o.passed = o.judged == Judged::kRounding;
  o.judgement = fmt::format("quantised model, {}: judged as {}: {}{}; {} (float figures: {})", quantization.Describe(),
                            ToString(a.purpose), a.Describe(), StepsText(o), Verdict(o.judged), o.problem);
}

}  // namespace

void JudgeByPurpose(ComparisonReport& comparison, std::span<const NamedTensor> expected,
                    std::span<const NamedTensor> actual, const onnx::ModelProto& model,
                    const QuantizationSummary& quantization) {
  for (auto& o : comparison.outputs) {
    const NamedTensor* e = Find(expected, o.name);
    const NamedTensor* a = Find(actual, o.name);
    if (e == nullptr || a == nullptr || !Comparable(o, e->tensor)) continue;
    const OutputPurpose purpose = GuessOutputPurpose(model, o.name, e->tensor);
    if (quantization.quantized()) o.quantization_step = OutputQuantizationStep(model, o.name);
    // A difference within one step of the output's quantisation is a tie between its best entries.
    o.agreement = MeasureAgreement(e->tensor, a->tensor, purpose, 5, o.quantization_step.value_or(0));
    if (quantization.quantized() && !o.passed) Judge(o, quantization);
  }
}

std::string DescribeAgreements(const ComparisonReport& comparison) {
  std::vector<std::string> parts;
  for (const auto& o : comparison.outputs) {
    if (!o.agreement) continue;
    parts.push_back(fmt::format("'{}' ({}): {}{}", o.name, ToString(o.agreement->purpose), o.agreement->Describe(),
                                o.judged == Judged::kFloat ? "" : fmt::format(" [{}]", ToString(o.judged))));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace ortkit
