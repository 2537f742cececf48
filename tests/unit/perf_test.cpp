// ortkit perf's library: percentiles, --lengths, Prometheus scrapes, v2 request encoding, the HTTP client
// against cpp-httplib's server and a hand-rolled peer, and the load generator against a real HTTP server on a
// loopback port.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
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

// An httplib::Server on a loopback port: an HTTP implementation independent of perf's client.
class LoopbackHttpServer {
 public:
  explicit LoopbackHttpServer(const std::function<void(httplib::Server&)>& configure) {
    configure(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackHttpServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

// What the v2 handlers below saw: one entry per request, in arrival order.
struct SeenRequests {
  std::mutex mutex;
  std::vector<int> client_ports;  // one per request: equal ports mean one kept-alive connection
  std::vector<std::string> bodies;
  std::vector<std::string> content_types;
  std::vector<std::string> inference_header_lengths;

  void Record(const httplib::Request& request) {
    std::lock_guard lock(mutex);
    client_ports.push_back(request.remote_port);
    bodies.push_back(request.body);
    content_types.push_back(request.get_header_value("Content-Type"));
    inference_header_lengths.push_back(request.get_header_value("Inference-Header-Content-Length"));
  }
  std::size_t Connections() {
    std::lock_guard lock(mutex);
    return std::set<int>(client_ports.begin(), client_ports.end()).size();
  }
};

constexpr const char* kMetadata = R"({"name":"m","inputs":[{"name":"x","datatype":"FP32","shape":[-1,2]}],)"
                                  R"("outputs":[{"name":"y","datatype":"FP32","shape":[-1,2]}]})";

// Model "m" serves metadata (chunked, a few bytes per chunk) and infers; "busy" answers 503 and
// "missing" 404 with protocol error bodies; /big is 300 KB of text in 1000-byte chunks.
void ServeV2(httplib::Server& server, SeenRequests& seen) {
  server.Get("/v2/health/ready", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  server.Get("/v2/models/m", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](std::size_t offset, httplib::DataSink& sink) {
      const std::string_view metadata(kMetadata);
      if (offset >= metadata.size()) {
        sink.done();
        return true;
      }
      return sink.write(metadata.data() + offset, std::min<std::size_t>(7, metadata.size() - offset));
    });
  });
  server.Get("/v2/models/missing", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"error":"unknown model 'missing'"})", "application/json");
  });
  server.Post("/v2/models/m/infer", [&seen](const httplib::Request& req, httplib::Response& res) {
    seen.Record(req);
    res.set_content(R"({"model_name":"m","outputs":[]})", "application/json");
  });
  server.Post("/v2/models/busy/infer", [&seen](const httplib::Request& req, httplib::Response& res) {
    seen.Record(req);
    res.status = 503;
    res.set_content(R"({"error":"queue full"})", "application/json");
  });
  server.Post("/v2/models/missing/infer", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"error":"unknown model 'missing'"})", "application/json");
  });
  server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [](std::size_t offset, httplib::DataSink& sink) {
      if (offset >= 300 * 1000) {
        sink.done();
        return true;
      }
      const std::string chunk(1000, static_cast<char>('a' + offset / 1000 % 26));
      return sink.write(chunk.data(), chunk.size());
    });
  });
}

std::string BigText() {
  std::string text;
  for (int k = 0; k < 300; ++k) text.append(1000, static_cast<char>('a' + k % 26));
  return text;
}

std::unique_ptr<InferClient> HttpClientFor(int port, const std::string& model, bool json = false,
                                           int timeout_ms = 2000) {
  ClientOptions options;
  options.url = "127.0.0.1:" + std::to_string(port);
  options.model = model;
  options.json_tensors = json;
  options.timeout_ms = timeout_ms;
  return std::move(CreateHttpClient(options)).value();
}

