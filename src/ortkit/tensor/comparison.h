#pragma once
// Comparing a run's outputs with expected values: per-output error statistics against
// |actual - expected| <= atol + rtol * |expected|.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/tensor/agreement.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
  /// The default tolerance's absolute part grows with the output's magnitude: atol × the largest finite
  /// |expected| when that is above 1. Float rounding in a sum is relative to the size of its terms, so an
  /// element that cancels to near 0 in an output whose values reach 250 carries errors near 250 × eps
  /// (a healthy T5 differs from PyTorch by 7e-4 there). A tolerance the user gives is applied as given.
  bool scaled = false;
};

/// Defaults by element type: float32 atol 1e-5 rtol 1e-3; float16 1e-3/1e-2; bfloat16 1e-2/2e-2;
/// float64 1e-8/1e-6; integers, bool and strings exact.
Tolerance DefaultTolerance(DataType type);

/// The tolerance for each output: --per-output entries first, then --atol/--rtol, then defaults (whose
/// absolute part is scaled by the output's magnitude unless --atol is given).
struct ToleranceRules {
  std::optional<double> atol;
  std::optional<double> rtol;
  std::map<std::string, Tolerance> per_output;

  Tolerance For(const std::string& output, DataType type) const;

  /// Every tolerance given must be a finite number >= 0: NaN would make every comparison pass
  /// (no difference is greater than NaN), infinity would accept any number. kInvalidArgument names
  /// the flag (--atol, --rtol, --per-output NAME) and the value.
  Status Validate() const;
};

struct OutputComparison {
  std::string name;
  std::string expected_desc;  ///< "float32[2, 3]"
  std::string actual_desc;
  Tolerance tolerance;
  double atol_scale = 1;  ///< what tolerance.atol was multiplied by (the largest |expected|), when scaled
  double EffectiveAtol() const { return tolerance.atol * atol_scale; }
  bool shape_match = true;
  bool type_match = true;
  std::int64_t elements = 0;
  std::int64_t mismatches = 0;  ///< elements outside the tolerance (NaN/Inf disagreements included)
  /// Elements within the scaled tolerance but outside the unscaled one: few where values cancel to
  /// near zero; most of the output when one large value set the scale over values that are wrong.
  std::int64_t scale_only = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double mean_abs_error = 0;
  std::int64_t nan_only_actual = 0;  ///< NaN in the run where the reference has a number
  std::int64_t nan_only_expected = 0;
  std::int64_t inf_mismatch = 0;             ///< an infinity on one side only, or of opposite sign
  std::int64_t nan_both = 0;                 ///< NaN on both sides at the same place (agreement on nothing)
  std::int64_t worst_index = -1;             ///< flat index of the worst element, -1 when none
  std::vector<std::int64_t> worst_position;  ///< the same as a multi-index
  double worst_expected = 0;
  double worst_actual = 0;
  bool strings = false;  ///< a string tensor: the worst (first differing) element is in worst_*_string
  std::string worst_expected_string;
  std::string worst_actual_string;
  bool passed = true;
  std::string problem;  ///< a sentence when !passed: shape, type, or how many elements differ

  /// How the output was judged. kFloat: by the tolerance alone. A quantised model's output that the
  /// tolerance fails is judged by what it is for (validate/purpose_judgement.h): kRounding when that
  /// agrees as far as quantised kernels' rounding goes (passed), kBeyondRounding when the divergence is
  /// larger but the purpose survives, kPurposeLost when it does not.
  enum class Judged { kFloat, kRounding, kBeyondRounding, kPurposeLost };
  Judged judged = Judged::kFloat;
  /// The task-level agreement (top-1, per-row cosine, error beside the range), measured by the caller that
  /// knows the model for numeric outputs of equal shape and type; absent otherwise.
  std::optional<Agreement> agreement;
  std::optional<double> quantization_step;  ///< the step of the quantisation the output is computed from
  std::string judgement;                    ///< when judged by purpose: the sentence that says how

  nlohmann::json ToJson() const;
};

/// Compares one output. Types must match exactly (a float64 reference for a float32 output is a
/// type mismatch); shapes must match exactly.
/// "float", "rounding", "beyond-rounding", "purpose-lost".
const char* ToString(OutputComparison::Judged judged);

OutputComparison CompareTensors(const std::string& name, const Tensor& expected, const Tensor& actual,
                                Tolerance tolerance);

struct ComparisonReport {
  std::vector<OutputComparison> outputs;
  std::vector<std::string> missing_in_run;    ///< reference outputs the model did not produce
  std::vector<std::string> not_in_reference;  ///< model outputs the reference does not hold
  bool Passed() const;
  nlohmann::json ToJson() const;
};

/// Compares every expected output with the actual output of the same name.
ComparisonReport CompareOutputs(std::span<const NamedTensor> expected, std::span<const NamedTensor> actual,
                                const ToleranceRules& rules);

}  // namespace ortkit
