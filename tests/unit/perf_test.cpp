// ortkit perf's library: percentiles, --lengths, Prometheus scrapes, v2 request encoding, and the
// load generator against a real HTTP server on a loopback port.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "ortkit/perf/infer_client.h"
#include "ortkit/perf/lengths.h"
#include "ortkit/perf/load_generator.h"
#include "ortkit/perf/perf_plot.h"
#include "ortkit/perf/prometheus.h"
#include "ortkit/perf/v2_protocol.h"

namespace ortkit::perf {
namespace {

TEST(PerfLengths, ParsesFormsAndRejectsBadOnes) {
  auto uniform = ParseLengths("uniform:4:128");
  ASSERT_TRUE(uniform.ok());
  EXPECT_EQ(uniform->min, 4);
  EXPECT_EQ(uniform->max, 128);
  EXPECT_EQ(uniform->Values().size(), 125u);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) {
    const auto v = uniform->Draw(rng);
    ASSERT_GE(v, 4);
    ASSERT_LE(v, 128);
  }
  EXPECT_EQ(ParseLengths("fixed:8")->max, 8);
  EXPECT_EQ(ParseLengths("16")->min, 16);
  for (const char* bad : {"uniform:8:4", "uniform:0:4", "normal:4:8", "uniform:4", "fixed:x", "uniform:1:100000", ""}) {
    auto parsed = ParseLengths(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("--lengths"), std::string::npos) << parsed.error().message;
  }
}

TEST(PerfPrometheus, ReadsBatchCountersPerModel) {
  const std::string text =
      "# HELP ortkit_inference_count_total rows inferred\n"
      "# TYPE ortkit_inference_count_total counter\n"
      "ortkit_inference_count_total{model=\"bert\",version=\"1\"} 640\n"
      "ortkit_execution_count_total{model=\"bert\",version=\"1\"} 80\n"
      "ortkit_inference_count_total{model=\"other\"} 5\n"
      "ortkit_execution_count_total{model=\"other\"} 5\n"
      "ortkit_request_duration_us_bucket{model=\"bert\",le=\"+Inf\"} 640\n"
      "garbage line {\n"
      "odd{model=\"a\\\"b\"} 1e3\n";
  const auto samples = ParsePrometheusText(text);
  auto counters = ReadBatchCounters(samples, "bert");
  ASSERT_TRUE(counters.has_value());
  EXPECT_EQ(counters->inferences, 640);
  EXPECT_EQ(counters->executions, 80);
  EXPECT_EQ(ReadBatchCounters(samples, "other")->inferences, 5);
  EXPECT_FALSE(ReadBatchCounters(ParsePrometheusText("up 1\n"), "bert").has_value());
  auto odd = SumForModel(samples, "odd", "a\"b");
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(*odd, 1000);
  // Triton's names work too.
  auto triton = ReadBatchCounters(
      ParsePrometheusText(
          "nv_inference_count{model=\"m\",version=\"1\"} 30\nnv_inference_exec_count{model=\"m\",version=\"1\"} 10\n"),
      "m");
  ASSERT_TRUE(triton.has_value());
  EXPECT_EQ(triton->inferences / triton->executions, 3);
}

TEST(PerfProtocol, ParsesMetadataAndNamesDynamicDimsByPosition) {
  auto model = ParseModelMetadata(R"({"name":"bert","inputs":[
      {"name":"input_ids","datatype":"INT64","shape":[-1,-1]},
      {"name":"attention_mask","datatype":"INT64","shape":[-1,-1]}],
    "outputs":[{"name":"last_hidden_state","datatype":"FP32","shape":[-1,-1,32]}]})");
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(model->inputs.size(), 2u);
  EXPECT_EQ(model->inputs[0].type, DataType::kInt64);
  EXPECT_EQ(model->inputs[0].dims[0].symbol, "batch");
  EXPECT_EQ(model->inputs[0].dims[1].symbol, "seq_len");
  EXPECT_EQ(model->outputs[0].dims[2].value, 32);
  EXPECT_EQ(model->outputs[0].type, DataType::kFloat32);

  auto bad_type = ParseModelMetadata(R"({"inputs":[{"name":"x","datatype":"FP99","shape":[1]}]})");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.error().message.find("FP99"), std::string::npos);
  EXPECT_FALSE(ParseModelMetadata("not json").ok());
  EXPECT_FALSE(ParseModelMetadata(R"({"inputs":[{"name":"x","datatype":"FP32"}]})").ok());
}

