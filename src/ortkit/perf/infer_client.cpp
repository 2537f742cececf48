#include "ortkit/perf/infer_client.h"

#include "ortkit/core/numbers.h"

namespace ortkit::perf {

const char* ToString(Protocol protocol) { return protocol == Protocol::kGrpc ? "grpc" : "http"; }

Status ClientOptions::Validate() const {
  ORTKIT_RETURN_IF_ERROR(CheckRange("--timeout-ms", std::int64_t{timeout_ms}, {1, kMostTimeoutMs}));
  if (json_tensors && protocol != Protocol::kHttp) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--json selects JSON tensors over HTTP; gRPC always sends raw tensor contents");
  }
  return OkStatus();
}

Result<std::unique_ptr<InferClient>> CreateClient(const ClientOptions& options) {
  return options.protocol == Protocol::kGrpc ? CreateGrpcClient(options) : CreateHttpClient(options);
}

}  // namespace ortkit::perf
