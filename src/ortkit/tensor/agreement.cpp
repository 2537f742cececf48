#include "ortkit/tensor/agreement.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit {
namespace {

/// Rows along the last axis: a scalar or an empty shape is one row of one.
struct RowLayout {
  std::int64_t rows = 0;
  std::int64_t width = 0;
};

RowLayout RowsOf(const Tensor& t) {
  const std::int64_t width = t.shape().empty() ? 1 : t.shape().back();
  if (width <= 0) return {0, 0};
  return {t.element_count() / width, width};
}

/// A value NaN never beats: NaN reads as -infinity when ranking.
double Rankable(double v) { return std::isnan(v) ? -HUGE_VAL : v; }

std::int64_t ArgmaxOfRow(const Tensor& t, std::int64_t begin, std::int64_t width) {
  std::int64_t best = 0;
  double best_value = Rankable(t.AsDouble(begin));
  for (std::int64_t j = 1; j < width; ++j) {
    const double v = Rankable(t.AsDouble(begin + j));
    if (v > best_value) {
      best_value = v;
      best = j;
    }
  }
  return best;
}

/// The `k` best entries of a row, best first (ties by index).
std::vector<std::int64_t> TopOfRow(const Tensor& t, std::int64_t begin, std::int64_t width, int k) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(width));
  std::iota(order.begin(), order.end(), 0);
  const auto better = [&](std::int64_t x, std::int64_t y) {
    const double vx = Rankable(t.AsDouble(begin + x));
    const double vy = Rankable(t.AsDouble(begin + y));
    return vx > vy || (vx == vy && x < y);
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
  order.resize(static_cast<std::size_t>(k));
  return order;
}

double CosineOfRow(const Tensor& a, const Tensor& b, std::int64_t begin, std::int64_t width) {
  double dot = 0, na = 0, nb = 0;
  for (std::int64_t j = begin; j < begin + width; ++j) {
    const double x = a.AsDouble(j);
    const double y = b.AsDouble(j);
    if (!std::isfinite(x) || !std::isfinite(y)) return x == y ? 1 : 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na == 0 && nb == 0) return 1;
  if (na == 0 || nb == 0) return 0;
  return std::clamp(dot / (std::sqrt(na) * std::sqrt(nb)), -1.0, 1.0);
}

void MeasureTopK(const Tensor& expected, const Tensor& actual, RowLayout layout, double tie_margin, Agreement& out) {
  out.k = static_cast<int>(std::min<std::int64_t>(out.k, layout.width));
  double overlap_sum = 0;
  for (std::int64_t r = 0; r < layout.rows; ++r) {
    const std::int64_t begin = r * layout.width;
    const std::int64_t e = ArgmaxOfRow(expected, begin, layout.width);
    const std::int64_t a = ArgmaxOfRow(actual, begin, layout.width);
    if (e == a) {
      ++out.top1_agree;
    } else if (Rankable(expected.AsDouble(begin + a)) >= Rankable(expected.AsDouble(begin + e)) - tie_margin) {
      ++out.near_ties;
    }
    if (out.k <= 1) continue;
    const auto top_e = TopOfRow(expected, begin, layout.width, out.k);
    const auto top_a = TopOfRow(actual, begin, layout.width, out.k);
    const auto found = std::count_if(top_e.begin(), top_e.end(), [&](std::int64_t i) {
      return std::find(top_a.begin(), top_a.end(), i) != top_a.end();
    });
    overlap_sum += static_cast<double>(found) / out.k;
  }
  out.topk_overlap = out.k <= 1 || layout.rows == 0 ? out.Top1Share() : overlap_sum / static_cast<double>(layout.rows);
}

void MeasureCosines(const Tensor& expected, const Tensor& actual, Agreement& out) {
  const auto cosines = RowCosines(expected, actual);
  if (cosines.empty()) return;
  const auto worst = std::min_element(cosines.begin(), cosines.end());
  out.min_cosine = *worst;
  out.worst_row = worst - cosines.begin();
  out.mean_cosine = std::accumulate(cosines.begin(), cosines.end(), 0.0) / static_cast<double>(cosines.size());
}

