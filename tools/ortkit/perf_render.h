#pragma once
// The reports of `ortkit perf`: the lines on stderr while it runs and the finished steps as text or JSON.
// Each returns text; nothing here measures, prints or decides an exit code.

#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "input_flags.h"
#include "ortkit/perf/load_generator.h"
#include "ortkit/perf/perf_plot.h"
#include "ortkit/perf/v2_protocol.h"
#include "terminal.h"

namespace ortkit::cli {

/// The options of `ortkit perf`; the in-class defaults are the flag defaults. The reports echo them.
struct PerfFlags {
  std::string url = "127.0.0.1:8000";
  std::string model;
  std::string protocol = "http";
  std::string concurrency = "1";
  std::string request_rate;
  bool poisson = false;
  double duration_s = 5;
  double warmup_s = 1;
  std::string lengths;
  std::string length_dim = "seq_len";
  std::string input_data = "random";
  InputFlags inputs;  // --dim, --shape, --seed (--input is spelled --input-data here)
  bool json_tensors = false;
  std::string metrics_url;
  int timeout_ms = 60000;
  int max_outstanding = 256;
  std::string format = "text";
  std::filesystem::path plot;
};

/// The line on stderr before the first step: server, model, protocol and tensor encoding, inputs, lengths
/// and time per step.
std::string PerfStartLine(const PerfFlags& flags, const perf::RemoteModel& model);

/// The line on stderr as a step finishes: its throughput, p99 and errors.
std::string PerfStepLine(const perf::StepResult& step);

/// The finished steps in `format`, for stdout: a JSON document or a table coloured with `style`.
std::string RenderPerfReport(const PerfFlags& flags, const std::vector<perf::StepResult>& steps, Format format,
                             const Style& style);

/// The notes under the text table, one per line: the first message of each error kind, and why the batch
/// column is empty when a metrics scrape failed.
std::vector<std::string> PerfNotes(const std::vector<perf::StepResult>& steps);

/// Throughput against p50 and p99 latency, one point per step, for --plot.
std::vector<perf::PerfPlotPoint> PerfPlotPoints(const std::vector<perf::StepResult>& steps);

}  // namespace ortkit::cli
