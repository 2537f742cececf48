// The front ends over real sockets: ports (held by another server, out of range) for HTTP, metrics
// and gRPC, and gRPC requests whose values HTTP refuses too (integers outside their datatype,
// parameters of the wrong type), with the same words over both.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "grpc_predict_v2.grpc.pb.h"
#include "ortkit/serve/grpc/grpc_server.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/http/rest_codec.h"
#include "test_models.h"

namespace ortkit::serve {
namespace {

// y = x for one datatype, rows along N.
std::string IdentityModel(const char* type) {
  return fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph ({0}[N] x) => ({0}[N] y) {{
  y = Identity(x)
}}
)",
                     type);
}

class ServeFrontEnds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto runtime = Runtime::Create();
    ASSERT_TRUE(runtime.ok());
    runtime_ = std::move(runtime).value().release();
    dir_ = new testing::TempDir;
    std::vector<ModelSource> models;
    for (const char* type : {"int8", "int16", "uint8", "uint16"}) {
      ModelConfig config;
      config.batching.enabled = false;
      models.push_back(
          {type, dir_->WriteModel(std::string(type) + ".onnx", testing::ParseModelText(IdentityModel(type))), config});
    }
    auto core = InferenceCore::Create(*runtime_, std::move(models), CoreOptions{1});
    ASSERT_TRUE(core.ok()) << core.error().message;
    Status loaded = (*core)->LoadModels();
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    core_ = std::move(core).value().release();
    grpc::GrpcOptions options;
    options.port = 0;
    auto server = grpc::GrpcServer::Start(*core_, options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    grpc_ = std::move(server).value().release();
    stub_ = inference::GRPCInferenceService::NewStub(
                ::grpc::CreateChannel(fmt::format("127.0.0.1:{}", grpc_->port()), ::grpc::InsecureChannelCredentials()))
                .release();
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete grpc_;
    delete core_;
    delete dir_;
    delete runtime_;
  }

  void SetUp() override {
    ASSERT_NE(core_, nullptr) << "the suite's core did not load";
    ASSERT_NE(grpc_, nullptr) << "the suite's gRPC server did not start";
  }

  // One ModelInfer call on `model` with input 'x' of shape [values] filled by `fill`.
  template <typename Fill>
  static ::grpc::Status Infer(const std::string& model, const std::string& datatype, int values, Fill fill,
                              inference::ModelInferResponse* response = nullptr) {
    inference::ModelInferRequest request;
    request.set_model_name(model);
    auto* input = request.add_inputs();
    input->set_name("x");
    input->set_datatype(datatype);
    input->add_shape(values);
    fill(&request, input->mutable_contents());
    inference::ModelInferResponse ignored;
    ::grpc::ClientContext context;
    return stub_->ModelInfer(&context, request, response != nullptr ? response : &ignored);
  }

  static inline Runtime* runtime_ = nullptr;
  static inline testing::TempDir* dir_ = nullptr;
  static inline InferenceCore* core_ = nullptr;
  static inline grpc::GrpcServer* grpc_ = nullptr;
  static inline inference::GRPCInferenceService::Stub* stub_ = nullptr;
};

