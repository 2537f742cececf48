#include "ortkit/bench/run_comparison.h"

#include <algorithm>

#include <fmt/format.h>

#include "ortkit/core/sample_stats.h"

namespace ortkit {
namespace {

struct FigureRule {
  const char* name;
  SampleStatistic statistic;
  bool gates;
  bool throughput;  ///< higher is better; compared through the mean latency, inverted
};

constexpr FigureRule kFigures[] = {
    {"p50 latency", SampleStatistic::kP50, true, false},  {"p90 latency", SampleStatistic::kP90, false, false},
    {"p99 latency", SampleStatistic::kP99, false, false}, {"mean latency", SampleStatistic::kMean, false, false},
    {"throughput", SampleStatistic::kMean, true, true},
};

// `slowdown` > 1 means the candidate is slower; `low`/`high` bound it.
ChangeVerdict Judge(double slowdown, double low, double high, double min_change) {
  if (low > 1 && slowdown > 1 + min_change) return ChangeVerdict::kSlower;
  if (high < 1 && slowdown < 1 - min_change) return ChangeVerdict::kFaster;
  return ChangeVerdict::kWithinNoise;
}

}  // namespace

const char* ToString(ChangeVerdict verdict) {
  switch (verdict) {
    case ChangeVerdict::kFaster: return "faster";
    case ChangeVerdict::kSlower: return "slower";
    case ChangeVerdict::kWithinNoise: return "within noise";
  }
  return "?";
}

Result<RunComparison> CompareRuns(const std::vector<ComparablePoint>& base,
                                  const std::vector<ComparablePoint>& candidate, const CompareOptions& options) {
  RunComparison report;
  bool any_faster = false;
  bool any_slower = false;
  for (const auto& b : base) {
    auto c =
        std::find_if(candidate.begin(), candidate.end(), [&](const ComparablePoint& p) { return p.label == b.label; });
    if (c == candidate.end()) {
      report.unmatched.push_back(b.label);
      continue;
    }
    if (b.samples_ms.empty() || c->samples_ms.empty()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("shape '{}' has no latency samples in the {} run; the noise band needs them",
                                   b.label, b.samples_ms.empty() ? "base" : "new"));
    }
    PointComparison point;
    point.label = b.label;
    bool point_slower = false;
    bool point_faster = false;
    for (const auto& rule : kFigures) {
      const RatioInterval latency =
          BootstrapRatio(b.samples_ms, c->samples_ms, rule.statistic, 0.95, options.resamples, /*seed=*/1);
      FigureComparison f;
      f.figure = rule.name;
      f.gates = rule.gates;
      f.verdict = Judge(latency.ratio, latency.low, latency.high, options.min_change);
      if (rule.throughput) {
        f.base = b.runs_per_s;
        f.candidate = c->runs_per_s;
        f.ratio = b.runs_per_s > 0 ? c->runs_per_s / b.runs_per_s : 1;
        // Throughput scales as 1 / mean latency at fixed concurrency: the band inverts.
        f.low = latency.high > 0 ? f.ratio * latency.ratio / latency.high : f.ratio;
        f.high = latency.low > 0 ? f.ratio * latency.ratio / latency.low : f.ratio;
        const double slowdown = f.ratio > 0 ? 1 / f.ratio : 1;
        f.verdict = Judge(slowdown, 1 / f.high, 1 / f.low, options.min_change);
      } else {
        f.base = ComputeStatistic(b.samples_ms, rule.statistic);
        f.candidate = ComputeStatistic(c->samples_ms, rule.statistic);
        f.ratio = latency.ratio;
        f.low = latency.low;
        f.high = latency.high;
      }
      if (f.gates) {
        point_slower = point_slower || f.verdict == ChangeVerdict::kSlower;
        point_faster = point_faster || f.verdict == ChangeVerdict::kFaster;
      }
      point.figures.push_back(f);
    }
    point.verdict = point_slower   ? ChangeVerdict::kSlower
                    : point_faster ? ChangeVerdict::kFaster
                                   : ChangeVerdict::kWithinNoise;
    any_slower = any_slower || point.verdict == ChangeVerdict::kSlower;
    any_faster = any_faster || point.verdict == ChangeVerdict::kFaster;
    report.points.push_back(std::move(point));
  }
  for (const auto& c : candidate) {
    if (std::none_of(base.begin(), base.end(), [&](const ComparablePoint& p) { return p.label == c.label; })) {
      report.unmatched.push_back(c.label);
    }
  }
  if (report.points.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "the two runs share no shape: compare reports measured with the same --batch and --dim");
  }
  report.verdict = any_slower   ? ChangeVerdict::kSlower
                   : any_faster ? ChangeVerdict::kFaster
                                : ChangeVerdict::kWithinNoise;
  return report;
}

}  // namespace ortkit
