#include "perf_render.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit::cli {
namespace {

// How the tensors travel, as the JSON report and the start line name it.
struct TensorEncoding {
  const char* json;
  const char* text;
};

TensorEncoding EncodingOf(const PerfFlags& flags) {
  if (flags.client.protocol == perf::Protocol::kGrpc) return {"raw", "raw tensors"};
  if (flags.client.json_tensors) return {"json", "JSON tensors"};
  return {"binary", "binary tensors"};
}

std::string Ms(double ms) { return fmt::format("{:.2f}", ms); }

std::string ErrorsText(const perf::StepResult& step) {
  if (step.errors.empty()) return "0";
  std::vector<std::string> parts;
  for (const auto& [kind, count] : step.errors) parts.push_back(fmt::format("{} {}", count, kind));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string StepLabel(const perf::StepResult& step) {
  return step.request_rate > 0 ? fmt::format("{:g}/s", step.request_rate) : std::to_string(step.concurrency);
}

nlohmann::json StepJson(const perf::StepResult& step) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [kind, count] : step.errors) errors[kind] = count;
  nlohmann::json j{{"concurrency", step.concurrency},
                   {"request_rate", step.request_rate},
                   {"window_s", step.window_s},
                   {"completed", step.completed},
                   {"succeeded", step.succeeded},
                   {"errors", errors},
                   {"throughput", step.throughput},
                   {"rows_per_second", step.rows_per_second},
                   {"latency_us",
                    {{"mean", step.latency.mean * 1e3},
                     {"min", step.latency.min * 1e3},
                     {"max", step.latency.max * 1e3},
                     {"p50", step.latency.p50 * 1e3},
                     {"p90", step.latency.p90 * 1e3},
                     {"p95", step.latency.p95 * 1e3},
                     {"p99", step.latency.p99 * 1e3}}},
                   {"late", step.late},
                   {"server_batch_size", nullptr}};
  if (step.server_batch_size) j["server_batch_size"] = *step.server_batch_size;
  if (!step.metrics_error.empty()) j["metrics_error"] = step.metrics_error;
  if (!step.error_examples.empty()) j["error_examples"] = step.error_examples;
  return j;
}

std::string JsonReport(const PerfFlags& flags, const std::vector<perf::StepResult>& steps) {
  nlohmann::json out{
      {"command", "perf"},
      {"url", flags.client.url},
      {"model", flags.client.model},
      {"protocol", perf::ToString(flags.client.protocol)},
      {"tensors", EncodingOf(flags).json},
      {"lengths", flags.requests.lengths.empty() ? nlohmann::json(nullptr) : nlohmann::json(flags.requests.lengths)},
      {"duration_s", flags.load.duration_s},
      {"steps", nlohmann::json::array()}};
  for (const auto& step : steps) out["steps"].push_back(StepJson(step));
  return JsonText(out) + "\n";
}

std::string TextReport(const PerfFlags& flags, const std::vector<perf::StepResult>& steps, const Style& style) {
  const bool open_loop = !flags.request_rate.empty();
  Table table(
      {open_loop ? "rate" : "concurrency", "throughput/s", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "errors", "batch"},
      {true, true, true, true, true, true, false, true});
  for (const auto& step : steps) {
    table.AddRow({StepLabel(step), fmt::format("{:.1f}", step.throughput), Ms(step.latency.p50), Ms(step.latency.p90),
                  Ms(step.latency.p95), Ms(step.latency.p99), ErrorsText(step),
                  step.server_batch_size ? fmt::format("{:.2f}", *step.server_batch_size) : "-"});
  }
  return table.Render(style);
}

}  // namespace

std::string PerfStartLine(const PerfFlags& flags, const perf::RemoteModel& model) {
  std::vector<std::string> inputs;
  for (const auto& s : model.inputs) inputs.push_back(s.Describe());
  return fmt::format(
      "perf {} model {} over {} ({}), inputs {}{}; {:g} s warm-up + {:g} s per step", flags.client.url,
      flags.client.model, perf::ToString(flags.client.protocol), EncodingOf(flags).text, fmt::join(inputs, ", "),
      flags.requests.lengths.empty() ? "" : fmt::format(", {} {}", flags.requests.length_dim, flags.requests.lengths),
      flags.load.warmup_s, flags.load.duration_s);
}

std::string PerfStepLine(const perf::StepResult& step) {
  return fmt::format("  step {}: {:.1f} infer/s, p99 {} ms, errors {}", StepLabel(step), step.throughput,
                     Ms(step.latency.p99), ErrorsText(step));
}

std::string RenderPerfReport(const PerfFlags& flags, const std::vector<perf::StepResult>& steps, Format format,
                             const Style& style) {
  return format == Format::kJson ? JsonReport(flags, steps) : TextReport(flags, steps, style);
}

std::vector<std::string> PerfNotes(const std::vector<perf::StepResult>& steps) {
  std::map<std::string, std::string> examples;
  std::string metrics_note;
  for (const auto& step : steps) {
    examples.insert(step.error_examples.begin(), step.error_examples.end());
    if (!step.metrics_error.empty()) metrics_note = step.metrics_error;
  }
  std::vector<std::string> notes;
  for (const auto& [kind, message] : examples)
    notes.push_back(fmt::format("{}: {}", kind, message.empty() ? "(no message)" : message));
  if (!metrics_note.empty()) notes.push_back("batch: " + metrics_note);
  return notes;
}

std::vector<perf::PerfPlotPoint> PerfPlotPoints(const std::vector<perf::StepResult>& steps) {
  std::vector<perf::PerfPlotPoint> points;
  for (const auto& step : steps)
    points.push_back({StepLabel(step), step.throughput, step.latency.p50, step.latency.p99});
  return points;
}

}  // namespace ortkit::cli
