#pragma once
// Whether two runs' outputs mean the same, judged by what the output is for: the same best class or
// token where the last axis scores classes, the same direction where each row is an embedding or a
// hidden state, an error small beside the output's range for anything else. Float tolerances
// (comparison.h) ask whether the numbers are equal; these ask whether a user of the output would
// notice, which is what a quantised kernel's rounding must leave intact.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// What an output is for, as far as judging a difference goes (model/output_purpose.h guesses it).
enum class OutputPurpose {
  kScores,     ///< the last axis scores classes or tokens (logits, probabilities): top-1 and top-k
  kEmbedding,  ///< each row along the last axis is a vector (embedding, hidden state, features): cosine
  kValues,     ///< anything else (a regression, a single score, boxes, a signal): error beside the range
  kLabels,     ///< integer labels or indices: the share that are equal
};

/// "scores", "embedding", "values", "labels".
const char* ToString(OutputPurpose purpose);

/// Agreement of a run (actual) with a reference (expected) for one output. Rows are the slices along
/// the last axis (a scalar or a 1-D output is one row).
struct Agreement {
  OutputPurpose purpose = OutputPurpose::kValues;
  std::int64_t rows = 0;
  std::int64_t top1_agree = 0;  ///< rows whose best entry is the same on both sides
  /// Rows whose best entry changed between entries the reference scores within `tie_margin` of each
  /// other: a tie broken the other way, not a different answer.
  std::int64_t near_ties = 0;
  int k = 0;                ///< the k of top-k (at most the last axis' size)
  double topk_overlap = 1;  ///< mean share of the reference's k best entries among the run's k best
  double min_cosine = 1;    ///< lowest per-row cosine similarity
  double mean_cosine = 1;
  std::int64_t worst_row = -1;  ///< the row with the lowest cosine
  double range = 0;             ///< the reference's spread: max - min, at least its largest |value|
  double max_abs_error = 0;
  std::int64_t elements = 0;
  std::int64_t equal = 0;  ///< elements exactly equal (what kLabels judges)

  /// Rows whose best entry is the same, near ties counted as agreeing, as a share of the rows.
  double Top1Share() const;
  /// max_abs_error as a share of range (0 when both are 0).
  double RelativeError() const;
  /// The figure the purpose is judged by: "top-1 40/40 rows", "per-row cosine >= 0.99971 (96 rows)",
  /// "max error 0.08% of the output's range 0.98", "labels 99/100 equal".
  std::string Describe() const;
  /// {"purpose", "rows", "top1_agree", "near_ties", "k", "topk_overlap", "min_cosine", "mean_cosine",
  ///  "worst_row", "range", "max_abs_error", "relative_error", "elements", "equal"}
  nlohmann::json ToJson() const;
};

/// Measures `actual` against `expected` for `purpose`. The two must have the same shape and a numeric
/// element type (the caller has compared them); every figure is computed whatever the purpose, so a
/// report can show the float figures beside the one the purpose is judged by. `k` is capped at the last
/// axis' size. NaN elements count as disagreeing (cosine of a row holding NaN is 0).
Agreement MeasureAgreement(const Tensor& expected, const Tensor& actual, OutputPurpose purpose, int k = 5,
                           double tie_margin = 0);

/// Cosine similarity of each row along the last axis; two zero rows are alike (1), a zero row against
/// another is 0. `a` and `b` must have the same shape.
std::vector<double> RowCosines(const Tensor& a, const Tensor& b);

/// The index of the largest entry of each row along the last axis (the first of equal ones; NaN never wins).
std::vector<std::int64_t> RowArgmax(const Tensor& t);

}  // namespace ortkit