TEST(PerfHttpClient, BinaryAndJsonInfersReuseOneConnection) {
  SeenRequests seen;
  LoopbackHttpServer server([&](httplib::Server& s) { ServeV2(s, seen); });
  auto binary = HttpClientFor(server.port(), "m");
  auto binary_request = binary->Encode(TwoInputs(), {"y"});
  ASSERT_TRUE(binary_request.ok());
  for (int i = 0; i < 3; ++i) {
    const InferOutcome outcome = binary->Infer(*binary_request);
    ASSERT_TRUE(outcome.ok()) << outcome.error << ": " << outcome.detail;
  }
  auto json = HttpClientFor(server.port(), "m", /*json=*/true);
  auto json_request = json->Encode(TwoInputs(), {"y"});
  ASSERT_TRUE(json_request.ok());
  const InferOutcome json_outcome = json->Infer(*json_request);
  ASSERT_TRUE(json_outcome.ok()) << json_outcome.error << ": " << json_outcome.detail;

  std::lock_guard lock(seen.mutex);
  ASSERT_EQ(seen.bodies.size(), 4u);
  EXPECT_EQ(seen.bodies[0], binary_request->body);  // the raw tensor bytes arrive intact after the JSON header
  EXPECT_EQ(seen.content_types[0], "application/octet-stream");
  EXPECT_EQ(seen.inference_header_lengths[0], std::to_string(binary_request->header_length));
  EXPECT_EQ(seen.client_ports[0], seen.client_ports[1]);
  EXPECT_EQ(seen.client_ports[1], seen.client_ports[2]);
  EXPECT_EQ(seen.bodies[3], json_request->body);
  EXPECT_EQ(seen.content_types[3], "application/json");
  EXPECT_EQ(seen.inference_header_lengths[3], "");
  EXPECT_NE(seen.client_ports[3], seen.client_ports[0]);  // a second client, a second connection
}

TEST(PerfHttpClient, ReadsChunkedAnswers) {
  SeenRequests seen;
  LoopbackHttpServer server([&](httplib::Server& s) { ServeV2(s, seen); });
  auto client = HttpClientFor(server.port(), "m");
  ASSERT_TRUE(client->CheckReady().ok());
  auto model = client->ModelMetadata();
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->name, "m");
  ASSERT_EQ(model->inputs.size(), 1u);
  EXPECT_EQ(model->inputs[0].name, "x");
  EXPECT_EQ(model->outputs[0].dims[1].value, 2);
  auto big = HttpGetText("http://127.0.0.1:" + std::to_string(server.port()) + "/big", 2000);
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_EQ(*big, BigText());
}

