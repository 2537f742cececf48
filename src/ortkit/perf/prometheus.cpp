#include "ortkit/perf/prometheus.h"

#include <cctype>
#include <cstdlib>

namespace ortkit::perf {
namespace {

// Inference count (rows) and execution count (session runs), by server.
struct CounterNames {
  std::string_view inferences;
  std::string_view executions;
};
constexpr CounterNames kCounterNames[] = {
    {"ortkit_inference_count", "ortkit_execution_count"},
    {"ortkit_inference_count_total", "ortkit_execution_count_total"},
    {"nv_inference_count", "nv_inference_exec_count"},
};

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }

// Parses `{a="x",b="y"}` starting at text[0] == '{'; returns the length consumed, 0 on error.
std::size_t ParseLabels(std::string_view text, std::map<std::string, std::string>* labels) {
  std::size_t i = 1;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i < text.size() && text[i] == '}') return i + 1;
    const std::size_t name_begin = i;
    while (i < text.size() && IsNameChar(text[i])) ++i;
    const std::string name(text.substr(name_begin, i - name_begin));
    if (name.empty() || i + 1 >= text.size() || text[i] != '=' || text[i + 1] != '"') return 0;
    i += 2;
    std::string value;
    while (i < text.size() && text[i] != '"') {
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;
        value.push_back(text[i] == 'n' ? '\n' : text[i]);
      } else {
        value.push_back(text[i]);
      }
      ++i;
    }
    if (i >= text.size()) return 0;
    ++i;  // closing quote
    (*labels)[name] = std::move(value);
  }
  return 0;
}

}  // namespace

std::vector<MetricSample> ParsePrometheusText(std::string_view text) {
  std::vector<MetricSample> samples;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;

    MetricSample sample;
    std::size_t i = 0;
    while (i < line.size() && IsNameChar(line[i])) ++i;
    sample.name = std::string(line.substr(0, i));
    if (sample.name.empty()) continue;
    if (i < line.size() && line[i] == '{') {
      const std::size_t used = ParseLabels(line.substr(i), &sample.labels);
      if (used == 0) continue;
      i += used;
    }
    const std::string value(line.substr(i));
    char* end = nullptr;
    sample.value = std::strtod(value.c_str(), &end);
    if (end == value.c_str()) continue;
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::optional<double> SumForModel(const std::vector<MetricSample>& samples, std::string_view name,
                                  std::string_view model) {
  std::optional<double> sum;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    auto label = s.labels.find("model");
    if (label != s.labels.end() && label->second != model) continue;
    sum = sum.value_or(0) + s.value;
  }
  return sum;
}

std::optional<BatchCounters> ReadBatchCounters(const std::vector<MetricSample>& samples, std::string_view model) {
  for (const auto& names : kCounterNames) {
    auto inferences = SumForModel(samples, names.inferences, model);
    auto executions = SumForModel(samples, names.executions, model);
    if (inferences && executions) return BatchCounters{*inferences, *executions};
  }
  return std::nullopt;
}

}  // namespace ortkit::perf
