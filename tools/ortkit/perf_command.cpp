// ortkit perf --url HOST:PORT --model NAME: load a KServe v2 server (ortkit serve, Triton, a peer)
// step by step and report throughput, latency percentiles, errors and the server's batch size.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "input_flags.h"
#include "ortkit/perf/load_generator.h"
#include "ortkit/perf/perf_plot.h"
#include "ortkit/tensor/test_case.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

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

// A usage error, printed as "ortkit perf: MESSAGE" (or as JSON) with exit code 2.
int Fail(const std::string& message, Format format, int exit_code = kExitUsage) {
  if (format == Format::kJson) {
    std::cout << JsonText(nlohmann::json{{"command", "perf"}, {"error", message}}) << "\n";
  } else {
    std::fprintf(stderr, "ortkit perf: %s\n", message.c_str());
  }
  return exit_code;
}

template <typename T>
Result<std::vector<T>> ParseList(const std::string& text, const std::string& flag) {
  std::vector<T> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    std::size_t used = 0;
    T value{};
    try {
      if constexpr (std::is_integral_v<T>)
        value = static_cast<T>(std::stoll(item, &used));
      else
        value = static_cast<T>(std::stod(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value <= 0) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{} '{}': '{}' is not a positive number", flag, text, item));
    }
    values.push_back(value);
  }
  if (values.empty()) return MakeError(ErrorKind::kInvalidArgument, fmt::format("{} is empty", flag));
  return values;
}

Result<perf::LoadOptions> MakeLoadOptions(const PerfFlags& flags, const std::string& http_base) {
  perf::LoadOptions options;
  if (!flags.request_rate.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(options.request_rates, ParseList<double>(flags.request_rate, "--request-rate"));
  } else {
    ORTKIT_ASSIGN_OR_RETURN(options.concurrency, ParseList<int>(flags.concurrency, "--concurrency"));
  }
  if (flags.poisson && flags.request_rate.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "--poisson needs --request-rate (it shapes the open-loop schedule)");
  }
  if (!(flags.duration_s > 0))
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--duration {}: must be > 0", flags.duration_s));
  if (flags.warmup_s < 0)
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--warmup {}: must be >= 0", flags.warmup_s));
  if (flags.timeout_ms <= 0)
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--timeout-ms {}: must be > 0", flags.timeout_ms));
  if (flags.max_outstanding <= 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--max-outstanding {}: must be > 0", flags.max_outstanding));
  }
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
  return options;
}