TEST(PerfHttpClient, ErrorStatusesCarryTheServersMessage) {
  SeenRequests seen;
  LoopbackHttpServer server([&](httplib::Server& s) { ServeV2(s, seen); });
  auto encoded = HttpClientFor(server.port(), "m")->Encode(TwoInputs(), {"y"});
  ASSERT_TRUE(encoded.ok());

  auto busy = HttpClientFor(server.port(), "busy");
  for (int i = 0; i < 2; ++i) {
    const InferOutcome outcome = busy->Infer(*encoded);
    EXPECT_EQ(outcome.error, "HTTP 503");
    EXPECT_EQ(outcome.detail, "queue full");
  }
  EXPECT_EQ(seen.Connections(), 1u);  // an error status leaves the connection usable

  auto missing = HttpClientFor(server.port(), "missing");
  const InferOutcome outcome = missing->Infer(*encoded);
  EXPECT_EQ(outcome.error, "HTTP 404");
  EXPECT_EQ(outcome.detail, "unknown model 'missing'");
  auto metadata = missing->ModelMetadata();
  ASSERT_FALSE(metadata.ok());
  EXPECT_EQ(metadata.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(metadata.error().message.find("/v2/models/missing answered 404: unknown model 'missing'"),
            std::string::npos)
      << metadata.error().message;
  auto not_found = HttpGetText("http://127.0.0.1:" + std::to_string(server.port()) + "/nothing", 2000);
  ASSERT_FALSE(not_found.ok());
  EXPECT_NE(not_found.error().message.find("/nothing answered 404"), std::string::npos) << not_found.error().message;
}

TEST(PerfHttpClient, ReconnectsAfterConnectionCloseAnswers) {
  SeenRequests seen;
  LoopbackHttpServer server([&](httplib::Server& s) {
    ServeV2(s, seen);
    s.set_keep_alive_max_count(1);  // every answer says Connection: close
  });
  auto client = HttpClientFor(server.port(), "m");
  auto request = client->Encode(TwoInputs(), {"y"});
  for (int i = 0; i < 3; ++i) {
    const InferOutcome outcome = client->Infer(*request);
    ASSERT_TRUE(outcome.ok()) << outcome.error << ": " << outcome.detail;
  }
  EXPECT_EQ(seen.Connections(), 3u);
}

TEST(PerfHttpClient, ResendsOnceWhenTheServerClosedAnIdleConnection) {
  SeenRequests seen;
  LoopbackHttpServer server([&](httplib::Server& s) {
    ServeV2(s, seen);
    s.set_keep_alive_timeout(1);  // seconds; the server closes without a word, as at an idle timeout
  });
  auto client = HttpClientFor(server.port(), "m");
  auto request = client->Encode(TwoInputs(), {"y"});
  ASSERT_TRUE(client->Infer(*request).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const InferOutcome outcome = client->Infer(*request);
  ASSERT_TRUE(outcome.ok()) << outcome.error << ": " << outcome.detail;
  std::lock_guard lock(seen.mutex);
  ASSERT_EQ(seen.client_ports.size(), 2u);  // the dead connection swallowed nothing the server counted
  EXPECT_NE(seen.client_ports[0], seen.client_ports[1]);
}

// A listening loopback socket and nothing else: the kernel completes connections, nobody reads or answers.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "cannot listen on a loopback port: " << std::strerror(errno);
    }
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() { close(fd_); }
  int fd() const { return fd_; }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// One infer and how long it took.
std::pair<InferOutcome, std::chrono::steady_clock::duration> TimedInfer(InferClient& client) {
  auto request = client.Encode(TwoInputs(), {"y"});
  const auto start = std::chrono::steady_clock::now();
  InferOutcome outcome = client.Infer(*request);
  return {std::move(outcome), std::chrono::steady_clock::now() - start};
}

TEST(PerfHttpClient, ServerThatNeverAnswersTimesOut) {
  SilentListener listener;
  auto client = HttpClientFor(listener.port(), "m", false, /*timeout_ms=*/200);
  const auto [outcome, elapsed] = TimedInfer(*client);
  EXPECT_EQ(outcome.error, "timed out");
  EXPECT_GE(elapsed, std::chrono::milliseconds(190));
  EXPECT_LT(elapsed, std::chrono::milliseconds(1500));
  auto ready = client->CheckReady();
  ASSERT_FALSE(ready.ok());
  EXPECT_NE(ready.error().message.find("timed out"), std::string::npos) << ready.error().message;
}

TEST(PerfHttpClient, ServerThatTricklesItsAnswerTimesOut) {
  SilentListener listener;
  std::thread trickler([&] {
    const int connection = accept(listener.fd(), nullptr, nullptr);
    char request[4096];
    if (connection < 0 || recv(connection, request, sizeof(request), 0) <= 0) return;
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n";
    send(connection, head.data(), head.size(), MSG_NOSIGNAL);
    // Each byte comes well within the socket's receive timeout; the whole answer would take 2 s.
    for (int i = 0; i < 40 && send(connection, "x", 1, MSG_NOSIGNAL) == 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    close(connection);
  });
  auto client = HttpClientFor(listener.port(), "m", false, /*timeout_ms=*/200);
  const auto [outcome, elapsed] = TimedInfer(*client);
  EXPECT_EQ(outcome.error, "timed out");
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000));
  client.reset();  // closes the connection: the trickler's next send fails
  trickler.join();
}

