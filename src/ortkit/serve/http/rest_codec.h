#pragma once
// The Open Inference Protocol's REST encoding of inference requests and responses, with Triton's
// binary tensor data extension: a JSON header of `Inference-Header-Content-Length` bytes followed
// by raw tensor bytes, inputs marked with parameters.binary_data_size, outputs asked for with
// parameters.binary_data (or the request parameter binary_data_output).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/serve/inference_core.h"

namespace ortkit::serve::http {

/// How the response's outputs are to be encoded, from the request.
struct OutputEncoding {
  bool all_binary = false;                  ///< request parameter binary_data_output
  std::vector<std::string> binary_outputs;  ///< outputs asked for with parameters.binary_data
};

/// Decodes an infer request body. `header_length` is the Inference-Header-Content-Length value
/// (absent: the whole body is JSON). Errors are kInvalidArgument and name the input and the
/// problem (datatype, value count, binary size).
Result<InferRequest> DecodeInferRequest(std::string_view body, std::optional<std::size_t> header_length,
                                        OutputEncoding* encoding);

/// An infer answer's body: the JSON, then the binary outputs' bytes in order (the binary tensor
/// data extension), which are views into the response's tensors: the response must outlive them.
struct EncodedResponse {
  std::string json;
  std::optional<std::size_t> header_length;  ///< json.size(), set when binary data follows the JSON
  std::vector<std::string_view> binary;
  /// The whole body in one string: the JSON, then the binary outputs.
  std::string Joined() const;
};

/// Encodes `response`; outputs are JSON arrays unless `encoding` asks for binary.
EncodedResponse EncodeInferResponse(const InferResponse& response, const OutputEncoding& encoding);

/// The most bytes EncodeInferResponse writes for an output `name` of `type` and `shape`, its entry
/// in the JSON included: the values' bytes when `encoding` asks for it in binary, else up to
/// 25 bytes a value (a double's longest shortest text). Saturates. The server weighs answers with
/// it (InferRequest::answer_cost) before running the request and before encoding its answer.
std::uint64_t EncodedOutputBound(const OutputEncoding& encoding, std::string_view name, DataType type,
                                 std::span<const std::int64_t> shape);

/// {"name", "versions", "platform", "inputs": [{"name", "datatype", "shape"}], "outputs": [...]}
nlohmann::json ModelMetadataToJson(const ModelMetadata& metadata);

}  // namespace ortkit::serve::http
