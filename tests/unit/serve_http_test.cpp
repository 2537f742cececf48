// The protocol encodings (REST JSON + binary extension) and the error-kind mappings.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/serve/grpc/grpc_server.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/http/rest_codec.h"
#include "ortkit/serve/request_values.h"

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
      {R"({"inputs": [], "outputs": [{"name": "y"}, {"name": "z"}, {"name": "y"}]})", std::nullopt,
       "output 'y' is asked for twice: name each output once"},
      {R"({"inputs": [], "outputs": [{"name": "y", "parameters": {"classification": 3}}]})", std::nullopt,
       "output 'y': parameter \"classification\" (the classification extension) is not supported"},
  };
  for (const auto& c : cases) {
    http::OutputEncoding encoding;
    auto r = http::DecodeInferRequest(c.body, c.header, &encoding);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(r.error().message.find(c.expected), std::string::npos) << r.error().message;
  }
}

// A request of one input 'x' of shape [count] holding `data` (comma-separated JSON values).
Result<InferRequest> DecodeValues(const std::string& datatype, const std::string& data, int count = 1) {
  const std::string body = fmt::format(
      R"({{"inputs": [{{"name": "x", "datatype": "{}", "shape": [{}], "data": [{}]}}]}})", datatype, count, data);
  http::OutputEncoding encoding;
  return http::DecodeInferRequest(body, std::nullopt, &encoding);
}

// UINT8 [-1, 256, 300] used to answer 200 with [255, 0, 44]: values were cast, wrapping.
TEST(ServeRestCodec, IntegersOutsideTheDatatypeAreRefusedNotWrapped) {
  struct Case {
    const char* datatype;
    const char* value;
    const char* range;
  } refused[] = {
      {"UINT8", "-1", "0..255"},
      {"UINT8", "256", "0..255"},
      {"INT8", "300", "-128..127"},
      {"INT8", "-129", "-128..127"},
      {"INT16", "32768", "-32768..32767"},
      {"UINT16", "65536", "0..65535"},
      {"INT32", "2147483648", "-2147483648..2147483647"},
      {"UINT32", "-1", "0..4294967295"},
      {"UINT32", "4294967296", "0..4294967295"},
      {"INT64", "9223372036854775808", "-9223372036854775808..9223372036854775807"},
      {"UINT64", "-1", "0..18446744073709551615"},
  };
  for (const auto& c : refused) {
    auto r = DecodeValues(c.datatype, c.value);
    ASSERT_FALSE(r.ok()) << c.datatype << " " << c.value;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_EQ(r.error().message,
              fmt::format("input 'x': element 0 is {}, outside {}'s range {}", c.value, c.datatype, c.range));
  }
  auto many = DecodeValues("UINT8", "0, 256, 300", 3);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().message, "input 'x': element 1 is 256, outside UINT8's range 0..255");
  // The extremes themselves fit, exactly.
  auto u8 = DecodeValues("UINT8", "255");
  ASSERT_TRUE(u8.ok()) << u8.error().message;
  EXPECT_EQ(u8->inputs[0].tensor.values<std::uint8_t>()[0], 255);
  auto i8 = DecodeValues("INT8", "-128");
  ASSERT_TRUE(i8.ok()) << i8.error().message;
  EXPECT_EQ(i8->inputs[0].tensor.values<std::int8_t>()[0], -128);
  auto u64 = DecodeValues("UINT64", "18446744073709551615");
  ASSERT_TRUE(u64.ok()) << u64.error().message;
  EXPECT_EQ(u64->inputs[0].tensor.values<std::uint64_t>()[0], ~0ull);
  auto i64 = DecodeValues("INT64", "-9223372036854775808");
  ASSERT_TRUE(i64.ok()) << i64.error().message;
  EXPECT_EQ(i64->inputs[0].tensor.values<std::int64_t>()[0], std::numeric_limits<std::int64_t>::min());
}

// Integer datatypes take JSON integers only: 1.0 and 1e2 are numbers with a fraction or an exponent.
TEST(ServeRestCodec, NumbersWithAFractionAreRefusedForIntegerDatatypes) {
  const std::pair<const char*, const char*> cases[] = {
      {"1.5", "1.5"}, {"1.0", "1.0"}, {"1e2", "100.0"}, {"-0.5", "-0.5"}};
  for (const auto& [value, described] : cases) {
    auto r = DecodeValues("INT32", value);
    ASSERT_FALSE(r.ok()) << value;
    EXPECT_EQ(r.error().message,
              fmt::format("input 'x': element 0 is {} but datatype INT32 needs integers", described));
  }
}

// FP16 70000 used to reach the model as inf.
TEST(ServeRestCodec, FloatsBeyondTheDatatypeAreRefused) {
  struct Case {
    const char* datatype;
    const char* value;
  } refused[] = {{"FP16", "70000"}, {"FP16", "-65520"}, {"FP32", "1e39"}, {"BF16", "-1e39"}};
  for (const auto& c : refused) {
    auto r = DecodeValues(c.datatype, c.value);
    ASSERT_FALSE(r.ok()) << c.datatype << " " << c.value;
    EXPECT_EQ(r.error().message, fmt::format("input 'x': element 0 is {}, outside {}'s range {}", c.value, c.datatype,
                                             DataTypeRange(FindDataTypeByProtocol(c.datatype)->type)));
  }
  // The largest values, and those that round to them, are kept; tiny ones round to zero as usual.
  for (const char* value : {"65504", "-65504", "65519", "1e-10"}) {
    auto r = DecodeValues("FP16", value);
    ASSERT_TRUE(r.ok()) << value << ": " << r.error().message;
    EXPECT_TRUE(std::isfinite(r->inputs[0].tensor.AsDouble(0))) << value;
  }
  auto largest = DecodeValues("FP32", "3.4028235e38");
  ASSERT_TRUE(largest.ok()) << largest.error().message;
  EXPECT_EQ(largest->inputs[0].tensor.values<float>()[0], std::numeric_limits<float>::max());
  EXPECT_TRUE(DecodeValues("FP64", "1e300").ok());
}