// gRPC sets SO_REUSEPORT by default: a second server on the port bound too, said it was listening,
// and the kernel split the connections between the two.
TEST_F(ServeFrontEnds, APortHeldByAnotherServerIsRefused) {
  const int held = grpc_->port();
  grpc::GrpcOptions grpc_options;
  grpc_options.port = held;
  auto second = grpc::GrpcServer::Start(*core_, grpc_options);
  ASSERT_FALSE(second.ok()) << "a second gRPC server bound port " << held;
  EXPECT_EQ(second.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(
      second.error().message,
      fmt::format("cannot listen for gRPC on 127.0.0.1:{0}: port {0} is in use (another process listens on it)", held));

  http::HttpOptions http_options;
  http_options.port = held;
  auto http = http::HttpServer::Create(*core_, http_options);
  ASSERT_FALSE(http.ok());
  EXPECT_EQ(
      http.error().message,
      fmt::format("cannot listen for HTTP on 127.0.0.1:{0}: port {0} is in use (another process listens on it)", held));
  http_options.port = 0;
  http_options.metrics_port = held;
  auto metrics = http::HttpServer::Create(*core_, http_options);
  ASSERT_FALSE(metrics.ok());
  EXPECT_NE(
      metrics.error().message.find(fmt::format("cannot listen for metrics on 127.0.0.1:{0}: port {0} is in use", held)),
      std::string::npos)
      << metrics.error().message;

  // And a gRPC server on a port an HTTP server holds.
  http_options.metrics_port = -1;
  auto listening = http::HttpServer::Create(*core_, http_options);
  ASSERT_TRUE(listening.ok()) << listening.error().message;
  grpc_options.port = (*listening)->port();
  auto on_http = grpc::GrpcServer::Start(*core_, grpc_options);
  ASSERT_FALSE(on_http.ok());
  EXPECT_NE(on_http.error().message.find("is in use"), std::string::npos) << on_http.error().message;
}

// A port was cast to 16 bits: 65536 bound a random port, -1 port 65535.
TEST_F(ServeFrontEnds, PortsOutsideZeroTo65535AreRefused) {
  for (int port : {-1, 65536, 99999}) {
    grpc::GrpcOptions grpc_options;
    grpc_options.port = port;
    auto grpc = grpc::GrpcServer::Start(*core_, grpc_options);
    ASSERT_FALSE(grpc.ok()) << port;
    EXPECT_EQ(grpc.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_EQ(grpc.error().message, fmt::format("gRPC port {} is not a port: give 0 to 65535 (0: a free one)", port));
    http::HttpOptions http_options;
    http_options.port = port;
    auto http = http::HttpServer::Create(*core_, http_options);
    ASSERT_FALSE(http.ok()) << port;
    EXPECT_EQ(http.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_EQ(http.error().message, fmt::format("HTTP port {} is not a port: give 0 to 65535 (0: a free one)", port));
  }
  for (int port : {-2, 65537}) {
    http::HttpOptions http_options;
    http_options.port = 0;
    http_options.metrics_port = port;
    auto http = http::HttpServer::Create(*core_, http_options);
    ASSERT_FALSE(http.ok()) << port;
    EXPECT_NE(http.error().message.find(fmt::format("metrics port {} is not a port", port)), std::string::npos)
        << http.error().message;
  }
}

// The options of both front ends and of the core are range-checked by their own Validate(),
// whichever flag or caller set them.
TEST_F(ServeFrontEnds, OptionsOutOfRangeAreRefusedNamingTheirFlag) {
  http::HttpOptions http_options;
  http_options.port = 0;
  http_options.idle_timeout_s = 0;
  auto http = http::HttpServer::Create(*core_, http_options);
  ASSERT_FALSE(http.ok());
  EXPECT_EQ(http.error().message, "idle_timeout_s (--http-idle-timeout-s): expected 1 to 86400, got 0");
  http_options.idle_timeout_s = 60;
  http_options.max_body_bytes = std::size_t{4} << 30;
  EXPECT_EQ(http_options.Validate().error().message,
            "max_body_bytes (--max-body-mb): expected 1 to 2146435072 bytes, got 4294967296");
  grpc::GrpcOptions grpc_options;
  grpc_options.busy_poll_us = -1;
  EXPECT_EQ(grpc_options.Validate().error().message,
            "busy_poll_us (--grpc-busy-poll-us): expected 0 to 1000000, got -1");
  CoreOptions core_options;
  core_options.max_inflight_bytes = 1000;
  EXPECT_EQ(core_options.Validate().error().message,
            "max_inflight_bytes (--max-inflight-bytes): expected 1048576 to 1125899906842624 bytes, got 1000");
  core_options.max_inflight_bytes = 0;
  core_options.limits.max_answer_bytes = 0;
  EXPECT_NE(core_options.Validate().error().message.find("max_answer_bytes (--max-answer-mb)"), std::string::npos);
}

// A timeout beyond int64 (uint64_param) saturated and was taken; it is refused as over HTTP.
TEST_F(ServeFrontEnds, GrpcTimeoutsPastAnHourAreRefused) {
  auto status = Infer("uint8", "UINT8", 1, [](inference::ModelInferRequest* request, auto* contents) {
    contents->add_uint_contents(1);
    (*request->mutable_parameters())["timeout"].set_uint64_param(UINT64_MAX);
  });
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("timeout 9223372036854775807 is out of range"), std::string::npos)
      << status.error_message();
}

// int_contents carries INT8 and INT16, uint_contents UINT8 and UINT16: values beyond the datatype
// were clamped (INT8 300 became 127) and answered OK.
TEST_F(ServeFrontEnds, GrpcIntegersOutsideTheDatatypeAreRefusedNotClamped) {
  struct Case {
    const char* model;
    const char* datatype;
    std::int64_t value;
    const char* range;
  } refused[] = {
      {"int8", "INT8", 300, "-128..127"},         {"int8", "INT8", -129, "-128..127"},
      {"int16", "INT16", 40000, "-32768..32767"}, {"uint8", "UINT8", 256, "0..255"},
      {"uint16", "UINT16", 70000, "0..65535"},
  };
  for (const auto& c : refused) {
    const bool is_signed = c.datatype[0] == 'I';
    auto status = Infer(c.model, c.datatype, 3, [&](auto*, inference::InferTensorContents* contents) {
      for (std::int64_t v : {std::int64_t{1}, c.value, std::int64_t{3}}) {
        if (is_signed)
          contents->add_int_contents(static_cast<std::int32_t>(v));
        else
          contents->add_uint_contents(static_cast<std::uint32_t>(v));
      }
    });
    EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << c.datatype << " " << c.value;
    EXPECT_EQ(status.error_message(),
              fmt::format("input 'x': element 1 is {}, outside {}'s range {}", c.value, c.datatype, c.range));
  }
  // The extremes fit, and come back exactly.
  inference::ModelInferResponse response;
  auto status = Infer(
      "int8", "INT8", 2,
      [](auto*, inference::InferTensorContents* contents) {
        contents->add_int_contents(-128);
        contents->add_int_contents(127);
      },
      &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.raw_output_contents_size(), 1);
  EXPECT_EQ(response.raw_output_contents(0), std::string("\x80\x7f", 2));
  status = Infer(
      "uint8", "UINT8", 1, [](auto*, inference::InferTensorContents* contents) { contents->add_uint_contents(255); },
      &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.raw_output_contents(0), std::string("\xff", 1));
}

// A 5 KB ModelInfer naming the output 1,000 times built a 1 GB answer; the classification
// extension's parameter was ignored (the whole output answered as if it had not been asked).
TEST_F(ServeFrontEnds, GrpcOutputsNamedTwiceOrForClassificationAreRefused) {
  auto status = Infer("uint8", "UINT8", 1, [](inference::ModelInferRequest* request, auto* contents) {
    contents->add_uint_contents(1);
    for (int i = 0; i < 1000; ++i) request->add_outputs()->set_name("y");
  });
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "output 'y' is asked for twice: name each output once");
  status = Infer("uint8", "UINT8", 1, [](inference::ModelInferRequest* request, auto* contents) {
    contents->add_uint_contents(1);
    auto* output = request->add_outputs();
    output->set_name("y");
    (*output->mutable_parameters())["classification"].set_int64_param(1'000'000'000);
  });
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("output 'y': parameter \"classification\""), std::string::npos)
      << status.error_message();
}

// A loopback connection to `port` that gives up reading after 10 s.
int ConnectTo(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  return fd;
}

void SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// What the server says until its answer's head and body are in (or it closes).
std::string ReadAnswer(int fd) {
  std::string received;
  char buffer[4096];
  while (true) {
    const auto head_end = received.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const auto field = received.find("Content-Length: ");
      if (field != std::string::npos && received.size() >= head_end + 4 + std::stoul(received.substr(field + 16)))
        break;
    }
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    received.append(buffer, static_cast<std::size_t>(n));
  }
  return received;
}

