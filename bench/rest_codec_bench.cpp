// The cost of decoding an Open Inference Protocol request body (DecodeInferRequest), the server's
// per-request JSON work, on the requests `ortkit perf` sends to bert-tiny at seq_len 8: the JSON
// header with binary tensors (the default), the same inputs as JSON data, and a larger FP32 tensor
// in JSON (4,096 numbers, every one re-read exactly).
//
//   build/bench/rest_codec_bench [google benchmark flags]
#include <cstdint>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "ortkit/serve/http/rest_codec.h"

namespace {

using ortkit::serve::http::DecodeInferRequest;
using ortkit::serve::http::OutputEncoding;

constexpr const char* kOutputs = R"("outputs": [{"name": "last_hidden_state", "parameters": {"binary_data": true}}])";

std::string BinaryRequest(std::size_t* header_length) {
  std::string header = R"({"id": "1", "inputs": [)";
  for (const char* name : {"input_ids", "attention_mask"}) {
    if (name[0] == 'a') header += ", ";
    header += fmt::format(R"({{"name": "{}", "shape": [1, 8], "datatype": "INT64", )"
                          R"("parameters": {{"binary_data_size": 64}}}})",
                          name);
  }
  header += std::string("], ") + kOutputs + "}";
  *header_length = header.size();
  std::string body = header;
  for (std::int64_t i = 0; i < 16; ++i) body.append(reinterpret_cast<const char*>(&i), sizeof i);
  return body;
}

std::string JsonRequest() {
  return std::string(R"({"id": "1", "inputs": [)") +
         R"({"name": "input_ids", "shape": [1, 8], "datatype": "INT64", "data": [101, 2023, 2003, 1037, 3231, 6251, 1012, 102]}, )"
         R"({"name": "attention_mask", "shape": [1, 8], "datatype": "INT64", "data": [1, 1, 1, 1, 1, 1, 1, 1]}], )" +
         kOutputs + "}";
}

std::string LargeJsonRequest() {
  std::string data;
  for (int i = 0; i < 4096; ++i) data += fmt::format("{}{:.9g}", i ? ", " : "", 0.001 * i - 1.7);
  return fmt::format(R"({{"inputs": [{{"name": "x", "shape": [1, 4096], "datatype": "FP32", "data": [{}]}}]}})", data);
}

void Decode(benchmark::State& state, const std::string& body, std::optional<std::size_t> header_length) {
  for (auto _ : state) {
    OutputEncoding encoding;
    auto request = DecodeInferRequest(body, header_length, &encoding);
    if (!request.ok()) {
      state.SkipWithError(request.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(request);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}

void BM_DecodeBinaryTensors(benchmark::State& state) {
  std::size_t header_length = 0;
  const std::string body = BinaryRequest(&header_length);
  Decode(state, body, header_length);
}
BENCHMARK(BM_DecodeBinaryTensors);

void BM_DecodeJsonTensors(benchmark::State& state) { Decode(state, JsonRequest(), std::nullopt); }
BENCHMARK(BM_DecodeJsonTensors);

void BM_DecodeJsonFp32x4096(benchmark::State& state) { Decode(state, LargeJsonRequest(), std::nullopt); }
BENCHMARK(BM_DecodeJsonFp32x4096);

}  // namespace

BENCHMARK_MAIN();