TEST(ServeRestCodec, RequestParametersOfTheWrongTypeSayWhichAndWhat) {
  struct Case {
    const char* parameters;
    const char* expected;
  } cases[] = {
      {R"({"priority": "high"})", R"(malformed request: parameter "priority" must be an integer)"},
      {R"({"priority": 1.5})", R"(malformed request: parameter "priority" must be an integer)"},
      {R"({"timeout": "x"})", R"(malformed request: parameter "timeout" must be an integer (microseconds))"},
      {R"({"timeout": true})", R"(malformed request: parameter "timeout" must be an integer (microseconds))"},
  };
  for (const auto& c : cases) {
    http::OutputEncoding encoding;
    auto r = http::DecodeInferRequest(std::string(R"({"parameters": )") + c.parameters + R"(, "inputs": []})",
                                      std::nullopt, &encoding);
    ASSERT_FALSE(r.ok()) << c.parameters;
    EXPECT_EQ(r.error().message, c.expected);
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

// JSON has no literal for NaN or the infinities: they are written null, which every JSON reader takes
// (docs/serving.md sends clients that need them to the binary tensor data extension, which keeps them).
TEST(ServeRestCodec, NonFiniteValuesAreWrittenNullInJsonAndKeptInBinary) {
  const float inf = std::numeric_limits<float>::infinity();
  InferResponse response{"m", "1", "", {}};
  response.outputs.push_back(
      {"f", Tensor::FromVector<float>({4}, {inf, -inf, std::numeric_limits<float>::quiet_NaN(), 1.5f}).value()});
  auto half = Tensor::Allocate(DataType::kFloat16, {2}).value();
  half.SetFromDouble(0, -std::numeric_limits<double>::infinity());
  half.SetFromDouble(1, 2.0);
  response.outputs.push_back({"h", std::move(half)});
  const auto json = nlohmann::json::parse(http::EncodeInferResponse(response, {}).json);
  EXPECT_EQ(json["outputs"][0]["data"], nlohmann::json::parse("[null, null, null, 1.5]"));
  EXPECT_EQ(json["outputs"][1]["data"], nlohmann::json::parse("[null, 2.0]"));
  http::OutputEncoding binary;
  binary.all_binary = true;
  const auto encoded = http::EncodeInferResponse(response, binary);
  ASSERT_EQ(encoded.binary.size(), 2u);
  float values[4];
  std::memcpy(values, encoded.binary[0].data(), sizeof values);
  EXPECT_EQ(values[0], inf);
  EXPECT_EQ(values[1], -inf);
  EXPECT_TRUE(std::isnan(values[2]));
}

// The server weighs an answer with EncodedOutputBound before encoding it: the bound must hold for
// the longest text of every datatype.
TEST(ServeRestCodec, EncodedOutputBoundHoldsForTheLongestValues) {
  InferResponse response{"m", "1", "", {}};
  const float floats[] = {-1.17549435e-38f, -3.4028235e38f, 1e-45f, -0.1f};
  response.outputs.push_back({"f", Tensor::FromVector<float>({4}, {floats, floats + 4}).value()});
  response.outputs.push_back({"d", Tensor::FromVector<double>({2}, {-2.2250738585072014e-308, -1e-300}).value()});
  response.outputs.push_back(
      {"i", Tensor::FromVector<std::int64_t>({2}, {std::numeric_limits<std::int64_t>::min(), -1}).value()});
  response.outputs.push_back({"u", Tensor::FromVector<std::uint64_t>({1}, {~0ull}).value()});
  response.outputs.push_back({"i8", Tensor::FromVector<std::int8_t>({2}, {-128, -1}).value()});
  response.outputs.push_back({"u8", Tensor::FromVector<std::uint8_t>({1}, {255}).value()});
  response.outputs.push_back({"i32", Tensor::FromVector<std::int32_t>({1}, {INT32_MIN}).value()});
  auto half = Tensor::Allocate(DataType::kFloat16, {2}).value();
  half.SetFromDouble(0, -6.1035156e-05);
  half.SetFromDouble(1, -5.9604645e-08);
  response.outputs.push_back({"h", std::move(half)});
  auto flags = Tensor::Allocate(DataType::kBool, {3}).value();
  std::memset(flags.data(), 0, 3);
  response.outputs.push_back({"b", std::move(flags)});
  response.outputs.push_back({"\x01\"quoted\"", Tensor::FromVector<float>({1, 1}, {-0.1f}).value()});
  for (bool binary : {false, true}) {
    http::OutputEncoding encoding;
    encoding.all_binary = binary;
    for (const auto& out : response.outputs) {
      InferResponse one{"m", "1", "", {}};
      one.outputs.push_back({out.name, out.tensor.Clone()});
      const auto encoded = http::EncodeInferResponse(one, encoding);
      const auto empty = http::EncodeInferResponse(InferResponse{"m", "1", "", {}}, encoding);
      std::size_t written = encoded.json.size() - empty.json.size();
      for (std::string_view part : encoded.binary) written += part.size();
      EXPECT_LE(written, http::EncodedOutputBound(encoding, out.name, out.tensor.type(), out.tensor.shape()))
          << out.name << (binary ? " binary" : " JSON");
    }
  }
  EXPECT_EQ(http::EncodedOutputBound({}, "y", DataType::kFloat32,
                                     std::vector<std::int64_t>{std::int64_t{1} << 62, std::int64_t{1} << 62}),
            UINT64_MAX);
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
