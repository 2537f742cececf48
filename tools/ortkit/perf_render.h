#pragma once
// The reports of `ortkit perf`: the lines on stderr while it runs and the finished steps as text or JSON.
// Each returns text; nothing here measures, prints or decides an exit code.

#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "input_flags.h"
#include "ortkit/perf/infer_client.h"
#include "ortkit/perf/load_generator.h"
#include "ortkit/perf/perf_plot.h"
#include "ortkit/perf/request_builder.h"
#include "ortkit/perf/v2_protocol.h"
#include "terminal.h"

namespace ortkit::cli {

/// The options of `ortkit perf`: the library's options, whose in-class defaults are the flag defaults,
/// and the lists parsed into them. The reports echo them.
struct PerfFlags {
  perf::ClientOptions client;     ///< --url, --model, --protocol, --json, --timeout-ms
  perf::LoadOptions load;         ///< --poisson, --duration, --warmup, --max-outstanding, --metrics-url
  perf::RequestOptions requests;  ///< --input-data, --lengths, --length-dim
  std::string concurrency;        ///< --concurrency as given, into load.concurrency; empty: its default
  std::string request_rate;       ///< --request-rate as given, into load.request_rates
  InputFlags inputs;              ///< --dim, --shape, --seed (--input is spelled --input-data here)
  Format format = Format::kText;
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
