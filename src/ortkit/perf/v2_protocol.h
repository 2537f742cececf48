#pragma once
// The client side of the Open Inference Protocol (KServe v2) that perf needs: reading a model's
// metadata and encoding infer requests as JSON tensors or with the binary tensor data extension.
// Pure functions, no sockets: the transports are in infer_client.h.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/synthesis.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit::perf {

/// A model as the server describes it: protocol datatypes mapped to DataType, -1 for dynamic dims.
struct RemoteModel {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

/// Parses the body of GET /v2/models/NAME. The protocol does not carry dimension names, so dynamic
/// dimensions are named by position: axis 0 "batch", axis 1 "seq_len", axis k "dimk"; these are the
/// names --dim and --length-dim use. Fails with kInvalidArgument naming the field that is wrong.
Result<RemoteModel> ParseModelMetadata(std::string_view json);

/// The name a dynamic dimension at `axis` gets (see ParseModelMetadata).
std::string PositionalDimName(std::size_t axis);

/// Values fit for inputs known only by name: masks of ones, token type / segment ids of zero (their
/// tables often have two rows); everything else as SynthesizeInputs fills it by default.
std::map<std::string, ValueHint> HintsFromNames(const std::vector<TensorSpec>& inputs);

/// An infer request ready to send. For HTTP, `body` is the whole POST body and `header_length`
/// the length of its JSON header when binary tensor data follows (0: JSON tensors only). For gRPC,
/// `body` is a serialized ModelInferRequest.
struct EncodedRequest {
  std::string body;
  std::size_t header_length = 0;
  std::int64_t rows = 1;  ///< first-axis size of the inputs, for reports
};

/// {"inputs": [{"name", "shape", "datatype", "data": [...]}], "outputs": [{"name"}]}.
/// Fails for string tensors and types without a protocol name.
Result<EncodedRequest> EncodeJsonRequest(const std::vector<NamedTensor>& inputs,
                                         const std::vector<std::string>& outputs);

/// The binary tensor data extension: a JSON header whose inputs carry "binary_data_size" and whose
/// outputs ask for "binary_data", followed by each input's raw little-endian bytes in order.
Result<EncodedRequest> EncodeBinaryRequest(const std::vector<NamedTensor>& inputs,
                                           const std::vector<std::string>& outputs);

/// The "error" member of a protocol error body, or the body itself (cut to 200 bytes) when it is not one.
std::string ErrorMessageOf(std::string_view body);

}  // namespace ortkit::perf
