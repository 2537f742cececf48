#include "ortkit/serve/http/http_connection.h"

#include <fmt/format.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/beast/http/write.hpp>

namespace ortkit::serve::http {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kHeaderLimit = 64 << 10;
constexpr std::size_t kReadBuffer = 16 << 10;  // one recv takes a whole small request
// What the read buffer may hold that the parser has not taken yet: a header, or a chunked body's
// trailer, which Beast buffers whole before parsing it and bounds by nothing else. Body bytes leave
// the buffer as they are parsed, so only these parts ever fill it.
constexpr std::size_t kReadBufferLimit = 2 * std::size_t{kHeaderLimit};
constexpr auto kLingerTimeout = std::chrono::seconds(2);  // reading what a closed-down client still sends

bool ClientWentAway(const error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor;
}

}  // namespace

void RequestParser::on_field_impl(bhttp::field name, boost::beast::string_view name_string,
                                  boost::beast::string_view value, error_code& ec) {
  if (is_header_done()) return;
  try {
    get().insert(name, name_string, value);
  } catch (const std::length_error&) {
    ec = bhttp::error::header_limit;
  }
}

Connection::Connection(ConnectionOwner& owner, tcp::socket socket, bool metrics_only)
    : owner_(owner), socket_(std::move(socket)), metrics_only_(metrics_only), buffer_(kReadBufferLimit) {
  // Beast reads at most the buffer's free room (512 bytes at first): a request read in pieces
  // completes one event-loop pass later and misses the batch that its neighbours make.
  buffer_.reserve(kReadBuffer);
}

void Connection::Start() {
  if (owner_.options().access_log) {
    error_code ec;
    const tcp::endpoint peer = socket_.remote_endpoint(ec);
    if (!ec) peer_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
  }
  Read();
}

bool Connection::Stale(TimePoint now) const {
  if (closing_) return now - active_ > kLingerTimeout;
  if (answering_ && !writing_) return false;  // the core owes the answer; its timeout bounds the wait
  return now - active_ > std::chrono::seconds(owner_.options().idle_timeout_s);
}

bool Connection::MidRequest() {
  error_code ec;
  return answering_ || buffer_.size() > 0 || (parser_ && parser_->got_some()) || socket_.available(ec) > 0;
}

void Connection::Write(Response res) {
  if (closed_) return;
  response_ = std::move(res);
  response_.keep_alive(keep_alive_ && !owner_.draining());
  response_.prepare_payload();
  Sent(response_.result_int(), response_.body().size(), response_.keep_alive());
  bhttp::async_write(socket_, response_,
                     [self = shared_from_this()](error_code ec, std::size_t) { self->OnWritten(ec); });
}

void Connection::Fail(int status, std::string message) {
  Response res = ErrorResponse(status, message);
  record_.error = std::move(message);
  Write(std::move(res));
}

void Connection::Deliver(std::shared_ptr<InferAnswer> answer) {
  auto write = [self = shared_from_this(), answer = std::move(answer)] {
    if (answer->status == 200) return self->WriteAnswer(answer);
    self->Fail(answer->status, std::move(answer->error));
  };
  if (owner_.OnIoThread()) return write();
  asio::post(socket_.get_executor(), std::move(write));
}

void Connection::Post(std::function<void()> task) {
  if (owner_.OnIoThread()) return task();
  asio::post(socket_.get_executor(), std::move(task));
}

// One gathered write: the head, the JSON, then the binary outputs from the response's own
// tensors (Beast's serializer and a copy of every output into a body string cost 3 us per
// bert-tiny answer).
void Connection::WriteAnswer(const std::shared_ptr<InferAnswer>& answer) {
  if (closed_) return;
  const EncodedResponse& encoded = answer->encoded;
  std::size_t length = encoded.json.size();
  for (std::string_view part : encoded.binary) length += part.size();
  const bool keep_alive = keep_alive_ && !owner_.draining();
  head_.clear();
  head_.append("HTTP/1.1 200 OK\r\nContent-Type: ");
  if (encoded.header_length) {
    head_.append("application/octet-stream\r\n");
    head_.append(kHeaderLength).append(": ").append(std::to_string(*encoded.header_length)).append("\r\n");
  } else {
    head_.append(kJson).append("\r\n");
  }
  head_.append(keep_alive ? "" : "Connection: close\r\n");
  head_.append("Content-Length: ").append(std::to_string(length)).append("\r\n\r\n");
  std::vector<asio::const_buffer> buffers{asio::buffer(head_), asio::buffer(encoded.json)};
  for (std::string_view part : encoded.binary) buffers.push_back(asio::buffer(part.data(), part.size()));
  Sent(200, length, keep_alive);
  asio::async_write(socket_, buffers,
                    [self = shared_from_this(), answer](error_code ec, std::size_t) { self->OnWritten(ec); });
}

void Connection::Close(bool graceful) {
  if (closed_) return;
  reservation_.Release();  // a body being read, or refused: it will not be decoded
  error_code ec;
  if (graceful && !closing_) {
    closing_ = true;
    active_ = Clock::now();
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    if (!ec) return Discard();
  }
  closed_ = true;
  socket_.close(ec);
  owner_.Forget(this);
}

