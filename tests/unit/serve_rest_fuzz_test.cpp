// The REST decoder against hostile bodies: the fuzzer's seeds and reproducers replayed through its
// body (fuzz/rest_fuzz_body.h), and the findings that matter most pinned down one by one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/serve/http/rest_codec.h"
#include "rest_fuzz_body.h"
#include "test_models.h"

namespace ortkit::serve {
namespace {

namespace fs = std::filesystem;

using testing::ReadFile;

Error DecodeError(const std::string& body, std::optional<std::size_t> header_length = std::nullopt) {
  http::OutputEncoding encoding;
  auto request = http::DecodeInferRequest(body, header_length, &encoding);
  EXPECT_FALSE(request.ok()) << body.substr(0, 200);
  return request.ok() ? Error{} : request.error();
}

TEST(ServeRestCodec, ReplayFuzzCorpus) {
  int replayed = 0;
  for (const char* folder : {"fuzz/rest_corpus", "fuzz/rest_regressions"}) {
    const fs::path root = testing::SourcePath(folder);
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.path().filename().string()[0] == '.' || entry.path().filename() == "README.md") continue;
      SCOPED_TRACE(entry.path().string());
      fuzz::RunRestFuzzBody(ReadFile(entry.path()));
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 24);  // 20 seeds, 4 reproducers
}

// A hundred bytes must not make the server reserve gigabytes: the shape is weighed against the
// bytes that could hold its values before anything is allocated.
TEST(ServeRestCodec, RefusesShapesLargerThanTheBody) {
  const Error json = DecodeError(
      R"({"inputs": [{"name": "big", "datatype": "FP32", "shape": [1000000000, 1000000000], "data": [1]}]})");
  EXPECT_EQ(json.kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(json.message.find("input 'big': shape [1000000000, 1000000000] needs 1000000000000000000 values"),
            std::string::npos)
      << json.message;

  // 3.6 GB of FP32 that an allocator would grant: refused all the same.
  const Error grantable =
      DecodeError(R"({"inputs": [{"name": "g", "datatype": "FP32", "shape": [30000, 30000], "data": [1]}]})");
  EXPECT_NE(grantable.message.find("input 'g': shape [30000, 30000] needs 900000000 values"), std::string::npos)
      << grantable.message;

  const std::string header =
      R"({"inputs": [{"name": "raw", "datatype": "INT64", "shape": [1000000000, 1000000000],
                      "parameters": {"binary_data_size": 8}}]})";
  const Error binary = DecodeError(header + std::string(8, '\0'), header.size());
  EXPECT_EQ(binary.kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(binary.message.find("input 'raw': binary_data_size is 8 but INT64 [1000000000, 1000000000] needs "
                                "8000000000000000000 bytes"),
            std::string::npos)
      << binary.message;

  const Error overflow =
      DecodeError(R"({"inputs": [{"name": "o", "datatype": "FP64", "shape": [4611686018427387904, 2], "data": [1]}]})");
  EXPECT_NE(overflow.message.find("input 'o'"), std::string::npos) << overflow.message;
}

// "data" nests once per dimension, so its depth is bounded; a megabyte of '[' must neither
// exhaust the stack (the recursive parse stops at 128 levels and the iterative one takes over; the
// flattening is iterative) nor pass.
TEST(ServeRestCodec, RefusesDeeplyNestedData) {
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); };
  http::OutputEncoding encoding;
  auto shallow = http::DecodeInferRequest(
      R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": )" + nested(8) + "}]}", {}, &encoding);
  ASSERT_TRUE(shallow.ok()) << shallow.error().message;
  EXPECT_EQ(shallow->inputs[0].tensor.values<float>()[0], 1.0f);

  const Error deep = DecodeError(R"({"inputs": [{"name": "d", "datatype": "FP32", "shape": [1], "data": )" +
                                 nested(1'000'000) + "}]}");
  EXPECT_NE(deep.message.find("input 'd': \"data\" nests more than"), std::string::npos) << deep.message;

  const Error deep_shape = DecodeError(R"({"inputs": [{"name": "s", "datatype": "FP32", "shape": )" +
                                       nested(1'000'000) + R"(, "data": [1]}]})");
  EXPECT_NE(deep_shape.message.find("input 's': shape must hold non-negative integers, not a list"), std::string::npos)
      << deep_shape.message;

  // Anywhere else in the request, depth is only the parser's concern.
  const Error deep_id = DecodeError(R"({"id": )" + nested(1'000'000) + R"(, "inputs": []})");
  EXPECT_NE(deep_id.message.find("\"id\" must be a string"), std::string::npos) << deep_id.message;
}

