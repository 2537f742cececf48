// The protocol encodings (REST JSON + binary extension) and the error-kind mappings.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "ortkit/serve/grpc/grpc_server.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/http/rest_codec.h"

namespace ortkit::serve {
namespace {

TEST(ServeErrorMapping, HttpAndGrpc) {
  EXPECT_EQ(http::HttpStatusFor(ErrorKind::kInvalidArgument), 400);
  EXPECT_EQ(http::HttpStatusFor(ErrorKind::kNotFound), 404);
  EXPECT_EQ(http::HttpStatusFor(ErrorKind::kUnavailable), 503);
  EXPECT_EQ(http::HttpStatusFor(ErrorKind::kRuntime), 500);
  EXPECT_EQ(grpc::GrpcCodeFor(ErrorKind::kInvalidArgument), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(grpc::GrpcCodeFor(ErrorKind::kNotFound), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(grpc::GrpcCodeFor(ErrorKind::kUnavailable), ::grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(grpc::GrpcCodeFor(ErrorKind::kInternal), ::grpc::StatusCode::INTERNAL);
}

TEST(ServeRestCodec, JsonAndBinaryInputs) {
  const std::string header =
      R"({"id": "r1", "parameters": {"binary_data_output": true, "priority": 1},
          "inputs": [{"name": "a", "datatype": "FP32", "shape": [2, 2], "data": [[1, 2], [3, 4.5]]},
                     {"name": "b", "datatype": "INT64", "shape": [3], "parameters": {"binary_data_size": 24}}],
          "outputs": [{"name": "y", "parameters": {"binary_data": true}}]})";
  std::string body = header;
  const std::int64_t b[3] = {7, -8, 9};
  body.append(reinterpret_cast<const char*>(b), sizeof b);
  http::OutputEncoding encoding;
  auto request = http::DecodeInferRequest(body, header.size(), &encoding);
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(request->id, "r1");
  EXPECT_EQ(request->priority, 1);
  EXPECT_TRUE(encoding.all_binary);
  EXPECT_EQ(encoding.binary_outputs, std::vector<std::string>{"y"});
  ASSERT_EQ(request->inputs.size(), 2u);
  EXPECT_EQ(request->inputs[0].tensor.values<float>()[3], 4.5f);
  EXPECT_EQ(request->inputs[1].tensor.values<std::int64_t>()[1], -8);
}

TEST(ServeRestCodec, BadRequestsSayWhatIsWrong) {
  struct Case {
    std::string body;
    std::optional<std::size_t> header;
    const char* expected;
  } cases[] = {
      {"{not json", std::nullopt, "not valid JSON"},
      {R"({"inputs": [{"name": "a", "datatype": "FP32", "shape": [2], "data": [1]}]})", std::nullopt,
       "input 'a': shape [2] needs 2 values, \"data\" holds 1"},
      {R"({"inputs": [{"name": "a", "datatype": "INT64", "shape": [1], "data": [1.5]}]})", std::nullopt,
       "needs integers"},
      {R"({"inputs": [{"name": "a", "datatype": "BYTES", "shape": [1], "data": ["x"]}]})", std::nullopt,
       "not supported"},
      {R"({"inputs": [{"name": "a", "datatype": "FP32", "shape": [2], "parameters": {"binary_data_size": 8}}]})", 500,
       "Inference-Header-Content-Length is 500"},
      {R"({"inputs": [{"name": "a", "datatype": "FP32", "shape": [2], "parameters": {"binary_data_size": 4}}]})",
       std::nullopt, "binary_data_size is 4 but FP32 [2] needs 8 bytes"},
      {R"({"inputs": [{"name": "a", "datatype": "FP32", "shape": [-1], "data": []}]})", std::nullopt, "non-negative"},
      {R"({"parameters": {"binary_data_output": "yes"}, "inputs": []})", std::nullopt, "malformed request"},
  };
  for (const auto& c : cases) {
    http::OutputEncoding encoding;
    auto r = http::DecodeInferRequest(c.body, c.header, &encoding);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(r.error().message.find(c.expected), std::string::npos) << r.error().message;
  }
}

// JSON answers are written by hand: every value must read back as exactly itself.
TEST(ServeRestCodec, JsonNumbersReadBackExactly) {
  const float floats[] = {-0.0f, 0.1f, 3.4028235e38f, 1e-45f, 2.0f, std::numeric_limits<float>::quiet_NaN()};
  InferResponse response{"m", "1", "", {}};
  response.outputs.push_back({"f", Tensor::FromVector<float>({6}, {floats, floats + 6}).value()});
  response.outputs.push_back({"d", Tensor::FromVector<double>({2}, {0.1, -1e-300}).value()});
  response.outputs.push_back(
      {"i", Tensor::FromVector<std::int64_t>({2}, {std::numeric_limits<std::int64_t>::min(), 7}).value()});
  response.outputs.push_back({"u", Tensor::FromVector<std::uint64_t>({1}, {~0ull}).value()});
  const auto encoded = http::EncodeInferResponse(response, {});
  const auto parsed = nlohmann::json::parse(encoded.json);
  const auto& f = parsed["outputs"][0]["data"];
  ASSERT_EQ(f.size(), 6u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f[i].get<double>(), static_cast<double>(floats[i])) << i;
  EXPECT_TRUE(std::signbit(f[0].get<double>()));  // "-0.0", not the integer 0
  EXPECT_TRUE(f[4].is_number_float());            // "2.0"
  EXPECT_TRUE(f[5].is_null());                    // JSON has no NaN
  EXPECT_EQ(parsed["outputs"][1]["data"], nlohmann::json({0.1, -1e-300}));
  EXPECT_EQ(parsed["outputs"][2]["data"][0].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(parsed["outputs"][3]["data"][0].get<std::uint64_t>(), ~0ull);
  // And through this server's own decoder, as a request: the same bytes.
  const nlohmann::json request = {
      {"inputs", nlohmann::json::array({parsed["outputs"][1], parsed["outputs"][2], parsed["outputs"][3]})}};
  http::OutputEncoding ignored;
  auto again = http::DecodeInferRequest(request.dump(), std::nullopt, &ignored);
  ASSERT_TRUE(again.ok()) << again.error().message;
  for (int k = 0; k < 3; ++k) {
    const Tensor& sent = response.outputs[k + 1].tensor;
    ASSERT_EQ(again->inputs[k].tensor.byte_size(), sent.byte_size());
    EXPECT_EQ(std::memcmp(again->inputs[k].tensor.data(), sent.data(), sent.byte_size()), 0) << k;
  }
}

TEST(ServeRestCodec, ResponsesInJsonOrBinary) {
  InferResponse response{"m", "1", "id7", {}};
  response.outputs.push_back({"y", Tensor::FromVector<float>({2}, {1.5f, -2}).value()});
  response.outputs.push_back({"n", Tensor::FromVector<std::int64_t>({1}, {5}).value()});
  auto json_only = http::EncodeInferResponse(response, {});
  EXPECT_FALSE(json_only.header_length);
  auto parsed = nlohmann::json::parse(json_only.json);
  EXPECT_EQ(parsed["outputs"][0]["data"], nlohmann::json({1.5, -2.0}));
  EXPECT_EQ(parsed["outputs"][1]["datatype"], "INT64");
  EXPECT_EQ(parsed["id"], "id7");
  http::OutputEncoding binary;
  binary.binary_outputs = {"y"};
  auto mixed = http::EncodeInferResponse(response, binary);
  ASSERT_TRUE(mixed.header_length);
  EXPECT_EQ(*mixed.header_length, mixed.json.size());
  auto header = nlohmann::json::parse(mixed.json);
  EXPECT_EQ(header["outputs"][0]["parameters"]["binary_data_size"], 8);
  EXPECT_FALSE(header["outputs"][0].contains("data"));
  const std::string mixed_body = mixed.Joined();
  ASSERT_EQ(mixed_body.size(), *mixed.header_length + 8);
  float values[2];
  std::memcpy(values, mixed_body.data() + *mixed.header_length, 8);
  EXPECT_EQ(values[0], 1.5f);
  EXPECT_EQ(values[1], -2.0f);
  // Every output binary takes the direct writer: the same header as the general encoder.
  response.id = "a \"quoted\"\n id";
  http::OutputEncoding all;
  all.all_binary = true;
  auto direct = http::EncodeInferResponse(response, all);
  ASSERT_TRUE(direct.header_length);
  auto direct_header = nlohmann::json::parse(direct.json);
  EXPECT_EQ(direct_header["id"], "a \"quoted\"\n id");
  EXPECT_EQ(direct_header["model_name"], "m");
  EXPECT_EQ(direct_header["model_version"], "1");
  EXPECT_EQ(direct_header["outputs"][0]["name"], "y");
  EXPECT_EQ(direct_header["outputs"][0]["datatype"], "FP32");
  EXPECT_EQ(direct_header["outputs"][0]["shape"], nlohmann::json({2}));
  EXPECT_EQ(direct_header["outputs"][1]["parameters"]["binary_data_size"], 8);
  const std::string direct_body = direct.Joined();
  EXPECT_EQ(direct_body.size(), *direct.header_length + 16);
  EXPECT_EQ(direct_body.substr(*direct.header_length, 8), mixed_body.substr(*mixed.header_length, 8));
  // The binary outputs are not copied (the server writes them from the tensors): views, in order.
  ASSERT_EQ(direct.binary.size(), 2u);
  EXPECT_EQ(static_cast<const void*>(direct.binary[0].data()), response.outputs[0].tensor.data());
  EXPECT_EQ(static_cast<const void*>(direct.binary[1].data()), response.outputs[1].tensor.data());
}

}  // namespace
}  // namespace ortkit::serve