void MeasureErrors(const Tensor& expected, const Tensor& actual, Agreement& out) {
  double low = HUGE_VAL, high = -HUGE_VAL, largest = 0;
  for (std::int64_t i = 0; i < out.elements; ++i) {
    const double e = expected.AsDouble(i);
    const double a = actual.AsDouble(i);
    if (e == a || (std::isnan(e) && std::isnan(a))) ++out.equal;
    if (!std::isfinite(e)) continue;
    low = std::min(low, e);
    high = std::max(high, e);
    largest = std::max(largest, std::fabs(e));
    const double error = std::isfinite(a) ? std::fabs(a - e) : HUGE_VAL;
    out.max_abs_error = std::max(out.max_abs_error, error);
  }
  out.range = high >= low ? std::max(high - low, largest) : 0;
}

}  // namespace

const char* ToString(OutputPurpose purpose) {
  switch (purpose) {
    case OutputPurpose::kScores: return "scores";
    case OutputPurpose::kEmbedding: return "embedding";
    case OutputPurpose::kValues: return "values";
    case OutputPurpose::kLabels: return "labels";
  }
  return "values";
}

double Agreement::Top1Share() const {
  return rows > 0 ? static_cast<double>(top1_agree + near_ties) / static_cast<double>(rows) : 1.0;
}

double Agreement::RelativeError() const {
  if (max_abs_error == 0) return 0;
  return range > 0 ? max_abs_error / range : HUGE_VAL;
}

std::string Agreement::Describe() const {
  switch (purpose) {
    case OutputPurpose::kScores: {
      std::string text = fmt::format("top-1 {}/{} rows", top1_agree + near_ties, rows);
      if (near_ties > 0) text += fmt::format(" ({} a tie broken the other way)", near_ties);
      if (k > 1) text += fmt::format(", top-{} overlap {:.1f}%", k, 100 * topk_overlap);
      return text;
    }
    case OutputPurpose::kEmbedding:
      return fmt::format("per-row cosine >= {:.5f} ({} row{})", min_cosine, rows, rows == 1 ? "" : "s");
    case OutputPurpose::kLabels: return fmt::format("labels {}/{} equal", equal, elements);
    case OutputPurpose::kValues: break;
  }
  return fmt::format("max error {:.3g}% of the output's range {:.4g}", 100 * RelativeError(), range);
}

nlohmann::json Agreement::ToJson() const {
  const double relative = RelativeError();
  return {{"purpose", ToString(purpose)},
          {"rows", rows},
          {"top1_agree", top1_agree},
          {"near_ties", near_ties},
          {"k", k},
          {"topk_overlap", topk_overlap},
          {"min_cosine", min_cosine},
          {"mean_cosine", mean_cosine},
          {"worst_row", worst_row},
          {"range", range},
          {"max_abs_error", std::isfinite(max_abs_error) ? nlohmann::json(max_abs_error) : nlohmann::json()},
          {"relative_error", std::isfinite(relative) ? nlohmann::json(relative) : nlohmann::json()},
          {"elements", elements},
          {"equal", equal},
          {"judged_by", Describe()}};
}

Agreement MeasureAgreement(const Tensor& expected, const Tensor& actual, OutputPurpose purpose, int k,
                           double tie_margin) {
  Agreement out;
  out.purpose = purpose;
  out.elements = expected.element_count();
  out.k = std::max(1, k);
  const RowLayout layout = RowsOf(expected);
  out.rows = layout.rows;
  MeasureErrors(expected, actual, out);
  MeasureCosines(expected, actual, out);
  MeasureTopK(expected, actual, layout, tie_margin, out);
  return out;
}

std::vector<double> RowCosines(const Tensor& a, const Tensor& b) {
  const RowLayout layout = RowsOf(a);
  std::vector<double> cosines;
  cosines.reserve(static_cast<std::size_t>(layout.rows));
  for (std::int64_t r = 0; r < layout.rows; ++r) cosines.push_back(CosineOfRow(a, b, r * layout.width, layout.width));
  return cosines;
}

std::vector<std::int64_t> RowArgmax(const Tensor& t) {
  const RowLayout layout = RowsOf(t);
  std::vector<std::int64_t> best;
  best.reserve(static_cast<std::size_t>(layout.rows));
  for (std::int64_t r = 0; r < layout.rows; ++r) best.push_back(ArgmaxOfRow(t, r * layout.width, layout.width));
  return best;
}

}  // namespace ortkit
