#pragma once
// perf's HTTP transport underneath the client and the event loop (http_client.cpp, http_loop.cpp): one
// keep-alive HTTP/1.1 connection over a POSIX socket, built to cost the load generator as little as possible
// per request. The request leaves in one sendmsg (status line, headers and body gathered), the answer
// typically arrives in one recv, and a blocking connection's socket timeouts (SO_SNDTIMEO / SO_RCVTIMEO)
// replace a poll per request. Answers are parsed with Boost.Beast's buffer-oriented parser; Beast does no
// I/O here. Internal to perf: the public transports are in infer_client.h.

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace ortkit::perf {

/// Where a client connects, split out of a normalized "http://host:port" base (NormalizeHttpBase).
struct ServerAddress {
  std::string base;  ///< http://host:port, for messages
  std::string host;  ///< for getaddrinfo: an IPv6 literal loses its brackets
  std::string port;
  std::string host_header;  ///< host:port as the URL gave it

  static ServerAddress FromBase(const std::string& base);
};

/// One request to send; the views must outlive its exchange.
struct HttpRequest {
  std::string_view method;
  std::string_view target;
  std::string_view body;
  std::string_view content_type;            ///< sent with a body
  std::size_t inference_header_length = 0;  ///< > 0: the binary tensor data extension's JSON header length
};

/// One exchange's outcome: `error` is empty when an answer arrived (whatever its status), else one of
/// InferOutcome's short kinds, with `detail` saying what exactly happened.
struct HttpAnswer {
  std::string error;
  std::string detail;
  unsigned status = 0;
  std::string body;
  bool ok() const { return error.empty(); }
  /// "connection failed (connect to 127.0.0.1:8000: Connection refused)".
  std::string Describe() const;
};

/// What a step of a non-blocking exchange came to.
enum class ExchangeStep { kDone, kWouldBlock, kFailed };

/// The text of an errno value ("Connection refused").
std::string ErrnoText(int error);

/// One keep-alive HTTP/1.1 connection, opened on the first exchange and reopened after the server closed it.
/// Sends one request at a time (never pipelines). Blocking (Exchange: the socket's timeouts bound each call) or
/// not (Begin, then Progress whenever the socket is ready: the HTTP InferLoop). Used by one thread at a time;
/// neither copyable nor movable.
class HttpConnection {
 public:
  HttpConnection(ServerAddress endpoint, int timeout_ms, bool blocking = true);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  const ServerAddress& endpoint() const { return endpoint_; }
  /// The socket, -1 while closed.
  int fd() const { return fd_; }
  /// Counts the sockets opened: a new count is a new socket even where the kernel reused the descriptor's number.
  std::uint64_t sockets_opened() const { return sockets_opened_; }

  /// Sends `request` and reads its answer. A kept-alive connection that turns out closed by the server before
  /// any byte of the answer arrived (its idle timeout) is reopened and the request sent once more; once part of
  /// an answer has arrived nothing is resent. Never throws.
  HttpAnswer Exchange(const HttpRequest& request);

  /// Starts an exchange: connects when closed (a connect bounded by the timeout, even when not blocking), then
  /// goes as far as the socket allows (Progress). `request`'s bytes must outlive the exchange.
  ExchangeStep Begin(const HttpRequest& request);

  /// Sends what is left of the request, then reads its answer. kDone: the answer is complete; kWouldBlock: the
  /// socket has to become writable (wants_write) or readable first (when blocking, a receive timed out);
  /// kFailed: the exchange failed. Either way TakeAnswer says how it ended. Never throws.
  ExchangeStep Progress();

  /// Whether the request is not all sent yet.
  bool wants_write() const { return next_part_ < part_count_; }
  /// The finished exchange's answer or failure; the connection is closed after a failure.
  HttpAnswer TakeAnswer() { return std::move(answer_); }
  /// Whether the failed exchange may be sent once more, on a new connection: the server had closed this
  /// kept-alive one (its idle timeout) before any byte of the answer. A resent exchange starts on a fresh
  /// connection, so it is never resent twice.
  bool Resendable() const { return reused_ && closed_before_answer_; }
  /// Whether the exchange in flight is past its timeout.
  bool Overdue(std::chrono::steady_clock::time_point now) const { return timeout_ms_ > 0 && now > deadline_; }
  std::chrono::steady_clock::time_point deadline() const { return deadline_; }

  void Close();

  /// Ends the exchange in flight as timed out and closes the connection.
  void TimeOut();

 private:
  using Parser = boost::beast::http::response_parser<boost::beast::http::string_body>;

  HttpAnswer ExchangeOnce(const HttpRequest& request);
  void FormatHead(const HttpRequest& request);
  HttpAnswer Connect();
  ExchangeStep Write();
  ExchangeStep Read();
  ExchangeStep ReadAnswer();
  ExchangeStep FinishAtEof();
  ExchangeStep Fail(HttpAnswer failure);
  static HttpAnswer Answer(Parser& parser);

  ServerAddress endpoint_;
  int timeout_ms_;
  bool blocking_;
  int fd_ = -1;
  std::uint64_t sockets_opened_ = 0;
  // The exchange in flight.
  std::string head_;  // reused: the request line and headers
  iovec parts_[2] = {};
  std::size_t next_part_ = 0, part_count_ = 0;
  std::optional<Parser> parser_;
  std::vector<char> buffer_;                        // reused: bytes read from the socket
  std::size_t begin_ = 0, end_ = 0, received_ = 0;  // buffer_[begin_, end_) is read but not yet parsed
  std::chrono::steady_clock::time_point deadline_;
  HttpAnswer answer_;
  bool reused_ = false;  // the connection was open when the exchange began
  bool closed_before_answer_ = false;
};

}  // namespace ortkit::perf
