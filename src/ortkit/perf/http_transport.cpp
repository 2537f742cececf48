// perf's HTTP transport (http_transport.h): sockets, gathered writes, and Beast's parser fed from a reused buffer.
#include "ortkit/perf/http_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <system_error>

#include <fmt/format.h>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

namespace ortkit::perf {
namespace {

namespace http = boost::beast::http;

constexpr std::size_t kInitialBufferBytes = std::size_t{16} * 1024;
// Past this a full read no longer grows the buffer: big bodies are copied into the answer as they arrive anyway.
constexpr std::size_t kGrowOnFullReadLimit = std::size_t{256} * 1024;
// Unparsed bytes the buffer may hold: a header (kHeaderLimit) or a chunk-size line, never a body.
constexpr std::size_t kMaxPendingBytes = std::size_t{1024} * 1024;
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr std::uint64_t kBodyLimit = std::uint64_t{1} << 30;

// The socket timeouts turn a stalled send or recv into EAGAIN / EWOULDBLOCK.
bool IsTimeout(int error) { return error == EAGAIN || error == EWOULDBLOCK; }

// What a kept-alive connection the server has already closed looks like on the next write or read.
bool IsClosedByPeer(int error) { return error == EPIPE || error == ECONNRESET; }

HttpAnswer Failure(std::string error, std::string detail) { return {std::move(error), std::move(detail), 0, {}}; }

// Nagle off: the rest of a partial write must not wait for the server's ACK. A blocking socket's sends and
// receives then block for at most the timeout (and fail with EAGAIN) without a poll each.
bool Configure(int fd, int timeout_ms, bool blocking) {
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) return false;
  if (!blocking) return true;
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) return false;
  if (timeout_ms <= 0) return true;
  const timeval timeout{timeout_ms / 1000, static_cast<suseconds_t>(timeout_ms % 1000) * 1000};
  return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) == 0 &&
         setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) == 0;
}

// A non-blocking connect bounded by the timeout, then a blocking socket whose sends and receives time out
// (or, for a non-blocking connection, the socket as it is).
int ConnectTo(const addrinfo& address, int timeout_ms, bool blocking, std::string& why) {
  const int fd = socket(address.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, address.ai_protocol);
  if (fd < 0) {
    why = ErrnoText(errno);
    return -1;
  }
  int error = connect(fd, address.ai_addr, address.ai_addrlen) == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    pollfd waiting{fd, POLLOUT, 0};
    int ready;
    do ready = poll(&waiting, 1, timeout_ms > 0 ? timeout_ms : -1);
    while (ready < 0 && errno == EINTR);
    socklen_t length = sizeof(error);
    if (ready == 0)
      error = ETIMEDOUT;
    else if (ready < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
      error = errno;
  }
  if (error == 0) {
    if (Configure(fd, timeout_ms, blocking)) return fd;
    error = errno;
  }
  why = error == ETIMEDOUT ? fmt::format("not connected within {} ms", timeout_ms) : ErrnoText(error);
  ::close(fd);
  return -1;
}

}  // namespace

std::string ErrnoText(int error) { return std::error_code(error, std::generic_category()).message(); }

ServerAddress ServerAddress::FromBase(const std::string& base) {
  ServerAddress endpoint;
  endpoint.base = base;
  endpoint.host_header = base.substr(base.find("://") + 3);
  const auto colon = endpoint.host_header.rfind(':');
  endpoint.host = endpoint.host_header.substr(0, colon);
  endpoint.port = endpoint.host_header.substr(colon + 1);
  if (endpoint.host.size() >= 2 && endpoint.host.front() == '[' && endpoint.host.back() == ']')
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  return endpoint;
}

std::string HttpAnswer::Describe() const { return detail.empty() ? error : fmt::format("{} ({})", error, detail); }

HttpConnection::HttpConnection(ServerAddress endpoint, int timeout_ms, bool blocking)
    : endpoint_(std::move(endpoint)), timeout_ms_(timeout_ms), blocking_(blocking) {}