// Names and ids are echoed into answers whose JSON header is written byte for byte, so a request
// whose id or names are not UTF-8 is refused.
TEST(ServeRestCodec, RefusesIdsAndNamesThatAreNotUtf8) {
  EXPECT_EQ(DecodeError("{\"id\": \"\xff\xfe\", \"inputs\": []}").message, "\"id\" is not valid UTF-8");
  EXPECT_EQ(DecodeError("{\"id\": \"\xed\xa0\x80\", \"inputs\": []}").message,
            "\"id\" is not valid UTF-8");  // a surrogate
  EXPECT_EQ(DecodeError("{\"inputs\": [{\"name\": \"a\xc3\", \"datatype\": \"FP32\", \"shape\": [1], \"data\": [1]}]}")
                .message,
            "an input's \"name\" is not valid UTF-8");
  EXPECT_EQ(DecodeError("{\"inputs\": [], \"outputs\": [{\"name\": \"\xc0\xaf\"}]}").message,  // overlong '/'
            "an output's \"name\" is not valid UTF-8");
  http::OutputEncoding encoding;
  auto fine =
      http::DecodeInferRequest("{\"id\": \"caf\xc3\xa9 \\u00e9 \\u0000\", \"inputs\": []}", std::nullopt, &encoding);
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(fine->id, std::string("caf\xc3\xa9 \xc3\xa9 \0", 10));
}

// A header is read the fast way (recursively, from a NUL-terminated copy) unless it nests deeper
// than the fast parse goes, starts with a byte-order mark or holds a NUL byte; then the careful
// way, and the answer is the same as if the header had been read that way from the start.
TEST(ServeRestCodec, ReadsEveryHeaderAsTheCarefulParserWould) {
  const std::string input = R"("inputs": [{"name": "x", "datatype": "FP64", "shape": [2], "data": [0.1, 2.5e-3]}])";
  const auto decode = [](const std::string& body, std::optional<std::size_t> header_length = std::nullopt) {
    http::OutputEncoding encoding;
    return http::DecodeInferRequest(body, header_length, &encoding);
  };
  const auto plain = decode("{\"id\": \"a\", " + input + "}");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->inputs[0].tensor.values<double>()[0], 0.1);
  EXPECT_EQ(plain->inputs[0].tensor.values<double>()[1], 2.5e-3);

  const auto with_bom = decode("\xEF\xBB\xBF{\"id\": \"a\", " + input + "}");
  ASSERT_TRUE(with_bom.ok()) << with_bom.error().message;
  EXPECT_EQ(with_bom->id, "a");
  EXPECT_EQ(with_bom->inputs[0].tensor.values<double>()[0], 0.1);

  // Deeper than the fast parse goes, in a parameter the server does not read: still a request.
  const std::string deep = std::string(300, '[') + "1" + std::string(300, ']');
  const auto deep_ok = decode("{\"id\": \"a\", \"parameters\": {\"note\": " + deep + "}, " + input + "}");
  ASSERT_TRUE(deep_ok.ok()) << deep_ok.error().message;
  EXPECT_EQ(deep_ok->inputs[0].tensor.values<double>()[1], 2.5e-3);

  // A NUL byte would end a NUL-terminated copy early; in a string or after the object, it is an error.
  const std::string in_string = "{\"id\": \"a" + std::string(1, '\0') + "b\", " + input + "}";
  EXPECT_NE(DecodeError(in_string).message.find("(at byte 9)"), std::string::npos) << DecodeError(in_string).message;
  const std::string after = "{\"id\": \"a\", " + input + "}" + std::string(1, '\0') + "[]";
  EXPECT_NE(DecodeError(after).message.find("not valid JSON"), std::string::npos) << DecodeError(after).message;

  // With binary tensors the JSON header is a prefix of the body: its end bounds the parse.
  const std::string header = R"({"inputs": [{"name": "b", "datatype": "INT64", "shape": [1], )"
                             R"("parameters": {"binary_data_size": 8}}]})";
  std::string body = header + std::string(8, '\0');
  body[header.size()] = 7;
  const auto binary = decode(body, header.size());
  ASSERT_TRUE(binary.ok()) << binary.error().message;
  EXPECT_EQ(binary->inputs[0].tensor.values<std::int64_t>()[0], 7);
  EXPECT_NE(DecodeError(header.substr(0, header.size() - 1) + std::string(8, '\0'), header.size() - 1)
                .message.find("not valid JSON"),
            std::string::npos);
}