TEST(PerfHttpClient, RefusedPortIsAConnectionFailure) {
  int port = 0;
  {
    SilentListener probe;  // bound and closed: a port nobody listens on
    port = probe.port();
  }
  auto client = HttpClientFor(port, "m");
  auto request = client->Encode(TwoInputs(), {"y"});
  const InferOutcome outcome = client->Infer(*request);
  EXPECT_EQ(outcome.error, "connection failed");
  EXPECT_NE(outcome.detail.find("refused"), std::string::npos) << outcome.detail;
  auto text = HttpGetText("http://127.0.0.1:" + std::to_string(port) + "/metrics", 2000);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("connection failed"), std::string::npos) << text.error().message;
}

// A hand-written HTTP peer for answers no well-behaved server gives: it reads each request whole and writes
// back `reply(index)` verbatim, closing the connection after it when asked to.
class ScriptedPeer {
 public:
  struct Reply {
    std::string bytes;
    bool close_after = false;
  };
  explicit ScriptedPeer(std::function<Reply(int)> reply) : reply_(std::move(reply)) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedPeer() {
    shutdown(listener_.fd(), SHUT_RDWR);  // wakes the accept
    thread_.join();
  }
  int port() const { return listener_.port(); }
  int requests() const { return requests_.load(); }

 private:
  void Serve() {
    for (int connection; (connection = accept(listener_.fd(), nullptr, nullptr)) >= 0; close(connection)) {
      while (ReadRequest(connection)) {
        const Reply reply = reply_(requests_++);
        if (send(connection, reply.bytes.data(), reply.bytes.size(), MSG_NOSIGNAL) < 0 || reply.close_after) break;
      }
    }
  }