HttpConnection::~HttpConnection() { Close(); }

HttpAnswer HttpConnection::Exchange(const HttpRequest& request) {
  HttpAnswer answer = ExchangeOnce(request);
  if (Resendable()) answer = ExchangeOnce(request);
  return answer;
}

ExchangeStep HttpConnection::Begin(const HttpRequest& request) {
  reused_ = fd_ >= 0;
  FormatHead(request);
  parts_[0] = {head_.data(), head_.size()};
  parts_[1] = {const_cast<char*>(request.body.data()), request.body.size()};
  next_part_ = 0;
  part_count_ = request.body.empty() ? 1 : 2;
  answer_ = {};
  closed_before_answer_ = false;
  parser_.emplace();
  parser_->eager(true);
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(kBodyLimit);
  begin_ = end_ = received_ = 0;
  deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  if (fd_ < 0) {
    answer_ = Connect();
    if (!answer_.ok()) return ExchangeStep::kFailed;
  }
  return Progress();
}

ExchangeStep HttpConnection::Progress() {
  if (wants_write()) {
    const ExchangeStep sent = Write();
    if (sent != ExchangeStep::kDone) return sent;
  }
  return Read();
}

void HttpConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void HttpConnection::TimeOut() {
  answer_ = received_ > 0 ? Failure("timed out", fmt::format("the answer took over {} ms", timeout_ms_))
                          : Failure("timed out", fmt::format("no answer within {} ms", timeout_ms_));
  Close();
}

HttpAnswer HttpConnection::ExchangeOnce(const HttpRequest& request) {
  if (Begin(request) == ExchangeStep::kWouldBlock) TimeOut();  // blocking: a receive timed out
  return TakeAnswer();
}

// Head and body in one gathered write; more calls only when the kernel took part of them.
ExchangeStep HttpConnection::Write() {
  while (next_part_ < part_count_) {
    msghdr message{};
    message.msg_iov = parts_ + next_part_;
    message.msg_iovlen = part_count_ - next_part_;
    const ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (sent < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      if (IsTimeout(error)) {
        if (!blocking_) return ExchangeStep::kWouldBlock;
        return Fail(Failure("timed out", fmt::format("sending took over {} ms", timeout_ms_)));
      }
      closed_before_answer_ = IsClosedByPeer(error);
      return Fail(Failure("write failed", ErrnoText(error)));
    }
    for (auto left = static_cast<std::size_t>(sent); left > 0 && next_part_ < part_count_;) {
      iovec& part = parts_[next_part_];
      const std::size_t taken = std::min(left, part.iov_len);
      part.iov_base = static_cast<char*>(part.iov_base) + taken;
      part.iov_len -= taken;
      left -= taken;
      if (part.iov_len == 0) ++next_part_;
    }
  }
  return ExchangeStep::kDone;
}

// Reads and parses until the answer is complete, the socket has nothing more for now or the exchange failed.
ExchangeStep HttpConnection::Read() {
  try {
    return ReadAnswer();
  } catch (const std::exception& e) {  // the parser's allocations: a body the size the server claimed
    return Fail(Failure("read failed", e.what()));
  }
}

ExchangeStep HttpConnection::Fail(HttpAnswer failure) {
  answer_ = std::move(failure);
  Close();
  return ExchangeStep::kFailed;
}

void HttpConnection::FormatHead(const HttpRequest& request) {
  head_.clear();
  auto out = std::back_inserter(head_);
  fmt::format_to(out, "{} {} HTTP/1.1\r\nHost: {}\r\n", request.method, request.target, endpoint_.host_header);
  if (!request.body.empty() || request.method == "POST")
    fmt::format_to(out, "Content-Type: {}\r\nContent-Length: {}\r\n", request.content_type, request.body.size());
  if (request.inference_header_length > 0)
    fmt::format_to(out, "Inference-Header-Content-Length: {}\r\n", request.inference_header_length);
  head_ += "\r\n";
}