TEST(PerfProtocol, HintsKeepIdsInRange) {
  std::vector<TensorSpec> specs(3);
  specs[0].name = "input_ids";
  specs[1].name = "attention_mask";
  specs[2].name = "token_type_ids";
  const auto hints = HintsFromNames(specs);
  EXPECT_EQ(hints.count("input_ids"), 0u);
  EXPECT_EQ(hints.at("attention_mask").kind, ValueHint::Kind::kOnes);
  EXPECT_EQ(hints.at("token_type_ids").kind, ValueHint::Kind::kChoice);
  EXPECT_EQ(hints.at("token_type_ids").choice, 0);
}

std::vector<NamedTensor> TwoInputs() {
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", std::move(Tensor::FromVector<float>({1, 2}, {1.5f, -2.0f})).value()});
  inputs.push_back({"ids", std::move(Tensor::FromVector<std::int64_t>({1, 3}, {7, 8, 9})).value()});
  return inputs;
}

TEST(PerfProtocol, BinaryRequestIsHeaderThenRawBytes) {
  auto request = EncodeBinaryRequest(TwoInputs(), {"y"});
  ASSERT_TRUE(request.ok());
  ASSERT_GT(request->header_length, 0u);
  ASSERT_EQ(request->body.size(), request->header_length + 2 * 4 + 3 * 8);
  const auto header = nlohmann::json::parse(request->body.substr(0, request->header_length));
  EXPECT_EQ(header["inputs"][0]["datatype"], "FP32");
  EXPECT_EQ(header["inputs"][0]["parameters"]["binary_data_size"], 8);
  EXPECT_EQ(header["inputs"][1]["datatype"], "INT64");
  EXPECT_EQ(header["inputs"][1]["shape"], nlohmann::json::array({1, 3}));
  EXPECT_EQ(header["outputs"][0]["parameters"]["binary_data"], true);
  float first;
  std::memcpy(&first, request->body.data() + request->header_length, 4);
  EXPECT_EQ(first, 1.5f);
  std::int64_t last;
  std::memcpy(&last, request->body.data() + request->body.size() - 8, 8);
  EXPECT_EQ(last, 9);
}

TEST(PerfProtocol, JsonRequestCarriesData) {
  auto request = EncodeJsonRequest(TwoInputs(), {});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->header_length, 0u);
  const auto doc = nlohmann::json::parse(request->body);
  EXPECT_EQ(doc["inputs"][0]["data"], nlohmann::json::array({1.5, -2.0}));
  EXPECT_EQ(doc["inputs"][1]["data"], nlohmann::json::array({7, 8, 9}));
  EXPECT_FALSE(doc.contains("outputs"));
  EXPECT_EQ(ErrorMessageOf(R"({"error":"unknown model 'x'"})"), "unknown model 'x'");
}

TEST(PerfClient, UrlForms) {
  EXPECT_EQ(*NormalizeHttpBase("127.0.0.1:8000"), "http://127.0.0.1:8000");
  EXPECT_EQ(*NormalizeHttpBase("http://localhost:9/"), "http://localhost:9");
  for (const char* bad : {"https://a:1", "localhost", "a:1/v2", "a:x", ":80"})
    EXPECT_FALSE(NormalizeHttpBase(bad).ok()) << bad;
}