// Clients that serialise doubles send 17 significant digits; each must come back as the double
// the client had (a fast-path reader misses about one in five by an ulp or more).
TEST(ServeRestCodec, ReadsFp64DataExactly) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::vector<std::string> texts = {"-8.2109361271069082e-08", "0.10000000000000001", "1.7976931348623157e+308"};
  while (texts.size() < 2000) {
    texts.push_back(fmt::format("{:.17g}", unit(random) * std::pow(10.0, static_cast<int>(random() % 40) - 20)));
  }
  const std::string body =
      fmt::format(R"({{"inputs": [{{"name": "d", "datatype": "FP64", "shape": [{}], "data": [{}]}}]}})", texts.size(),
                  fmt::join(texts, ","));
  http::OutputEncoding encoding;
  auto request = http::DecodeInferRequest(body, std::nullopt, &encoding);
  ASSERT_TRUE(request.ok()) << request.error().message;
  const auto values = request->inputs[0].tensor.values<double>();
  int inexact = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) inexact += values[i] != std::strtod(texts[i].c_str(), nullptr);
  EXPECT_EQ(inexact, 0) << "of " << texts.size();
}

// Zeros with exponents, underflows and integers past 64 bits read as a JSON reader should; a
// number past a double's range is refused by its text.
TEST(ServeRestCodec, ReadsNumbersAtTheEdges) {
  http::OutputEncoding encoding;
  auto request = http::DecodeInferRequest(
      R"({"inputs": [{"name": "d", "datatype": "FP64", "shape": [7],
                      "data": [0e-30, -0e300, 0.000e-5, 1e-400, 4.9e-324, 18446744073709551616, -9223372036854775809]},
                     {"name": "u", "datatype": "UINT64", "shape": [2], "data": [18446744073709551615, 0]},
                     {"name": "i", "datatype": "INT64", "shape": [2], "data": [-9223372036854775808, -0]}]})",
      std::nullopt, &encoding);
  ASSERT_TRUE(request.ok()) << request.error().message;
  const auto d = request->inputs[0].tensor.values<double>();
  EXPECT_EQ(d[0], 0.0);
  EXPECT_EQ(d[1], 0.0);
  EXPECT_TRUE(std::signbit(d[1]));
  EXPECT_EQ(d[2], 0.0);
  EXPECT_EQ(d[3], 0.0);
  EXPECT_EQ(d[4], std::strtod("4.9e-324", nullptr));
  EXPECT_EQ(d[5], 18446744073709551616.0);
  EXPECT_EQ(d[6], -9223372036854775808.0);
  EXPECT_EQ(request->inputs[1].tensor.values<std::uint64_t>()[0], 18446744073709551615u);
  EXPECT_EQ(request->inputs[2].tensor.values<std::int64_t>()[0], std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(request->inputs[2].tensor.values<std::int64_t>()[1], 0);

  const Error overflow =
      DecodeError(R"({"inputs": [{"name": "d", "datatype": "FP64", "shape": [1], "data": [-1.5e309]}]})");
  EXPECT_NE(overflow.message.find("number -1.5e309 is beyond a double's range"), std::string::npos) << overflow.message;
}

// JSON leaves an object's keys in any order: "data" before "datatype" and "shape" is read again
// once the entry has said what it holds, to the same tensor.
TEST(ServeRestCodec, DataBeforeItsDatatypeAndShapeDecodesTheSame) {
  const std::string orders[] = {
      R"({"inputs": [{"name": "x", "datatype": "INT32", "shape": [2, 2], "data": [[1, -2], [3, 4]]}]})",
      R"({"inputs": [{"data": [[1, -2], [3, 4]], "shape": [2, 2], "datatype": "INT32", "name": "x"}]})",
      R"({"inputs": [{"name": "x", "data": [1, -2, 3, 4], "datatype": "INT32", "shape": [2, 2]}]})",
      R"({"inputs": [{"shape": [2, 2], "data": [[1, -2], [3, 4]], "name": "x", "datatype": "INT32"}]})",
  };
  for (const std::string& body : orders) {
    http::OutputEncoding encoding;
    auto request = http::DecodeInferRequest(body, std::nullopt, &encoding);
    ASSERT_TRUE(request.ok()) << body << ": " << request.error().message;
    ASSERT_EQ(request->inputs.size(), 1u);
    const auto values = request->inputs[0].tensor.values<std::int32_t>();
    EXPECT_EQ(std::vector<std::int32_t>(values.begin(), values.end()), (std::vector<std::int32_t>{1, -2, 3, 4}))
        << body;
  }
  // Its problems are the same whichever comes first.
  const Error late = DecodeError(R"({"inputs": [{"data": [1, 300], "name": "x", "datatype": "INT8", "shape": [2]}]})");
  EXPECT_EQ(late.message, "input 'x': element 1 is 300, outside INT8's range -128..127");
  const Error scalar = DecodeError(R"({"inputs": [{"data": "a", "name": "x", "datatype": "FP32", "shape": [1]}]})");
  EXPECT_EQ(scalar.message, "input 'x': element 0 is \"a\" but datatype FP32 needs numbers");
  const Error deep = DecodeError(R"({"inputs": [{"data": )" + std::string(100, '[') + "1" + std::string(100, ']') +
                                 R"(, "name": "d", "datatype": "FP32", "shape": [1]}]})");
  EXPECT_EQ(deep.message, "input 'd': \"data\" nests more than 32 lists deep");
  const Error count =
      DecodeError(R"({"inputs": [{"data": [1, 2, 3], "name": "x", "datatype": "FP32", "shape": [2]}]})");
  EXPECT_EQ(count.message, "input 'x': shape [2] needs 2 values, \"data\" holds 3");
}