void Connection::Read() {
  reservation_ = owner_.inflight().Reserve();  // what the last request held, if the routes did not take it
  parser_.emplace();
  parser_->body_limit(owner_.options().max_body_bytes);
  parser_->header_limit(kHeaderLimit);
  record_ = AccessRecord{};
  active_ = Clock::now();
  bhttp::async_read_header(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, std::size_t) {
    if (!self->closed_) ec ? self->OnReadError(ec) : self->OnHeader();
  });
}

void Connection::OnHeader() {
  // A body is held of the server's budget before any of it is read (or asked for with 100
  // Continue), so that a client told 503 has not sent it in vain.
  const auto length = parser_->content_length();
  if (length && !HoldBody(*length)) return;
  if (parser_->is_done()) return OnRequest();
  // A small request's body arrives with its header: parsed here, it is handled at once rather than
  // when a second read operation completes through the event loop.
  if (length && buffer_.size() >= *length) {
    parser_->eager(true);
    error_code ec;
    buffer_.consume(parser_->put(buffer_.data(), ec));
    if (ec && ec != bhttp::error::need_more) return OnReadError(ec);
    if (parser_->is_done()) return OnRequest();
  }
  if (bhttp::token_list(parser_->get()[bhttp::field::expect]).exists("100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                      [self = shared_from_this()](error_code ec, std::size_t) {
                        if (self->closed_) return;
                        if (ec) return self->Close(false);
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

bool Connection::HoldBody(std::uint64_t bytes) {
  if (reservation_.GrowTo(bytes)) return true;
  keep_alive_ = false;
  answering_ = true;
  received_ = Clock::now();
  Fail(503, reservation_.Refusal(bytes - reservation_.bytes(), "this request's body").message);
  return false;
}

// The body must arrive within the idle timeout of its header (active_ is not moved on by each
// piece): a client trickling it in cannot keep what it holds of the budget for long.
void Connection::ReadBody() {
  active_ = Clock::now();
  ReadMoreBody();
}

void Connection::ReadMoreBody() {
  bhttp::async_read_some(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, std::size_t) {
    if (self->closed_) return;
    if (ec) return self->OnReadError(ec);
    // A chunked body says its size only as it comes: it is held as it grows.
    if (!self->parser_->content_length() && !self->HoldBody(self->parser_->get().body().capacity())) return;
    if (self->parser_->is_done()) return self->OnRequest();
    self->ReadMoreBody();
  });
}

void Connection::OnReadError(const error_code& ec) {
  if (ClientWentAway(ec)) return Close(false);
  // The stream is out of step with the protocol: answer once, then close.
  keep_alive_ = false;
  answering_ = true;
  received_ = Clock::now();
  if (ec == bhttp::error::body_limit) {
    return Fail(413, fmt::format("the request body is larger than the server's limit of {} bytes",
                                 owner_.options().max_body_bytes));
  }
  if (ec == bhttp::error::header_limit) {
    return Fail(431, fmt::format("the request's header is larger than the server's limit of {} bytes", kHeaderLimit));
  }
  if (ec == bhttp::error::buffer_overflow) {
    return Fail(431, fmt::format("the request's header or chunked trailer is larger than the server's limit of {} "
                                 "bytes",
                                 kReadBufferLimit));
  }
  Fail(400, fmt::format("malformed HTTP request: {}", ec.message()));
}

void Connection::OnRequest() {
  answering_ = true;
  received_ = Clock::now();
  Request& req = parser_->get();
  keep_alive_ = req.keep_alive();
  if (owner_.options().access_log) {
    record_.protocol = "http";
    record_.method = std::string(req.method_string());
    record_.path = std::string(req.target());
    record_.peer = peer_;
    record_.request_bytes = req.body().size();
  }
  try {
    owner_.routes().Handle(shared_from_this(), req);
  } catch (const std::exception& e) {
    if (answering_ && !writing_) Fail(500, std::string("internal error: ") + e.what());
  }
}

// Notes what is being written, for OnWritten and the access log.
void Connection::Sent(unsigned status, std::size_t body_bytes, bool keep_alive) {
  writing_ = true;
  active_ = Clock::now();
  record_.status = static_cast<int>(status);
  record_.response_bytes = body_bytes;
  sent_keep_alive_ = keep_alive;
}

void Connection::OnWritten(const error_code& ec) {
  writing_ = false;
  answering_ = false;
  if (owner_.options().access_log) {
    record_.duration_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - received_).count();
    owner_.options().access_log(record_);
  }
  if (ec) return Close(false);
  if (!sent_keep_alive_ || owner_.draining()) return Close(true);
  response_ = {};
  Read();
}

void Connection::Discard() {
  buffer_.clear();
  socket_.async_read_some(buffer_.prepare(16 << 10), [self = shared_from_this()](error_code ec, std::size_t) {
    if (self->closed_) return;
    if (ec) return self->Close(false);
    self->Discard();
  });
}

}  // namespace ortkit::serve::http
