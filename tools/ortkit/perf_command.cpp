// ortkit perf --url HOST:PORT --model NAME: load a KServe v2 server (ortkit serve, Triton, a peer)
// step by step and report throughput, latency percentiles, errors and the server's batch size.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "failure.h"
#include "input_flags.h"
#include "ortkit/core/files.h"
#include "ortkit/core/numbers.h"
#include "ortkit/perf/infer_client.h"
#include "ortkit/perf/load_generator.h"
#include "ortkit/perf/perf_plot.h"
#include "ortkit/perf/request_builder.h"
#include "perf_render.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

// The load's steps from the lists, the metrics URL the HTTP URL implies, and the options checked as a whole.
Result<perf::LoadOptions> MakeLoadOptions(const PerfFlags& flags, const std::string& http_base) {
  perf::LoadOptions options = flags.load;
  if (!flags.request_rate.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(options.request_rates, ParseRealNumberList(flags.request_rate, "--request-rate",
                                                                       {1e-3, perf::LoadOptions::kMostRate}));
  } else if (!flags.concurrency.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(auto concurrency, ParseWholeNumberList(flags.concurrency, "--concurrency",
                                                                   {1, perf::LoadOptions::kMostConnections}));
    options.concurrency.assign(concurrency.begin(), concurrency.end());
  }
  options.model = flags.client.model;
  options.seed = flags.inputs.seed;
  // gRPC servers serve metrics over HTTP elsewhere; only the HTTP URL implies where.
  if (options.metrics_url.empty() && flags.client.protocol == perf::Protocol::kHttp)
    options.metrics_url = http_base + "/metrics";
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  return options;
}

// The load's options, once the flags are checked as a whole: the client's (URL for the protocol, tensor
// encoding, timeout), the steps and their timing, the plot's file name.
Result<perf::LoadOptions> CheckedLoadOptions(const PerfFlags& flags) {
  std::string http_base;
  if (flags.client.protocol == perf::Protocol::kHttp) {
    ORTKIT_ASSIGN_OR_RETURN(http_base, perf::NormalizeHttpBase(flags.client.url));
  }
  ORTKIT_RETURN_IF_ERROR(flags.client.Validate());
  ORTKIT_ASSIGN_OR_RETURN(perf::LoadOptions load, MakeLoadOptions(flags, http_base));
  if (!flags.plot.empty()) ORTKIT_RETURN_IF_ERROR(CheckOutputFile(flags.plot, "--plot"));
  if (!flags.plot.empty() && flags.plot.extension() != ".svg") {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--plot {}: the plot is an SVG file; name it *.svg", flags.plot.string()));
  }
  return load;
}

/// The served model and the requests built for it, before the timed region.
struct PreparedRequests {
  perf::RemoteModel model;
  perf::RequestSet requests;
};

// Checks the server is ready, reads the model's metadata and builds the requests (one per length).
Result<PreparedRequests> PrepareRequests(const PerfFlags& flags, perf::InferClient& client) {
  ORTKIT_RETURN_IF_ERROR(client.CheckReady());
  auto model = client.ModelMetadata();
  if (!model.ok())
    return MakeError(model.error().kind, fmt::format("model '{}': {}", flags.client.model, model.error().message));
  perf::RequestOptions options = flags.requests;
  ORTKIT_ASSIGN_OR_RETURN(options.plan, ParsePlan(flags.inputs));
  options.model = flags.client.model;
  ORTKIT_ASSIGN_OR_RETURN(perf::RequestSet requests, perf::BuildRequests(options, *model, client));
  return PreparedRequests{std::move(*model), std::move(requests)};
}

// Every step of the load, with the start line and each step's line on stderr as text goes.
Result<std::vector<perf::StepResult>> Measure(const PerfFlags& flags, Format format) {
  const perf::ClientOptions& client_options = flags.client;
  ORTKIT_ASSIGN_OR_RETURN(perf::LoadOptions load, CheckedLoadOptions(flags));
  ORTKIT_ASSIGN_OR_RETURN(auto client, perf::CreateClient(client_options));
  ORTKIT_ASSIGN_OR_RETURN(PreparedRequests prepared, PrepareRequests(flags, *client));

  const Style style = Style::ForStream(stderr);
  if (format == Format::kText) PrintText(stderr, style.Dim(PerfStartLine(flags, prepared.model)) + "\n");
  const perf::ClientFactory factory = [&client_options] { return perf::CreateClient(client_options); };
  perf::LoopFactory loops;
  if (client_options.protocol == perf::Protocol::kHttp) {
    loops = [&client_options](std::size_t connections) { return perf::CreateHttpLoop(client_options, connections); };
  }
  auto progress = [&](const perf::StepResult& step) {
    if (format == Format::kText) PrintText(stderr, style.Dim(PerfStepLine(step)) + "\n");
  };
  return perf::RunLoad(load, factory, prepared.requests, progress, loops);
}

