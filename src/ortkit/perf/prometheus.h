#pragma once
// Reading a server's Prometheus text exposition (/metrics): enough to learn how many inferences
// and executions a model has done, so that perf can report the average batch size per step.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ortkit::perf {

struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

/// Every sample line of `text`; comments (# HELP, # TYPE) and lines that do not parse are skipped,
/// because a scrape must not fail on one metric perf does not understand.
std::vector<MetricSample> ParsePrometheusText(std::string_view text);

/// The sum of the samples named `name` whose "model" label is `model` (or that have no model label).
/// nullopt when there is no such sample.
std::optional<double> SumForModel(const std::vector<MetricSample>& samples, std::string_view name,
                                  std::string_view model);

/// Requests (rows) inferred and batches executed for `model`, found under the metric names that
/// ortkit serve, the FastAPI peer and Triton use.
struct BatchCounters {
  double inferences = 0;
  double executions = 0;
};
std::optional<BatchCounters> ReadBatchCounters(const std::vector<MetricSample>& samples, std::string_view model);

}  // namespace ortkit::perf