HttpAnswer HttpConnection::Connect() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(endpoint_.host.c_str(), endpoint_.port.c_str(), &hints, &found); rc != 0) {
    return Failure("connection failed", fmt::format("cannot resolve {}: {}", endpoint_.host, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  std::string why;
  for (const addrinfo* address = found; address != nullptr; address = address->ai_next) {
    fd_ = ConnectTo(*address, timeout_ms_, blocking_, why);
    if (fd_ >= 0) {
      ++sockets_opened_;
      return {};
    }
  }
  return Failure("connection failed", fmt::format("connect to {}: {}", endpoint_.host_header, why));
}

ExchangeStep HttpConnection::ReadAnswer() {
  auto& parser = *parser_;
  if (buffer_.empty()) buffer_.resize(kInitialBufferBytes);
  while (!parser.is_done()) {
    // SO_RCVTIMEO bounds each blocking recv; this bounds a server that trickles its answer.
    if (timeout_ms_ > 0 && received_ > 0 && std::chrono::steady_clock::now() > deadline_) {
      TimeOut();
      return ExchangeStep::kFailed;
    }
    if (begin_ == end_) begin_ = end_ = 0;
    if (end_ == buffer_.size()) {
      if (begin_ > 0) {
        std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
      } else if (buffer_.size() < kMaxPendingBytes) {
        buffer_.resize(buffer_.size() * 2);
      } else {
        return Fail(Failure("malformed answer", fmt::format("a header or chunk line longer than {} bytes", end_)));
      }
    }
    const std::size_t room = buffer_.size() - end_;
    const ssize_t got = recv(fd_, buffer_.data() + end_, room, 0);
    if (got < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      if (IsTimeout(error)) return ExchangeStep::kWouldBlock;
      closed_before_answer_ = received_ == 0 && IsClosedByPeer(error);
      return Fail(Failure("read failed", ErrnoText(error)));
    }
    if (got == 0) return FinishAtEof();
    end_ += static_cast<std::size_t>(got);
    received_ += static_cast<std::size_t>(got);
    if (static_cast<std::size_t>(got) == room && buffer_.size() < kGrowOnFullReadLimit)
      buffer_.resize(buffer_.size() * 2);  // a full read: a big answer is arriving, take more per recv
    while (begin_ < end_ && !parser.is_done()) {
      boost::beast::error_code ec;
      const std::size_t used = parser.put(boost::asio::buffer(buffer_.data() + begin_, end_ - begin_), ec);
      begin_ += used;
      if (ec == http::error::need_more) break;
      if (ec) return Fail(Failure("malformed answer", ec.message()));
      if (used == 0) break;
    }
  }
  if (begin_ != end_) {
    return Fail(
        Failure("malformed answer",
                fmt::format("{} bytes after the end of the answer (perf sends one request at a time)", end_ - begin_)));
  }
  if (!parser.keep_alive()) Close();
  answer_ = Answer(parser);
  return ExchangeStep::kDone;
}

// The server closed the connection: the end of an answer delimited by it, or a failure.
ExchangeStep HttpConnection::FinishAtEof() {
  if (received_ == 0) {
    closed_before_answer_ = true;
    return Fail(Failure("read failed", "the server closed the connection without answering"));
  }
  boost::beast::error_code ec;
  parser_->put_eof(ec);
  if (ec || !parser_->is_done()) {
    return Fail(
        Failure("read failed",
                fmt::format("the server closed the connection after {} bytes of an unfinished answer", received_)));
  }
  Close();
  answer_ = Answer(*parser_);
  return ExchangeStep::kDone;
}

HttpAnswer HttpConnection::Answer(Parser& parser) {
  HttpAnswer answer;
  answer.status = parser.get().result_int();
  answer.body = std::move(parser.get().body());
  return answer;
}

}  // namespace ortkit::perf
