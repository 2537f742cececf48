#include "ortkit/check/lint.h"

#include <algorithm>
#include <array>
#include <exception>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "ortkit/check/lint_index.h"

namespace ortkit {
namespace {

using namespace lint;  // the index, the findings collector and the rule functions the table names

using RuleFunction = void (*)(const ModelIndex&, const LintOptions&, Findings&);

struct Rule {
  std::string_view code;
  RuleFunction check;
};

// Structural rules first: when they fire, the exporter-habit rules below may be confused too.
constexpr std::array kRules = std::to_array<Rule>({
    {"graph.no-outputs", CheckNoOutputs},
    {"graph.undefined-value", CheckUndefinedValue},
    {"graph.duplicate-name", CheckDuplicateName},
    {"graph.cycle", CheckCycle},
    {"graph.bad-dimension", CheckBadDimension},
    {"graph.minus-one-dimension", CheckMinusOneDimension},
    {"graph.opset-too-old", CheckOpsetTooOld},
    {"graph.opset-too-new", CheckOpsetTooNew},
    {"graph.custom-domain", CheckCustomDomain},
    {"graph.unused-opset-import", CheckUnusedOpsetImport},
    {"graph.training-dropout", CheckTrainingDropout},
    {"graph.training-batchnorm", CheckTrainingBatchNorm},
    {"graph.static-batch", CheckStaticBatch},
    {"graph.baked-batch-reshape", CheckBakedBatchReshape},
    {"graph.dynamic-resize", CheckDynamicResize},
    {"graph.float64-mixed", CheckFloat64Mixed},
    {"graph.unused-input", CheckUnusedInput},
    {"graph.initializer-as-input", CheckInitializerAsInput},
    {"graph.output-internal-name", CheckOutputInternalName},
    {"graph.logits-to-keep-input", CheckLogitsToKeepInput},
    {"graph.captured-constant-input", CheckCapturedConstantInput},
    {"shape.dim-name-inconsistent", CheckDimNameInconsistent},
});

}  // namespace

std::vector<std::string_view> LintRuleCodes() {
  std::vector<std::string_view> codes;
  for (const auto& rule : kRules) codes.push_back(rule.code);
  return codes;
}

std::vector<Diagnosis> LintModel(const onnx::ModelProto& model, const LintOptions& options) {
  std::vector<Diagnosis> diagnoses;
  try {
    const ModelIndex index(model);
    for (const auto& rule : kRules) {
      if (std::find(options.disabled_rules.begin(), options.disabled_rules.end(), rule.code) !=
          options.disabled_rules.end()) {
        continue;
      }
      Findings findings(rule.code, options.max_diagnoses_per_rule);
      std::optional<std::string> failure;
      try {
        rule.check(index, options, findings);
      } catch (const std::exception& e) {  // out of memory on a giant model, or a bug: keep the other rules
        failure = e.what();
      }
      auto found = findings.Take();
      diagnoses.insert(diagnoses.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
      if (failure) {
        diagnoses.push_back(
            Diagnose("internal.rule-failed", fmt::format("rule {} stopped early: {}", rule.code, *failure)));
      }
    }
  } catch (const std::exception& e) {
    diagnoses.push_back(
        Diagnose("internal.rule-failed", fmt::format("the lint rules could not index the model: {}", e.what())));
  }
  return diagnoses;
}

}  // namespace ortkit
