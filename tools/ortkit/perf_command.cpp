// ortkit perf --url HOST:PORT --model NAME: load a KServe v2 server (ortkit serve, Triton, a peer)
// step by step and report throughput, latency percentiles, errors and the server's batch size.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
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

Result<perf::LoadOptions> MakeLoadOptions(const PerfFlags& flags, const std::string& http_base) {
  perf::LoadOptions options;
  if (!flags.request_rate.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(options.request_rates, ParseRealNumberList(flags.request_rate, "--request-rate",
                                                                       {1e-3, perf::LoadOptions::kMostRate}));
  } else {
    ORTKIT_ASSIGN_OR_RETURN(auto concurrency, ParseWholeNumberList(flags.concurrency, "--concurrency",
                                                                   {1, perf::LoadOptions::kMostConnections}));
    options.concurrency.assign(concurrency.begin(), concurrency.end());
  }
  if (flags.poisson && flags.request_rate.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "--poisson needs --request-rate (it shapes the open-loop schedule)");
  }
  ORTKIT_RETURN_IF_ERROR(CheckRange("--timeout-ms", std::int64_t{flags.timeout_ms}, {1, 3'600'000}));
  options.poisson = flags.poisson;
  options.duration_s = flags.duration_s;
  options.warmup_s = flags.warmup_s;
  options.max_outstanding = flags.max_outstanding;
  options.model = flags.model;
  options.seed = flags.inputs.seed;
  // gRPC servers serve metrics over HTTP elsewhere; only the HTTP URL implies where.
  options.metrics_url = !flags.metrics_url.empty() ? flags.metrics_url
                        : flags.protocol == "http" ? http_base + "/metrics"
                                                   : "";
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  return options;
}

perf::ClientOptions ClientOptionsOf(const PerfFlags& flags) {
  perf::ClientOptions options;
  options.protocol = flags.protocol == "grpc" ? perf::Protocol::kGrpc : perf::Protocol::kHttp;
  options.url = flags.url;
  options.model = flags.model;
  options.json_tensors = flags.json_tensors;
  options.timeout_ms = flags.timeout_ms;
  return options;
}

// The load's options, once the flags are checked as a whole: the URL for the protocol, the tensor encoding,
// the steps and their timing, the plot's file name.
Result<perf::LoadOptions> CheckedLoadOptions(const PerfFlags& flags, const perf::ClientOptions& client) {
  std::string http_base;
  if (client.protocol == perf::Protocol::kHttp) {
    ORTKIT_ASSIGN_OR_RETURN(http_base, perf::NormalizeHttpBase(flags.url));
  }
  if (flags.json_tensors && client.protocol != perf::Protocol::kHttp) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--json selects JSON tensors over HTTP; gRPC always sends raw tensor contents");
  }
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
    return MakeError(model.error().kind, fmt::format("model '{}': {}", flags.model, model.error().message));
  perf::RequestOptions options;
  ORTKIT_ASSIGN_OR_RETURN(options.plan, ParsePlan(flags.inputs));
  options.input_data = flags.input_data;
  options.lengths = flags.lengths;
  options.length_dim = flags.length_dim;
  options.model = flags.model;
  ORTKIT_ASSIGN_OR_RETURN(perf::RequestSet requests, perf::BuildRequests(options, *model, client));
  return PreparedRequests{std::move(*model), std::move(requests)};
}

// Every step of the load, with the start line and each step's line on stderr as text goes.
Result<std::vector<perf::StepResult>> Measure(const PerfFlags& flags, Format format) {
  const perf::ClientOptions client_options = ClientOptionsOf(flags);
  ORTKIT_ASSIGN_OR_RETURN(perf::LoadOptions load, CheckedLoadOptions(flags, client_options));
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
  Format format;
  ParseFormat(flags.format, &format);
  auto steps = Measure(flags, format);
  if (!steps.ok()) return Fail("perf", steps.error(), format);

  PrintText(stdout, RenderPerfReport(flags, *steps, format, Style::ForStream(stdout)));
  if (format == Format::kText) {
    const Style style = Style::ForStream(stderr);
    for (const auto& note : PerfNotes(*steps)) PrintText(stderr, style.Dim(note) + "\n");
  }
  if (!flags.plot.empty()) {
    auto written = perf::WriteThroughputLatencyPlot(
        flags.plot, fmt::format("ortkit perf: {} at {}", flags.model, flags.url), PerfPlotPoints(*steps));
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
  cmd->add_option("--url", flags->url, "server address: host:port (http:// optional for --protocol http)")
      ->capture_default_str();
  cmd->add_option("--model", flags->model, "model name on the server")->required();
  cmd->add_option("--protocol", flags->protocol, "http or grpc")
      ->check(CLI::IsMember({"http", "grpc"}))
      ->capture_default_str();
  cmd->add_option("--concurrency", flags->concurrency, "closed-loop steps: requests in flight, e.g. 1,8,32,64")
      ->capture_default_str();
  cmd->add_option("--request-rate", flags->request_rate, "open-loop steps instead: requests per second, e.g. 100,200");
  cmd->add_flag("--poisson", flags->poisson, "open loop: Poisson arrivals instead of evenly spaced ones");
  cmd->add_option("--duration", flags->duration_s, "measured seconds per step")->capture_default_str();
  cmd->add_option("--warmup", flags->warmup_s, "seconds of unmeasured load before each step")->capture_default_str();
  cmd->add_option("--lengths", flags->lengths, "per-request size of --length-dim: uniform:MIN:MAX or fixed:N");
  cmd->add_option("--length-dim", flags->length_dim, "the dynamic dimension --lengths varies")->capture_default_str();
  cmd->add_option("--input-data", flags->input_data,
                  "random, or FILE/DIR (.npz, .npy, folder, test_data_set_N) with tensors named after inputs")
      ->capture_default_str();
  cmd->add_option("--dim", flags->inputs.dims,
                  "size of a dynamic dimension: batch, seq_len, dimK by axis, e.g. --dim seq_len=8")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--shape", flags->inputs.shapes, "full shape of one input, e.g. --shape x=1x3x224x224 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed", flags->inputs.seed, "seed for synthesised inputs and the order of lengths")
      ->capture_default_str()
      ->check(SeedValidator());
  cmd->add_flag("--json", flags->json_tensors, "HTTP: send JSON tensors instead of the binary tensor data extension");
  cmd->add_option("--metrics-url", flags->metrics_url,
                  "Prometheus endpoint for the batch size (default: URL/metrics over HTTP)");
  cmd->add_option("--timeout-ms", flags->timeout_ms, "per-request timeout")->capture_default_str();
  cmd->add_option("--max-outstanding", flags->max_outstanding, "open loop: most requests in flight (sending threads)")
      ->capture_default_str();
  cmd->add_option("--format", flags->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--plot", flags->plot, "write throughput vs latency as an SVG line plot");
  cmd->callback([flags, &exit_code] { exit_code = Perf(*flags); });
}

}  // namespace ortkit::cli