// One encoded request per size of the varied dimension; inputs from --input-data FILE or synthesised.
Result<perf::RequestSet> PrepareRequests(const PerfFlags& flags, const perf::ServedModel& model,
                                         perf::InferClient& client) {
  ORTKIT_ASSIGN_OR_RETURN(InputPlan plan, ParsePlan(flags.inputs));
  ORTKIT_RETURN_IF_ERROR(ValidatePlan(plan, model.inputs));
  perf::RequestSet set;
  std::vector<NamedTensor> given;
  if (flags.input_data != "random") {
    if (!flags.lengths.empty()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "--lengths varies synthesised inputs; it cannot be combined with --input-data FILE");
    }
    ORTKIT_ASSIGN_OR_RETURN(given, ReadTensors(flags.input_data, InputHeaderCheck(model.inputs)));
    for (const auto& t : given) {
      if (std::none_of(model.inputs.begin(), model.inputs.end(),
                       [&](const TensorSpec& s) { return s.name == t.name; })) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--input-data {}: tensor '{}' is not an input of model '{}'", flags.input_data,
                                     t.name, flags.model));
      }
    }
  }
  if (flags.lengths.empty()) {
    set.lengths = {1, 1};
  } else {
    ORTKIT_ASSIGN_OR_RETURN(set.lengths, perf::ParseLengths(flags.lengths));
    const bool has_dim = std::any_of(model.inputs.begin(), model.inputs.end(), [&](const TensorSpec& s) {
      return std::any_of(s.dims.begin(), s.dims.end(), [&](const DimSpec& d) { return d.symbol == flags.length_dim; });
    });
    if (!has_dim) {
      std::vector<std::string> described;
      for (const auto& s : model.inputs) described.push_back(s.Describe());
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("--length-dim {}: no input of model '{}' has a dynamic dimension at that position ({}); "
                      "dynamic dimensions are named batch (axis 0), seq_len (axis 1), dimK (axis K)",
                      flags.length_dim, flags.model, fmt::join(described, ", ")));
    }
  }
  std::vector<std::string> outputs;
  for (const auto& o : model.outputs) outputs.push_back(o.name);
  const auto hints = perf::HintsFromNames(model.inputs);
  for (std::int64_t length : set.lengths.Values()) {
    std::vector<TensorSpec> missing;
    for (const auto& s : model.inputs) {
      if (std::none_of(given.begin(), given.end(), [&](const NamedTensor& t) { return t.name == s.name; }))
        missing.push_back(s);
    }
    InputPlan step_plan = plan;
    if (!flags.lengths.empty()) step_plan.dims[flags.length_dim] = length;
    step_plan.seed = plan.seed * 1000 + static_cast<std::uint64_t>(length);
    ORTKIT_ASSIGN_OR_RETURN(auto synthesised, SynthesizeInputs(missing, hints, step_plan));
    std::vector<NamedTensor> inputs;
    for (const auto& s : model.inputs) {
      auto find = [&](std::vector<NamedTensor>& list) {
        return std::find_if(list.begin(), list.end(), [&](const NamedTensor& t) { return t.name == s.name; });
      };
      if (auto it = find(given); it != given.end())
        inputs.push_back({s.name, it->tensor.Clone()});
      else
        inputs.push_back(std::move(*find(synthesised)));
    }
    ORTKIT_ASSIGN_OR_RETURN(auto encoded, client.Encode(inputs, outputs));
    set.by_length.push_back(std::move(encoded));
  }
  return set;
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

