#pragma once
// The Open Inference Protocol (KServe v2) over HTTP/REST, on Boost.Beast over one Asio event
// loop, over InferenceCore:
//   GET  /v2, /v2/health/live, /v2/health/ready
//   GET  /v2/models/NAME[/versions/V], /v2/models/NAME[/versions/V]/ready, .../config
//   POST /v2/models/NAME[/versions/V]/infer   (JSON, or JSON + binary tensor data)
//   POST /v2/repository/index
//   GET  /metrics                              (also on a port of its own with metrics_port)
// Errors are {"error": "..."} with the status of HttpStatusFor().
//
// One I/O thread reads every connection. The requests one wake-up of the event loop brings are
// queued together and, when an instance is idle, run as one batch on the I/O thread itself
// (InferenceCore::InferLater + RunQueued): under load nobody switches threads. Batches that must
// wait for their delay, or that other instances can take, run on the core's workers, which hand
// the answers back to the I/O thread.

#include <cstddef>
#include <memory>
#include <string>

#include "ortkit/core/result.h"
#include "ortkit/serve/access_log.h"
#include "ortkit/serve/inference_core.h"

namespace ortkit::serve::http {

/// The HTTP status for an error kind: 400 bad request, 404 unknown model, 503 unavailable
/// (queue full, not ready, shutting down), 500 otherwise.
int HttpStatusFor(ErrorKind kind);

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                        ///< 0: a free port, see HttpServer::port()
  int metrics_port = -1;                  ///< -1: /metrics on the main port only; 0: a free port
  std::size_t max_body_bytes = 64 << 20;  ///< larger bodies get 413
  int max_connections = 1024;             ///< open connections; further clients wait in the listen backlog
  int idle_timeout_s = 60;  ///< a connection with no request in progress, or a stalled read or write, is closed
  /// Run due batches on the I/O thread (no thread handoff); false: always on the core's workers,
  /// so that reading never pauses for a run (many cores, long runs).
  bool run_on_io_thread = true;
  /// After the last event, the I/O thread polls instead of sleeping for this long: a request
  /// that follows soon finds the core awake and its caches warm (at concurrency 1 a sleeping
  /// core costs more than the model's run). 0: sleep at once.
  int busy_poll_us = 0;
  std::string server_version = "0.1.0";
  AccessLog access_log;  ///< optional

  /// kInvalidArgument for a value out of its range, naming its flag and the range (HttpServer::
  /// Create checks it: a port is cast to 16 bits, a timeout into the clock's nanoseconds).
  Status Validate() const;
};

class HttpServer {
 public:
  /// Binds the listening sockets (kUnavailable when a port is taken) without serving yet.
  /// `core` must outlive the server.
  static Result<std::unique_ptr<HttpServer>> Create(InferenceCore& core, const HttpOptions& options);
  ~HttpServer();  ///< Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  int metrics_port() const;  ///< -1 when metrics share the main port

  /// Serves on a background thread.
  void Start();
  /// Stops accepting connections, closes idle ones, and returns once every request already
  /// received is answered (their connections then close). Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ortkit::serve::http