int Perf(const PerfFlags& flags) {
  const Format format = flags.format;
  auto steps = Measure(flags, format);
  if (!steps.ok()) return Fail("perf", steps.error(), format);

  PrintText(stdout, RenderPerfReport(flags, *steps, format, Style::ForStream(stdout)));
  if (format == Format::kText) {
    const Style style = Style::ForStream(stderr);
    for (const auto& note : PerfNotes(*steps)) PrintText(stderr, style.Dim(note) + "\n");
  }
  if (!flags.plot.empty()) {
    auto written = perf::WriteThroughputLatencyPlot(
        flags.plot, fmt::format("ortkit perf: {} at {}", flags.client.model, flags.client.url), PerfPlotPoints(*steps));
    if (!written.ok()) return Fail("perf", written.error(), format);
  }
  const bool any_success =
      std::any_of(steps->begin(), steps->end(), [](const perf::StepResult& s) { return s.succeeded > 0; });
  return any_success ? kExitOk : kExitFindings;
}

}  // namespace

void RegisterPerf(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PerfFlags>();
  CLI::App* cmd =
      app.add_subcommand("perf", "Load a KServe v2 inference server and report throughput and latency per step");
  perf::ClientOptions& client = flags->client;
  perf::LoadOptions& load = flags->load;
  perf::RequestOptions& requests = flags->requests;
  cmd->add_option("--url", client.url, "server address: host:port (http:// optional for --protocol http)")
      ->capture_default_str();
  cmd->add_option("--model", client.model, "model name on the server")->required();
  cmd->add_option("--protocol", client.protocol, "http or grpc")
      ->transform(CLI::CheckedTransformer(std::vector<std::pair<std::string, perf::Protocol>>{
                                              {"http", perf::Protocol::kHttp}, {"grpc", perf::Protocol::kGrpc}})
                      .description(""))
      ->transform(CLI::IsMember({"http", "grpc"}))
      ->type_name("TEXT")
      ->default_str(perf::ToString(client.protocol));
  cmd->add_option("--concurrency", flags->concurrency, "closed-loop steps: requests in flight, e.g. 1,8,32,64")
      ->default_str(fmt::format("{}", fmt::join(load.concurrency, ",")));
  cmd->add_option("--request-rate", flags->request_rate, "open-loop steps instead: requests per second, e.g. 100,200");
  cmd->add_flag("--poisson", load.poisson, "open loop: Poisson arrivals instead of evenly spaced ones");
  cmd->add_option("--duration", load.duration_s, "measured seconds per step")->capture_default_str();
  cmd->add_option("--warmup", load.warmup_s, "seconds of unmeasured load before each step")->capture_default_str();
  cmd->add_option("--lengths", requests.lengths, "per-request size of --length-dim: uniform:MIN:MAX or fixed:N");
  cmd->add_option("--length-dim", requests.length_dim, "the dynamic dimension --lengths varies")->capture_default_str();
  cmd->add_option("--input-data", requests.input_data,
                  "random, or FILE/DIR (.npz, .npy, folder, test_data_set_N) with tensors named after inputs")
      ->capture_default_str();
  flags->inputs.RegisterSizes(cmd, "size of a dynamic dimension: batch, seq_len, dimK by axis, e.g. --dim seq_len=8",
                              "full shape of one input, e.g. --shape x=1x3x224x224 (repeatable)",
                              "seed for synthesised inputs and the order of lengths");
  cmd->add_flag("--json", client.json_tensors, "HTTP: send JSON tensors instead of the binary tensor data extension");
  cmd->add_option("--metrics-url", load.metrics_url,
                  "Prometheus endpoint for the batch size (default: URL/metrics over HTTP)");
  cmd->add_option("--timeout-ms", client.timeout_ms, "per-request timeout")->capture_default_str();
  cmd->add_option("--max-outstanding", load.max_outstanding, "open loop: most requests in flight (sending threads)")
      ->capture_default_str();
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson}, "text or json");
  cmd->add_option("--plot", flags->plot, "write throughput vs latency as an SVG line plot");
  cmd->callback([flags, &exit_code] { exit_code = Perf(*flags); });
}

}  // namespace ortkit::cli