TEST(PerfClient, UnreachableServerSaysSo) {
  // Bind and close a socket to learn a port nobody listens on.
  httplib::Server probe;
  const int port = probe.bind_to_any_port("127.0.0.1");
  probe.stop();
  ClientOptions options;
  options.url = "127.0.0.1:" + std::to_string(port);
  options.model = "m";
  options.timeout_ms = 2000;
  auto client = CreateClient(options);
  ASSERT_TRUE(client.ok());
  auto ready = (*client)->CheckReady();
  ASSERT_FALSE(ready.ok());
  EXPECT_NE(ready.error().message.find("cannot reach the server at http://127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << ready.error().message;
}

// A v2 endpoint on a loopback port that answers every third infer with 503 and counts batches of 4.
class FakeV2Server {
 public:
  FakeV2Server() {
    server_.Get("/v2/health/ready",
                [](const httplib::Request&, httplib::Response& res) { res.set_content("{}", "application/json"); });
    server_.Post("/v2/models/m/infer", [this](const httplib::Request& req, httplib::Response& res) {
      const bool binary = req.has_header("Inference-Header-Content-Length");
      if (!binary) binary_ok_ = false;
      if (++calls_ % 3 == 0) {
        res.status = 503;
        res.set_content(R"({"error":"queue full"})", "application/json");
        return;
      }
      ++served_;
      res.set_content(R"({"outputs":[]})", "application/json");
    });
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      const long rows = served_.load();
      res.set_content(
          fmt::format(
              "ortkit_inference_count_total{{model=\"m\"}} {}\nortkit_execution_count_total{{model=\"m\"}} {}\n", rows,
              rows / 4.0),
          "text/plain");
    });
    server_.set_tcp_nodelay(true);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeV2Server() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  bool binary_ok() const { return binary_ok_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<long> calls_{0}, served_{0};
  std::atomic<bool> binary_ok_{true};
};

RequestSet TwoLengths(InferClient& client) {
  RequestSet set;
  set.lengths = {4, 5};
  for (int i = 0; i < 2; ++i) set.by_length.push_back(*client.Encode(TwoInputs(), {"y"}));
  return set;
}

TEST(PerfLoad, ClosedLoopCountsSuccessesErrorsAndBatchSize) {
  FakeV2Server server;
  ClientOptions client_options;
  client_options.url = "127.0.0.1:" + std::to_string(server.port());
  client_options.model = "m";
  auto client = CreateClient(client_options);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->CheckReady().ok());
  LoadOptions options;
  options.concurrency = {1, 4};
  options.duration_s = 0.4;
  options.warmup_s = 0.1;
  options.model = "m";
  options.metrics_url = "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics";
  int callbacks = 0;
  auto steps = RunLoad(
      options, [&] { return CreateClient(client_options); }, TwoLengths(**client),
      [&](const StepResult&) { ++callbacks; });
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ(callbacks, 2);
  EXPECT_TRUE(server.binary_ok());
  for (const auto& step : *steps) {
    EXPECT_GT(step.succeeded, 10u);
    ASSERT_EQ(step.errors.count("HTTP 503"), 1u);
    const double error_share = static_cast<double>(step.errors.at("HTTP 503")) / static_cast<double>(step.completed);
    EXPECT_NEAR(error_share, 1.0 / 3, 0.1);
    EXPECT_EQ(step.completed, step.succeeded + step.errors.at("HTTP 503"));
    ASSERT_TRUE(step.server_batch_size.has_value()) << step.metrics_error;
    EXPECT_NEAR(*step.server_batch_size, 4.0, 0.01);
    EXPECT_GT(step.latency.p50, 0);
    EXPECT_LE(step.latency.p50, step.latency.p99);
    EXPECT_NEAR(step.throughput, static_cast<double>(step.succeeded) / step.window_s, 1e-6);
  }
  EXPECT_EQ((*steps)[1].concurrency, 4);
}

TEST(PerfLoad, OpenLoopKeepsTheRate) {
  FakeV2Server server;
  ClientOptions client_options;
  client_options.url = "127.0.0.1:" + std::to_string(server.port());
  client_options.model = "m";
  client_options.json_tensors = true;
  auto client = CreateClient(client_options);
  LoadOptions options;
  options.request_rates = {200};
  options.poisson = true;
  options.duration_s = 0.5;
  options.warmup_s = 0.1;
  options.max_outstanding = 8;
  auto steps = RunLoad(
      options, [&] { return CreateClient(client_options); }, TwoLengths(**client), nullptr);
  ASSERT_TRUE(steps.ok());
  const StepResult& step = steps->front();
  EXPECT_EQ(step.request_rate, 200);
  EXPECT_NEAR(static_cast<double>(step.completed) / step.window_s, 200, 60);
  EXPECT_FALSE(server.binary_ok());  // --json sends JSON tensors
  EXPECT_FALSE(step.server_batch_size.has_value());
}

TEST(PerfPlot, SvgHasBothSeriesAndEscapesLabels) {
  const std::string svg = RenderThroughputLatencySvg("a <b>", {{"1", 100, 1, 2}, {"8", 700, 3, 9}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("a &lt;b&gt;"), std::string::npos);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
  EXPECT_NE(svg.find(">p50<"), std::string::npos);
  EXPECT_NE(svg.find(">p99<"), std::string::npos);
  EXPECT_NE(svg.find("700.0/s"), std::string::npos);
}

}  // namespace
}  // namespace ortkit::perf