int Perf(const PerfFlags& flags) {
  Format format;
  ParseFormat(flags.format, &format);
  perf::ClientOptions client_options;
  client_options.protocol = flags.protocol == "grpc" ? perf::Protocol::kGrpc : perf::Protocol::kHttp;
  client_options.url = flags.url;
  client_options.model = flags.model;
  client_options.json_tensors = flags.json_tensors;
  client_options.timeout_ms = flags.timeout_ms;

  std::string http_base;
  if (client_options.protocol == perf::Protocol::kHttp) {
    auto base = perf::NormalizeHttpBase(flags.url);
    if (!base.ok()) return Fail(base.error().message, format);
    http_base = *base;
  }
  if (flags.json_tensors && client_options.protocol != perf::Protocol::kHttp) {
    return Fail("--json selects JSON tensors over HTTP; gRPC always sends raw tensor contents", format);
  }
  auto load = MakeLoadOptions(flags, http_base);
  if (!load.ok()) return Fail(load.error().message, format);
  if (!flags.plot.empty() && flags.plot.extension() != ".svg") {
    return Fail(fmt::format("--plot {}: the plot is an SVG file; name it *.svg", flags.plot.string()), format);
  }

  auto client = perf::CreateClient(client_options);
  if (!client.ok()) return Fail(client.error().message, format);
  if (auto ready = (*client)->CheckReady(); !ready.ok()) return Fail(ready.error().message, format);
  auto model = (*client)->ModelMetadata();
  if (!model.ok()) return Fail(fmt::format("model '{}': {}", flags.model, model.error().message), format);
  auto requests = PrepareRequests(flags, *model, **client);
  if (!requests.ok()) return Fail(requests.error().message, format);

  const Style style = Style::ForStream(stderr);
  if (format == Format::kText) {
    std::vector<std::string> inputs;
    for (const auto& s : model->inputs) inputs.push_back(s.Describe());
    std::fprintf(
        stderr, "%s\n",
        style
            .Dim(fmt::format("perf {} model {} over {} ({}), inputs {}{}; {:g} s warm-up + {:g} s per step", flags.url,
                             flags.model, flags.protocol,
                             client_options.protocol == perf::Protocol::kGrpc ? "raw tensors"
                             : flags.json_tensors                             ? "JSON tensors"
                                                                              : "binary tensors",
                             fmt::join(inputs, ", "),
                             flags.lengths.empty() ? "" : fmt::format(", {} {}", flags.length_dim, flags.lengths),
                             flags.warmup_s, flags.duration_s))
            .c_str());
  }
  const perf::ClientFactory factory = [&client_options] { return perf::CreateClient(client_options); };
  perf::LoopFactory loops;
  if (client_options.protocol == perf::Protocol::kHttp) {
    loops = [&client_options](std::size_t connections) { return perf::CreateHttpLoop(client_options, connections); };
  }
  auto progress = [&](const perf::StepResult& step) {
    if (format != Format::kText) return;
    std::fprintf(stderr, "%s\n",
                 style
                     .Dim(fmt::format("  step {}: {:.1f} infer/s, p99 {} ms, errors {}", StepLabel(step),
                                      step.throughput, Ms(step.latency.p99), ErrorsText(step)))
                     .c_str());
  };
  auto steps = perf::RunLoad(*load, factory, *requests, progress, loops);
  if (!steps.ok()) return Fail(steps.error().message, format);

  std::string metrics_note;
  for (const auto& step : *steps) {
    if (!step.metrics_error.empty()) metrics_note = step.metrics_error;
  }
  if (format == Format::kJson) {
    nlohmann::json out{{"command", "perf"},
                       {"url", flags.url},
                       {"model", flags.model},
                       {"protocol", flags.protocol},
                       {"tensors", client_options.protocol == perf::Protocol::kGrpc ? "raw"
                                   : flags.json_tensors                             ? "json"
                                                                                    : "binary"},
                       {"lengths", flags.lengths.empty() ? nlohmann::json(nullptr) : nlohmann::json(flags.lengths)},
                       {"duration_s", flags.duration_s},
                       {"steps", nlohmann::json::array()}};
    for (const auto& step : *steps) out["steps"].push_back(StepJson(step));
    std::cout << JsonText(out) << "\n";
  } else {
    const bool open_loop = !load->request_rates.empty();
    Table table(
        {open_loop ? "rate" : "concurrency", "throughput/s", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "errors", "batch"},
        {true, true, true, true, true, true, false, true});
    for (const auto& step : *steps) {
      table.AddRow({StepLabel(step), fmt::format("{:.1f}", step.throughput), Ms(step.latency.p50), Ms(step.latency.p90),
                    Ms(step.latency.p95), Ms(step.latency.p99), ErrorsText(step),
                    step.server_batch_size ? fmt::format("{:.2f}", *step.server_batch_size) : "-"});
    }
    std::cout << table.Render(Style::ForStream(stdout));
    std::map<std::string, std::string> examples;
    for (const auto& step : *steps) examples.insert(step.error_examples.begin(), step.error_examples.end());
    for (const auto& [kind, message] : examples) {
      std::fprintf(stderr, "%s\n",
                   style.Dim(fmt::format("{}: {}", kind, message.empty() ? "(no message)" : message)).c_str());
    }
    if (!metrics_note.empty()) std::fprintf(stderr, "%s\n", style.Dim("batch: " + metrics_note).c_str());
  }
  if (!flags.plot.empty()) {
    std::vector<perf::PerfPlotPoint> points;
    for (const auto& step : *steps)
      points.push_back({StepLabel(step), step.throughput, step.latency.p50, step.latency.p99});
    auto written = perf::WriteThroughputLatencyPlot(
        flags.plot, fmt::format("ortkit perf: {} at {}", flags.model, flags.url), points);
    if (!written.ok()) return Fail(written.error().message, format);
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
      ->capture_default_str();
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
