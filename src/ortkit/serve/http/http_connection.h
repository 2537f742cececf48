#pragma once
// One HTTP client connection on Boost.Beast: reads a request, hands it to the routes, writes the
// answer, and reads the next while the client keeps the connection alive; closes idle, stalled
// and misbehaving connections. Knows nothing of endpoints (http_routes.h). Internal to
// ortkit_serve_http; everything here runs on the server's one I/O thread unless it says otherwise.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>

#include "ortkit/serve/http/http_routes.h"

namespace ortkit::serve::http {

class Connection;

/// What a connection needs of the server that accepted it; implemented by HttpServer.
class ConnectionOwner {
 public:
  virtual ~ConnectionOwner() = default;
  virtual const HttpOptions& options() const = 0;
  virtual Routes& routes() = 0;
  /// Stopping: answers say Connection: close, and a connection closes after its answer.
  virtual bool draining() const = 0;
  /// Whether the calling thread is the I/O thread. From any thread.
  virtual bool OnIoThread() const = 0;
  /// What request bodies may hold of the server's memory (InferenceCore::inflight()).
  virtual ByteBudget& inflight() = 0;
  /// Drops the owner's reference to a connection that has closed.
  virtual void Forget(Connection* connection) = 0;
};

/// Beast's request parser, with two throws of Beast's own turned into errors: a field is stored
/// only in the header (v2 defines no trailer fields, so a chunked body's trailer is parsed and
/// dropped), and a field too long for Beast's storage is a header_limit error rather than a
/// std::length_error thrown through the event loop.
class RequestParser : public boost::beast::http::request_parser<boost::beast::http::string_body> {
 private:
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::system::error_code& ec) override;
};

class Connection : public Exchange, public std::enable_shared_from_this<Connection> {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  /// `owner` must outlive the connection.
  Connection(ConnectionOwner& owner, boost::asio::ip::tcp::socket socket, bool metrics_only);

  /// Starts reading the first request.
  void Start();

  /// Whether the sweep should close it: nothing owed and no progress for the idle timeout, or
  /// a closing client that does not finish.
  bool Stale(TimePoint now) const;
  /// While draining: a connection in the middle of receiving a request finishes it.
  bool MidRequest();
  /// Ends the connection: at once, or (`graceful`) after telling the client and reading what
  /// it still sends, so that the kernel does not reset the connection under the last answer.
  void Close(bool graceful);

  // Exchange: the routes' way back to the client.
  bool metrics_only() const override { return metrics_only_; }
  AccessRecord& record() override { return record_; }
  void Write(Response res) override;
  void Fail(int status, std::string message) override;
  void Deliver(std::shared_ptr<InferAnswer> answer) override;
  void Post(std::function<void()> task) override;
  ByteBudget::Reservation TakeReservation() override { return std::move(reservation_); }

 private:
  void WriteAnswer(const std::shared_ptr<InferAnswer>& answer);
  void Read();
  void OnHeader();
  bool HoldBody(std::uint64_t bytes);  // false: refused with a 503
  void ReadBody();
  void ReadMoreBody();
  void OnReadError(const boost::system::error_code& ec);
  void OnRequest();
  void Sent(unsigned status, std::size_t body_bytes, bool keep_alive);
  void OnWritten(const boost::system::error_code& ec);
  void Discard();

  ConnectionOwner& owner_;
  boost::asio::ip::tcp::socket socket_;
  const bool metrics_only_;
  std::string peer_;  // for the access log
  boost::beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  ByteBudget::Reservation reservation_;  // the body being read, until the routes take it
  Response response_;                    // being written
  std::string head_;                     // the status line and fields of an answer written by WriteAnswer
  bool sent_keep_alive_ = true;
  AccessRecord record_;
  TimePoint active_;    // the last progress
  TimePoint received_;  // when the request being answered was read
  bool keep_alive_ = true;
  bool answering_ = false;  // a request is read and its answer not written yet
  bool writing_ = false;
  bool closing_ = false;  // shut down for sending, reading what the client still sends
  bool closed_ = false;
};

}  // namespace ortkit::serve::http