  static bool ReadRequest(int connection) {
    std::string received;
    char chunk[4096];
    std::size_t head_end;
    while ((head_end = received.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t got = recv(connection, chunk, sizeof(chunk), 0);
      if (got <= 0) return false;
      received.append(chunk, static_cast<std::size_t>(got));
    }
    std::size_t body_length = 0;
    if (const auto field = received.find("Content-Length: "); field != std::string::npos && field < head_end)
      body_length = std::stoul(received.substr(field + 16));
    while (received.size() < head_end + 4 + body_length) {
      const ssize_t got = recv(connection, chunk, sizeof(chunk), 0);
      if (got <= 0) return false;
      received.append(chunk, static_cast<std::size_t>(got));
    }
    return true;
  }

  SilentListener listener_;
  std::function<Reply(int)> reply_;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

constexpr const char* kOkAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";

TEST(PerfHttpClient, NeverResendsAfterPartOfTheAnswerArrived) {
  ScriptedPeer peer([](int index) -> ScriptedPeer::Reply {
    if (index == 1) return {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"outp", true};
    return {kOkAnswer};
  });
  auto client = HttpClientFor(peer.port(), "m");
  auto request = client->Encode(TwoInputs(), {"y"});
  ASSERT_TRUE(client->Infer(*request).ok());
  const InferOutcome cut = client->Infer(*request);
  EXPECT_EQ(cut.error, "read failed");
  EXPECT_NE(cut.detail.find("unfinished answer"), std::string::npos) << cut.detail;
  EXPECT_EQ(peer.requests(), 2);
  const InferOutcome next = client->Infer(*request);  // on a new connection
  EXPECT_TRUE(next.ok()) << next.error << ": " << next.detail;
}

TEST(PerfHttpClient, MalformedAnswersAndLeftoverBytesAreErrors) {
  ScriptedPeer peer([](int index) -> ScriptedPeer::Reply {
    switch (index) {
      case 0: return {"SMTP ready\r\n\r\n"};
      case 1: return {std::string(kOkAnswer) + kOkAnswer};  // an answer nobody asked for
      case 2: return {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", true};
      default: return {kOkAnswer};
    }
  });
  auto client = HttpClientFor(peer.port(), "m");
  auto request = client->Encode(TwoInputs(), {"y"});
  const InferOutcome garbage = client->Infer(*request);
  EXPECT_EQ(garbage.error, "malformed answer");
  const InferOutcome leftover = client->Infer(*request);
  EXPECT_EQ(leftover.error, "malformed answer");
  EXPECT_NE(leftover.detail.find("bytes after the end of the answer"), std::string::npos) << leftover.detail;
  auto delimited_by_close = HttpGetText("http://127.0.0.1:" + std::to_string(peer.port()) + "/metrics", 2000);
  ASSERT_TRUE(delimited_by_close.ok()) << delimited_by_close.error().message;
  EXPECT_EQ(*delimited_by_close, "until the end");
  EXPECT_TRUE(client->Infer(*request).ok());
}

std::unique_ptr<InferLoop> HttpLoopFor(int port, std::size_t connections, int timeout_ms = 2000) {
  ClientOptions options;
  options.url = "127.0.0.1:" + std::to_string(port);
  options.model = "m";
  options.timeout_ms = timeout_ms;
  return std::move(CreateHttpLoop(options, connections)).value();
}

// Waits (up to 5 s) until every exchange in flight on `loop` has been reported; returns the outcomes by connection.
std::map<std::size_t, InferOutcome> Drain(InferLoop& loop) {
  std::map<std::size_t, InferOutcome> outcomes;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (loop.in_flight() > 0 && std::chrono::steady_clock::now() < give_up)
    loop.Wait(50, [&](std::size_t connection, const InferOutcome& outcome) { outcomes[connection] = outcome; });
  return outcomes;
}

TEST(PerfHttpLoop, KeepsARequestInFlightOnEveryConnectionFromOneThread) {
  // The server answers none until four requests are inside it at once: only concurrent connections get answers.
  SeenRequests seen;
  std::mutex mutex;
  std::condition_variable all_in;
  int inside = 0;
  LoopbackHttpServer server([&](httplib::Server& s) {
    s.Post("/v2/models/m/infer", [&](const httplib::Request& req, httplib::Response& res) {
      seen.Record(req);
      std::unique_lock lock(mutex);
      ++inside;
      all_in.notify_all();
      const bool together = all_in.wait_for(lock, std::chrono::seconds(3), [&] { return inside >= 4; });
      res.status = together ? 200 : 500;
      res.set_content(R"({"outputs":[]})", "application/json");
    });
  });
  auto loop = HttpLoopFor(server.port(), 4);
  auto request = HttpClientFor(server.port(), "m")->Encode(TwoInputs(), {"y"});
  for (std::size_t c = 0; c < 4; ++c) loop->Send(c, *request);
  EXPECT_EQ(loop->in_flight(), 4u);
  auto outcomes = Drain(*loop);
  ASSERT_EQ(outcomes.size(), 4u);
  for (const auto& [connection, outcome] : outcomes)
    EXPECT_TRUE(outcome.ok()) << outcome.error << ": " << outcome.detail;
  EXPECT_EQ(seen.Connections(), 4u);
  // Kept alive: a second round reuses the four connections.
  for (std::size_t c = 0; c < 4; ++c) loop->Send(c, *request);
  outcomes = Drain(*loop);
  for (const auto& [connection, outcome] : outcomes) EXPECT_TRUE(outcome.ok()) << outcome.error;
  EXPECT_EQ(seen.Connections(), 4u);
  std::lock_guard lock(seen.mutex);
  EXPECT_EQ(seen.inference_header_lengths.size(), 8u);
  EXPECT_EQ(seen.content_types[0], "application/octet-stream");
}

TEST(PerfHttpLoop, FailsTimesOutAndResendsAsTheBlockingClientDoes) {
  SilentListener silent;
  int refused = 0;
  {
    SilentListener probe;
    refused = probe.port();
  }
  auto request = HttpClientFor(silent.port(), "m")->Encode(TwoInputs(), {"y"});

  auto slow = HttpLoopFor(silent.port(), 1, /*timeout_ms=*/200);
  const auto start = std::chrono::steady_clock::now();
  slow->Send(0, *request);
  const auto timed_out = Drain(*slow);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(190));
  ASSERT_EQ(timed_out.size(), 1u);
  EXPECT_EQ(timed_out.at(0).error, "timed out");

  auto nobody = HttpLoopFor(refused, 1);
  nobody->Send(0, *request);
  const auto failed = Drain(*nobody);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed.at(0).error, "connection failed");
  EXPECT_NE(failed.at(0).detail.find("refused"), std::string::npos) << failed.at(0).detail;

  ScriptedPeer peer([](int index) -> ScriptedPeer::Reply {
    if (index == 1) return {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"outp", true};
    if (index == 2) return {"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 22\r\n\r\n{\"error\":\"queue full\"}"};
    return {kOkAnswer};
  });
  auto loop = HttpLoopFor(peer.port(), 1);
  std::vector<InferOutcome> seen;
  for (int i = 0; i < 4; ++i) {
    loop->Send(0, *request);
    seen.push_back(Drain(*loop).at(0));
  }
  EXPECT_TRUE(seen[0].ok());
  EXPECT_EQ(seen[1].error, "read failed");  // never resent once part of the answer arrived
  EXPECT_NE(seen[1].detail.find("unfinished answer"), std::string::npos) << seen[1].detail;
  EXPECT_EQ(seen[2].error, "HTTP 503");
  EXPECT_EQ(seen[2].detail, "queue full");
  EXPECT_TRUE(seen[3].ok()) << seen[3].error;
  EXPECT_EQ(peer.requests(), 4);

  SeenRequests closing_seen;
  LoopbackHttpServer closing([&](httplib::Server& s) {
    ServeV2(s, closing_seen);
    s.set_keep_alive_timeout(1);  // seconds; the server closes without a word, as at an idle timeout
  });
  auto idle = HttpLoopFor(closing.port(), 1);
  idle->Send(0, *request);
  ASSERT_TRUE(Drain(*idle).at(0).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  idle->Send(0, *request);
  const InferOutcome resent = Drain(*idle).at(0);
  EXPECT_TRUE(resent.ok()) << resent.error << ": " << resent.detail;
  std::lock_guard lock(closing_seen.mutex);
  ASSERT_EQ(closing_seen.client_ports.size(), 2u);
  EXPECT_NE(closing_seen.client_ports[0], closing_seen.client_ports[1]);
}

// A v2 endpoint on a loopback port that answers every third infer with 503 and counts batches of 4.
class FakeV2Server {
 public:
  FakeV2Server()
      : server_([this](httplib::Server& server) {
          server.Get("/v2/health/ready", [](const httplib::Request&, httplib::Response& res) {
            res.set_content("{}", "application/json");
          });
          server.Post("/v2/models/m/infer", [this](const httplib::Request& req, httplib::Response& res) {
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
          server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
            const long rows = served_.load();
            res.set_content(fmt::format("ortkit_inference_count_total{{model=\"m\"}} {}\n"
                                        "ortkit_execution_count_total{{model=\"m\"}} {}\n",
                                        rows, rows / 4.0),
                            "text/plain");
          });
          server.set_tcp_nodelay(true);
        }) {}
  int port() const { return server_.port(); }
  bool binary_ok() const { return binary_ok_; }

 private:
  std::atomic<long> calls_{0}, served_{0};
  std::atomic<bool> binary_ok_{true};
  LoopbackHttpServer server_;  // last: its handlers use the counters above
};

RequestSet TwoLengths(InferClient& client) {
  RequestSet set;
  set.lengths = {4, 5};
  for (int i = 0; i < 2; ++i) set.by_length.push_back(*client.Encode(TwoInputs(), {"y"}));
  return set;
}

// Closed loops from a thread per connection (InferClient) and from event loops (InferLoop) count alike.
class PerfClosedLoop : public testing::TestWithParam<bool> {};

TEST_P(PerfClosedLoop, CountsSuccessesErrorsAndBatchSize) {
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
  LoopFactory loops;
  if (GetParam()) loops = [&](std::size_t connections) { return CreateHttpLoop(client_options, connections); };
  int callbacks = 0;
  auto steps = RunLoad(
      options, [&] { return CreateClient(client_options); }, TwoLengths(**client),
      [&](const StepResult&) { ++callbacks; }, loops);
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

INSTANTIATE_TEST_SUITE_P(ThreadsAndEventLoops, PerfClosedLoop, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "EventLoops" : "ThreadPerConnection";
                         });

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
