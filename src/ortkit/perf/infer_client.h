#pragma once
// Transports for perf: one InferClient per load-generating thread, each holding one keep-alive
// connection, or (HTTP) one InferLoop per thread holding many. A client or loop is used by one thread at a
// time; create one per thread with a ClientFactory or LoopFactory.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/perf/v2_protocol.h"

namespace ortkit::perf {

enum class Protocol { kHttp, kGrpc };

/// "http" or "grpc", as --protocol names them.
const char* ToString(Protocol protocol);

struct ClientOptions {
  /// The longest per-request timeout: an hour.
  static constexpr int kMostTimeoutMs = 3'600'000;

  Protocol protocol = Protocol::kHttp;
  std::string url = "127.0.0.1:8000";  ///< host:port, or http://host:port for HTTP
  std::string model;
  bool json_tensors = false;  ///< HTTP: JSON tensors instead of the binary tensor data extension
  int timeout_ms = 60000;     ///< per request: connect, send and receive

  /// Each field in its range, and JSON tensors over HTTP only (kInvalidArgument naming the flag that
  /// sets it): a timeout from 1 ms to kMostTimeoutMs.
  Status Validate() const;
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
  virtual Result<RemoteModel> ModelMetadata() = 0;
  /// Encodes a request once, before the timed region, for this client's protocol and options.
  virtual Result<EncodedRequest> Encode(const std::vector<NamedTensor>& inputs,
                                        const std::vector<std::string>& outputs) = 0;
  /// Sends one encoded request and waits for its answer. Never throws.
  virtual InferOutcome Infer(const EncodedRequest& request) = 0;
};

using ClientFactory = std::function<Result<std::unique_ptr<InferClient>>()>;

/// Many requests in flight from one thread, one per connection: a closed loop over several connections in
/// one event loop. On a shared machine a thread per connection makes every answer wake its own thread, and the
/// server's core pays for those wake-ups when both ends share one kernel; an event loop wakes once per burst.
class InferLoop {
 public:
  virtual ~InferLoop() = default;

  /// Starts `request` on idle connection `connection` (< the count the loop was made with); its outcome comes
  /// out of a later Wait. `request` must outlive the exchange.
  virtual void Send(std::size_t connection, const EncodedRequest& request) = 0;
  /// Waits up to `wait_ms` for answers and calls `answered(connection, outcome)` for each exchange that
  /// finished, which may Send again at once. Never throws.
  virtual void Wait(int wait_ms, const std::function<void(std::size_t, const InferOutcome&)>& answered) = 0;
  /// Exchanges started and not yet reported.
  virtual std::size_t in_flight() const = 0;
};

/// Creates an InferLoop over `connections` connections.
using LoopFactory = std::function<Result<std::unique_ptr<InferLoop>>(std::size_t connections)>;

/// A client for `options.protocol`. Connects lazily (on the first call). Fails for a malformed URL.
Result<std::unique_ptr<InferClient>> CreateClient(const ClientOptions& options);
Result<std::unique_ptr<InferClient>> CreateHttpClient(const ClientOptions& options);
Result<std::unique_ptr<InferClient>> CreateGrpcClient(const ClientOptions& options);
/// HTTP's InferLoop: non-blocking keep-alive connections polled with epoll, opened on their first Send.
Result<std::unique_ptr<InferLoop>> CreateHttpLoop(const ClientOptions& options, std::size_t connections);

/// GET of a full http://host:port/path URL (metrics scrapes). Fails unless the status is 200.
Result<std::string> HttpGetText(const std::string& url, int timeout_ms);

/// "http://host:port" for `url` given as host:port or http://host:port[/]; fails for https and
/// other schemes, paths, or a missing port.
Result<std::string> NormalizeHttpBase(const std::string& url);

}  // namespace ortkit::perf
