#include "ortkit/perf/infer_client.h"

namespace ortkit::perf {

Result<std::unique_ptr<InferClient>> CreateClient(const ClientOptions& options) {
  return options.protocol == Protocol::kGrpc ? CreateGrpcClient(options) : CreateHttpClient(options);
}

}  // namespace ortkit::perf
