#pragma once
// Transports for perf: one InferClient per load-generating thread, each holding one keep-alive
// connection. A client is used by one thread at a time; create one per thread with a ClientFactory.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/perf/v2_protocol.h"

namespace ortkit::perf {

enum class Protocol { kHttp, kGrpc };

struct ClientOptions {
  Protocol protocol = Protocol::kHttp;
  std::string url = "127.0.0.1:8000";  ///< host:port, or http://host:port for HTTP
  std::string model;
  bool json_tensors = false;  ///< HTTP: JSON tensors instead of the binary tensor data extension
  int timeout_ms = 60000;     ///< per request: connect, send and receive
};

/// The outcome of one infer call. `error` is empty on success, else a short kind that groups
/// equal failures: "HTTP 503", "gRPC UNAVAILABLE", "connection failed", "timed out".
struct InferOutcome {
  std::string error;
  std::string detail;  ///< the server's message for this failure ({"error": ...} or the gRPC status message)
  bool ok() const { return error.empty(); }
};

class InferClient {
 public:
  virtual ~InferClient() = default;

  /// Whether the server answers its readiness probe; the error says how it failed to
  /// ("cannot connect to 127.0.0.1:8000: connection refused").
  virtual Status CheckReady() = 0;
  virtual Result<ServedModel> ModelMetadata() = 0;
  /// Encodes a request once, before the timed region, for this client's protocol and options.
  virtual Result<EncodedRequest> Encode(const std::vector<NamedTensor>& inputs,
                                        const std::vector<std::string>& outputs) = 0;
  /// Sends one encoded request and waits for its answer. Never throws.
  virtual InferOutcome Infer(const EncodedRequest& request) = 0;
};

using ClientFactory = std::function<Result<std::unique_ptr<InferClient>>()>;

/// A client for `options.protocol`. Connects lazily (on the first call). Fails for a malformed URL.
Result<std::unique_ptr<InferClient>> CreateClient(const ClientOptions& options);
Result<std::unique_ptr<InferClient>> CreateHttpClient(const ClientOptions& options);
Result<std::unique_ptr<InferClient>> CreateGrpcClient(const ClientOptions& options);

/// GET of a full http://host:port/path URL (metrics scrapes). Fails unless the status is 200.
Result<std::string> HttpGetText(const std::string& url, int timeout_ms);

/// "http://host:port" for `url` given as host:port or http://host:port[/]; fails for https and
/// other schemes, paths, or a missing port.
Result<std::string> NormalizeHttpBase(const std::string& url);

}  // namespace ortkit::perf
