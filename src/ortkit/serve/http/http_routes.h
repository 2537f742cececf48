#pragma once
// The routes of the HTTP front end: a request's method and path to the inference core's calls
// (http_server.h lists the endpoints), and the answer back. They know nothing of sockets: they
// answer through an Exchange, which the connection that read the request implements
// (http_connection.h). Internal to ortkit_serve_http.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "ortkit/core/result.h"
#include "ortkit/serve/access_log.h"
#include "ortkit/serve/byte_budget.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/http/rest_codec.h"
#include "ortkit/serve/inference_core.h"

namespace ortkit::serve::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

inline constexpr char kJson[] = "application/json";
/// The binary tensor data extension's header: how many bytes of the body are JSON.
inline constexpr char kHeaderLength[] = "Inference-Header-Content-Length";

/// A response with `body` (of `content_type` when not empty) and nothing else set.
Response MakeResponse(int status, std::string body = {}, const char* content_type = kJson);
/// {"error": message} with `status`; a 503 (queue full, shutting down, past the in-flight limit)
/// says Retry-After: 1.
Response ErrorResponse(int status, std::string_view message);

/// An inference's answer, built on whichever thread finished it: a 200 is written from its parts
/// (the JSON, then the binary outputs straight from the response's tensors); otherwise `status`
/// and `error` say what went wrong.
struct InferAnswer {
  /// Encodes `result` as `encoding` asks, once `held` grows to cover the answer (else a 503); a
  /// failure (of the inference or of the encoding) becomes the error.
  InferAnswer(Result<InferResponse> result, const OutputEncoding& encoding, ByteBudget::Reservation held);

  InferResponse response;  ///< owns the bytes `encoded.binary` points into
  EncodedResponse encoded;
  ByteBudget::Reservation held;  ///< of the server's budget, until the answer is written
  int status = 200;
  std::string error;  ///< the message when status is not 200
};

/// One request's way back to its client, implemented by the connection that read it. Every
/// method but Deliver runs on the I/O thread; the request is answered exactly once, by Write,
/// Fail or Deliver.
class Exchange {
 public:
  virtual ~Exchange() = default;
  /// Whether the request came on the metrics-only port.
  virtual bool metrics_only() const = 0;
  /// The request's access-log record, for the routes to name the model and the request id.
  virtual AccessRecord& record() = 0;
  /// Answers with `response`.
  virtual void Write(Response response) = 0;
  /// Answers with `status` and {"error": message}; the message also goes to the access log.
  virtual void Fail(int status, std::string message) = 0;
  /// Answers with an inference's answer. From any thread: a worker's answer is handed to the I/O
  /// thread, which writes it.
  virtual void Deliver(std::shared_ptr<InferAnswer> answer) = 0;
  /// Runs `task` on the I/O thread (at once when called there): for an answer computed elsewhere
  /// to be written with Write or Fail.
  virtual void Post(std::function<void()> task) = 0;
  /// What the request's body holds of the server's budget (ByteBudget), for the request to keep
  /// until its answer is written; empty after the first call.
  virtual ByteBudget::Reservation TakeReservation() = 0;
};

class ControlThread;

class Routes {
 public:
  /// `core` must outlive the routes. `run_queued_soon` is called on the I/O thread after an
  /// inference is queued for it to run (HttpOptions::run_on_io_thread).
  Routes(InferenceCore& core, const HttpOptions& options, std::function<void()> run_queued_soon);
  ~Routes();  ///< waits for a load or unload in progress
  Routes(const Routes&) = delete;
  Routes& operator=(const Routes&) = delete;

  /// Answers `request` through `exchange`: at once, or for an inference once the core has
  /// answered (the callback keeps `exchange` alive until then). On the I/O thread. The request's
  /// body is cleared once decoded.
  void Handle(const std::shared_ptr<Exchange>& exchange, Request& request);

 private:
  void Infer(const std::shared_ptr<Exchange>& exchange, Request& request, const std::string& model,
             const std::string& version);
  // POST /v2/repository/models/NAME/load and .../unload.
  void RepositoryControl(const std::shared_ptr<Exchange>& exchange, Request& request, bool load,
                         const std::string& model);

  InferenceCore& core_;
  std::string server_version_;
  bool run_on_io_thread_;
  std::function<void()> run_queued_soon_;
  // Loads and unloads (sessions, warm-up: seconds) run here, not on the I/O thread, which goes on
  // answering the other requests meanwhile.
  std::unique_ptr<ControlThread> control_;
};

}  // namespace ortkit::serve::http
