#include "rest_fuzz_body.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ortkit/serve/http/rest_codec.h"

namespace ortkit::fuzz {
namespace {

using serve::InferRequest;
using serve::InferResponse;
using serve::http::DecodeInferRequest;
using serve::http::EncodedResponse;
using serve::http::EncodeInferResponse;
using serve::http::OutputEncoding;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "rest fuzz body: %s\n", what);
  std::abort();
}

struct FramedRequest {
  std::string_view body;
  std::optional<std::size_t> header_length;
};

// See RunRestFuzzBody's contract in the header for the framing.
std::optional<FramedRequest> Frame(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  const int mode = static_cast<unsigned char>(bytes[0]) & 3;
  bytes.remove_prefix(1);
  if (mode == 0) return FramedRequest{bytes, std::nullopt};
  if (bytes.size() < 2) return std::nullopt;
  const std::size_t n =
      static_cast<unsigned char>(bytes[0]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[1])) << 8);
  bytes.remove_prefix(2);
  switch (mode) {
    case 1: return FramedRequest{bytes, n};
    case 2: return FramedRequest{bytes, bytes.size() - std::min(n, bytes.size())};
    default: return FramedRequest{bytes, n == 0xFFFF ? std::numeric_limits<std::size_t>::max() : bytes.size() + n};
  }
}

bool IsFloatingPoint(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat64 || type == DataType::kFloat16 ||
         type == DataType::kBFloat16;
}

bool AllFinite(const Tensor& t) {
  if (!IsFloatingPoint(t.type())) return true;
  for (std::int64_t i = 0; i < t.element_count(); ++i) {
    if (!std::isfinite(t.AsDouble(i))) return false;
  }
  return true;
}

// JSON carries a BOOL as true/false, so only the binary encoding keeps a bool's byte.
bool SameTensor(const Tensor& a, const Tensor& b, bool bool_as_truth_value) {
  if (a.type() != b.type() || a.shape() != b.shape() || a.byte_size() != b.byte_size()) return false;
  if (bool_as_truth_value && a.type() == DataType::kBool) {
    for (std::int64_t i = 0; i < a.element_count(); ++i) {
      if (a.AsDouble(i) != b.AsDouble(i)) return false;
    }
    return true;
  }
  return a.byte_size() == 0 || std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

// An answer whose header length is its JSON's and whose JSON parses.
nlohmann::json CheckedHeader(const EncodedResponse& encoded) {
  if (encoded.header_length && *encoded.header_length != encoded.json.size())
    Fail("the answer's header length is not its JSON's");
  if (!encoded.header_length && !encoded.binary.empty()) Fail("binary outputs without a header length");
  auto header = nlohmann::json::parse(encoded.json, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) Fail("the answer's header is not a JSON object");
  if (!header.contains("outputs") || !header["outputs"].is_array()) Fail("the answer has no outputs list");
  return header;
}

// The answer turned back into a request (its outputs become inputs), decoded, must give `expected`.
void CheckRoundTrip(const EncodedResponse& encoded, const InferResponse& expected, bool bool_as_truth_value) {
  nlohmann::json header = CheckedHeader(encoded);
  header["inputs"] = std::move(header["outputs"]);
  header.erase("outputs");
  std::string request = header.dump();
  const std::size_t request_header_size = request.size();
  for (std::string_view part : encoded.binary) request.append(part);
  OutputEncoding ignored;
  auto again = DecodeInferRequest(request, request_header_size, &ignored);
  if (!again.ok()) {
    std::fprintf(stderr, "%s\n", again.error().message.c_str());
    Fail("an answer, sent back as a request, does not decode");
  }
  if (again->id != expected.id) Fail("the round trip changed the id");
  if (again->inputs.size() != expected.outputs.size()) Fail("the round trip changed the number of tensors");
  for (std::size_t i = 0; i < expected.outputs.size(); ++i) {
    if (again->inputs[i].name != expected.outputs[i].name) Fail("the round trip changed a name");
    if (!SameTensor(again->inputs[i].tensor, expected.outputs[i].tensor, bool_as_truth_value))
      Fail("the round trip changed a tensor");
  }
}

}  // namespace

void RunRestFuzzBody(std::string_view bytes) {
  const auto framed = Frame(bytes);
  if (!framed) return;
  OutputEncoding requested;
  auto request = DecodeInferRequest(framed->body, framed->header_length, &requested);
  if (!request.ok()) {
    if (request.error().kind != ErrorKind::kInvalidArgument) Fail("a bad request is not kInvalidArgument");
    return;
  }
  InferResponse response{"fuzz", "1", request->id, std::move(request->inputs)};

  (void)CheckedHeader(EncodeInferResponse(response, requested));

  OutputEncoding all_binary;
  all_binary.all_binary = true;
  const EncodedResponse binary = EncodeInferResponse(response, all_binary);
  std::size_t data_bytes = 0;
  for (const auto& out : response.outputs) data_bytes += out.tensor.byte_size();
  std::size_t binary_bytes = 0;
  for (std::string_view part : binary.binary) binary_bytes += part.size();
  if (!response.outputs.empty() && (!binary.header_length || binary_bytes != data_bytes))
    Fail("the all-binary answer does not end with exactly the outputs' bytes");
  CheckRoundTrip(binary, response, /*bool_as_truth_value=*/false);

  // JSON has no NaN or infinity (the encoder writes null), so only finite answers come back.
  const bool finite =
      std::all_of(response.outputs.begin(), response.outputs.end(), [](const auto& o) { return AllFinite(o.tensor); });
  const EncodedResponse json = EncodeInferResponse(response, OutputEncoding{});
  if (json.header_length) Fail("an all-JSON answer has a binary part");
  // Mixed: the first output binary, the others (unless they share its name) as JSON.
  OutputEncoding first_binary;
  if (!response.outputs.empty()) first_binary.binary_outputs.push_back(response.outputs[0].name);
  const EncodedResponse mixed = EncodeInferResponse(response, first_binary);
  if (finite) {
    CheckRoundTrip(json, response, /*bool_as_truth_value=*/true);
    CheckRoundTrip(mixed, response, /*bool_as_truth_value=*/true);
  } else {
    (void)CheckedHeader(json);
    (void)CheckedHeader(mixed);
  }
}

}  // namespace ortkit::fuzz