// A key given twice is a guess either way (JSON leaves it to readers): refused.
TEST(ServeRestCodec, KeysGivenTwiceAreRefused) {
  EXPECT_EQ(DecodeError(R"({"inputs": [], "inputs": []})").message, "\"inputs\" is given twice: give it once");
  EXPECT_EQ(DecodeError(R"({"parameters": {"priority": 1, "priority": 2}, "inputs": []})").message,
            "\"priority\" is given twice in \"parameters\": give it once");
  EXPECT_EQ(
      DecodeError(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1], "data": [2]}]})").message,
      "input 'x': \"data\" is given twice: give it once");
  EXPECT_EQ(DecodeError(R"({"inputs": [], "outputs": [{"name": "y", "parameters": {"binary_data": true,
                           "binary_data": false}}]})")
                .message,
            "output 'y': \"binary_data\" is given twice: give it once");
}

// The VmHWM of this process (its peak resident memory, reset by ResetPeakMemory), in bytes.
std::uint64_t PeakMemory() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) << 10;
  }
  return 0;
}

bool ResetPeakMemory() { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5"); }

// 50 MB of "data": [0, 0, ...] against a shape of [1] was refused correctly, at 2.0-4.6 GB: the
// tree held every value and a pointer to each (24 bytes a value, 240 MB for the 20 MB here).
// Decoded as it is read, a request holds its body and its tensors.
TEST(ServeRestCodec, DecodingHoldsNoMoreThanTheBodyAndTheTensors) {
  const auto values = [](std::size_t count, const std::string& value) {
    std::string text;
    text.reserve(count * (value.size() + 1));
    for (std::size_t i = 0; i < count; ++i) text.append(i == 0 ? "" : ",").append(value);
    return text;
  };
  struct Case {
    std::string what;
    std::string body;
    std::uint64_t tensor_bytes;
  } cases[] = {
      {"20 MB of 0s against [1]",
       R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [)" + values(10'000'000, "0") + "]}]}",
       4},
      {"20 MB of [0]s against [1]",
       R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [)" + values(5'000'000, "[0]") + "]}]}",
       4},
      {"2M values that fit",
       R"({"inputs": [{"name": "x", "datatype": "FP64", "shape": [2000000], "data": [)" + values(2'000'000, "0.5") +
           "]}]}",
       16'000'000},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(ResetPeakMemory()) << "cannot reset this process's peak memory (/proc/self/clear_refs)";
    const std::uint64_t before = PeakMemory();
    {
      http::OutputEncoding encoding;
      auto request = http::DecodeInferRequest(c.body, std::nullopt, &encoding);
      EXPECT_EQ(request.ok(), c.tensor_bytes > 4) << c.what;
    }
    const std::uint64_t grown = PeakMemory() - before;
    EXPECT_LT(grown, c.tensor_bytes + (16 << 20)) << c.what << ": " << (grown >> 20) << " MiB";
  }
}

// Integers the protocol expects, given as floats out of any integer's range, are refused by name
// (converting them is undefined behaviour).
TEST(ServeRestCodec, RefusesNonIntegerParameters) {
  EXPECT_NE(DecodeError(R"({"parameters": {"priority": 1e300}, "inputs": []})").message.find("\"priority\""),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"parameters": {"timeout": -1e300}, "inputs": []})").message.find("\"timeout\""),
            std::string::npos);
  const Error size = DecodeError(
      R"({"inputs": [{"name": "b", "datatype": "FP32", "shape": [1], "parameters": {"binary_data_size": 1e300}}]})");
  EXPECT_NE(size.message.find("input 'b': binary_data_size"), std::string::npos) << size.message;
}

}  // namespace
}  // namespace ortkit::serve