template <typename Condition>
bool WaitFor(Condition condition) {
  for (int i = 0; i < 200 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return condition();
}

// Ten connections each holding a 60 MB body minus a byte held 600 MB and more: bodies count
// against one limit for every connection and both front ends, from their header on.
TEST_F(ServeFrontEnds, BodiesPastTheInflightLimitGet503OverHttpAndUnavailableOverGrpc) {
  ModelConfig config;
  config.batching.enabled = false;
  std::vector<ModelSource> models = {{"uint8", dir_->path() / "uint8.onnx", config}};
  CoreOptions options{1};
  options.max_inflight_bytes = 1 << 20;
  auto core = InferenceCore::Create(*runtime_, models, options);
  ASSERT_TRUE(core.ok()) << core.error().message;
  ASSERT_TRUE((*core)->LoadModels().ok());
  http::HttpOptions http_options;
  http_options.port = 0;
  auto http = http::HttpServer::Create(**core, http_options);
  ASSERT_TRUE(http.ok()) << http.error().message;
  (*http)->Start();
  grpc::GrpcOptions grpc_options;
  grpc_options.port = 0;
  auto grpc = grpc::GrpcServer::Start(**core, grpc_options);
  ASSERT_TRUE(grpc.ok()) << grpc.error().message;
  auto stub = inference::GRPCInferenceService::NewStub(
      ::grpc::CreateChannel(fmt::format("127.0.0.1:{}", (*grpc)->port()), ::grpc::InsecureChannelCredentials()));
  const auto infer = [&] {  // 300 KiB of UINT8 over gRPC
    inference::ModelInferRequest request;
    request.set_model_name("uint8");
    auto* input = request.add_inputs();
    input->set_name("x");
    input->set_datatype("UINT8");
    input->add_shape(300 << 10);
    request.add_raw_input_contents(std::string(300 << 10, '\x01'));
    inference::ModelInferResponse response;
    ::grpc::ClientContext context;
    return stub->ModelInfer(&context, request, &response);
  };
  const std::string head = "POST /v2/models/uint8/infer HTTP/1.1\r\nHost: x\r\nContent-Length: ";

  // A client holds 800 KiB from its header on, its body still to come.
  const int slow = ConnectTo((*http)->port());
  SendAll(slow, head + std::to_string(800 << 10) + "\r\n\r\n{");
  ASSERT_TRUE(WaitFor([&] { return (*core)->inflight().held() == 800u << 10; })) << (*core)->inflight().held();
  // Another's 300 KiB body would take the server past its 1 MiB: refused before it is sent.
  const int other = ConnectTo((*http)->port());
  SendAll(other, head + std::to_string(300 << 10) + "\r\nExpect: 100-continue\r\n\r\n");
  const std::string answer = ReadAnswer(other);
  ::close(other);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("Retry-After: 1\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("would take it past its limit of 1.0 MiB (--max-inflight-bytes)"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << answer;
  auto status = infer();
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_NE(status.error_message().find("--max-inflight-bytes"), std::string::npos) << status.error_message();
  // A chunked body says its size only as it comes: it is refused once it grows past what is left.
  const int chunked = ConnectTo((*http)->port());
  SendAll(chunked, "POST /v2/models/uint8/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  const std::string chunk = fmt::format("{:x}\r\n{}\r\n", 64 << 10, std::string(64 << 10, ' '));
  for (int i = 0; i < 8; ++i) SendAll(chunked, chunk);  // 512 KiB, where 224 KiB are left
  const std::string refused = ReadAnswer(chunked);
  ::close(chunked);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503 ", 0), 0u) << refused;
  // Once the first client goes, the same request is served, and nothing is held after it.
  ::close(slow);
  ASSERT_TRUE(WaitFor([&] { return (*core)->inflight().held() == 0; })) << (*core)->inflight().held();
  status = infer();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(WaitFor([&] { return (*core)->inflight().held() == 0; })) << (*core)->inflight().held();
  EXPECT_NE((*core)->MetricsText().find("ortkit_inflight_refused_total 3\n"), std::string::npos);
  (*grpc)->Stop();
  (*http)->Stop();
}

// The HTTP front end's message for the same parameter given as the same kind of JSON value.
std::string HttpMessageFor(const std::string& parameters) {
  http::OutputEncoding encoding;
  auto decoded =
      http::DecodeInferRequest(R"({"parameters": )" + parameters + R"(, "inputs": []})", std::nullopt, &encoding);
  return decoded.ok() ? std::string("accepted") : decoded.error().message;
}

// parameters["priority"].string_param = "high" used to answer OK over gRPC and 400 over HTTP.
TEST_F(ServeFrontEnds, GrpcParametersOfTheWrongTypeAreRefusedAsOverHttp) {
  struct Case {
    const char* key;
    void (*set)(inference::InferParameter*);
    const char* http_parameters;
  } cases[] = {
      {"priority", [](inference::InferParameter* p) { p->set_string_param("high"); }, R"({"priority": "high"})"},
      {"priority", [](inference::InferParameter* p) { p->set_double_param(1.0); }, R"({"priority": 1.0})"},
      {"priority", [](inference::InferParameter* p) { p->set_bool_param(true); }, R"({"priority": true})"},
      {"timeout", [](inference::InferParameter* p) { p->set_string_param("x"); }, R"({"timeout": "x"})"},
      {"timeout", [](inference::InferParameter* p) { p->set_double_param(5.5); }, R"({"timeout": 5.5})"},
      {"timeout", [](inference::InferParameter*) {}, R"({"timeout": null})"},
  };
  for (const auto& c : cases) {
    auto status = Infer("uint8", "UINT8", 1, [&](inference::ModelInferRequest* request, auto* contents) {
      contents->add_uint_contents(1);
      c.set(&(*request->mutable_parameters())[c.key]);
    });
    EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << c.http_parameters;
    EXPECT_EQ(status.error_message(), HttpMessageFor(c.http_parameters));
    EXPECT_NE(status.error_message().find(fmt::format("parameter \"{}\" must be an integer", c.key)), std::string::npos)
        << status.error_message();
  }
  // Either integer form is taken.
  auto status = Infer("uint8", "UINT8", 1, [](inference::ModelInferRequest* request, auto* contents) {
    contents->add_uint_contents(1);
    (*request->mutable_parameters())["priority"].set_uint64_param(0);
    (*request->mutable_parameters())["timeout"].set_int64_param(1000000);
  });
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace ortkit::serve
