// The HTTP transport: a blocking HTTP/1.1 client over one keep-alive POSIX socket per client, built to cost
// the load generator as little as possible per request: the request leaves in one sendmsg (status line,
// headers and body gathered), the answer typically arrives in one recv, and the socket's own timeouts
// (SO_SNDTIMEO / SO_RCVTIMEO) replace a poll per request. Answers are parsed with Boost.Beast's
// buffer-oriented parser; Beast does no I/O here.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <memory>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "ortkit/perf/infer_client.h"

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

std::string ErrnoText(int error) { return std::error_code(error, std::generic_category()).message(); }

// The socket timeouts turn a stalled send or recv into EAGAIN / EWOULDBLOCK.
bool IsTimeout(int error) { return error == EAGAIN || error == EWOULDBLOCK; }

// What a kept-alive connection the server has already closed looks like on the next write or read.
bool IsClosedByPeer(int error) { return error == EPIPE || error == ECONNRESET; }

/// Where a client connects, split out of a normalized "http://host:port" base.
struct Endpoint {
  std::string base;  ///< http://host:port, for messages
  std::string host;  ///< for getaddrinfo: an IPv6 literal loses its brackets
  std::string port;
  std::string host_header;  ///< host:port as the URL gave it
};

Endpoint SplitBase(const std::string& base) {
  Endpoint endpoint;
  endpoint.base = base;
  endpoint.host_header = base.substr(base.find("://") + 3);
  const auto colon = endpoint.host_header.rfind(':');
  endpoint.host = endpoint.host_header.substr(0, colon);
  endpoint.port = endpoint.host_header.substr(colon + 1);
  if (endpoint.host.size() >= 2 && endpoint.host.front() == '[' && endpoint.host.back() == ']')
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  return endpoint;
}

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
  std::string Describe() const { return detail.empty() ? error : fmt::format("{} ({})", error, detail); }
};

HttpAnswer Failure(std::string error, std::string detail) { return {std::move(error), std::move(detail), 0, {}}; }

/// One keep-alive HTTP/1.1 connection, opened on the first exchange and reopened after the server closed it.
/// Sends one request at a time (never pipelines). Used by one thread at a time; neither copyable nor movable.
class HttpConnection {
 public:
  HttpConnection(Endpoint endpoint, int timeout_ms) : endpoint_(std::move(endpoint)), timeout_ms_(timeout_ms) {}
  ~HttpConnection() { Close(); }
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }

  /// Sends `request` and reads its answer. A kept-alive connection that turns out closed by the server before
  /// any byte of the answer arrived (its idle timeout) is reopened and the request sent once more; once part of
  /// an answer has arrived nothing is resent. Never throws.
  HttpAnswer Exchange(const HttpRequest& request) {
    FormatHead(request);
    const bool reused = fd_ >= 0;
    bool closed_before_answer = false;
    HttpAnswer answer = ExchangeOnce(request.body, closed_before_answer);
    if (reused && closed_before_answer) answer = ExchangeOnce(request.body, closed_before_answer);
    return answer;
  }

 private:
  void FormatHead(const HttpRequest& request) {
    head_.clear();
    auto out = std::back_inserter(head_);
    fmt::format_to(out, "{} {} HTTP/1.1\r\nHost: {}\r\n", request.method, request.target, endpoint_.host_header);
    if (!request.body.empty() || request.method == "POST")
      fmt::format_to(out, "Content-Type: {}\r\nContent-Length: {}\r\n", request.content_type, request.body.size());
    if (request.inference_header_length > 0)
      fmt::format_to(out, "Inference-Header-Content-Length: {}\r\n", request.inference_header_length);
    head_ += "\r\n";
  }

  HttpAnswer ExchangeOnce(std::string_view body, bool& closed_before_answer) {
    closed_before_answer = false;
    if (fd_ < 0) {
      HttpAnswer connected = Connect();
      if (!connected.ok()) return connected;
    }
    HttpAnswer answer;
    try {
      answer = Send(body, closed_before_answer);
      if (answer.ok()) answer = Receive(closed_before_answer);
    } catch (const std::exception& e) {  // the parser's allocations: a body the size the server claimed
      answer = Failure("read failed", e.what());
    }
    if (!answer.ok()) Close();
    return answer;
  }

  HttpAnswer Connect() {
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
      fd_ = ConnectTo(*address, why);
      if (fd_ >= 0) return {};
    }
    return Failure("connection failed", fmt::format("connect to {}: {}", endpoint_.host_header, why));
  }

  // A non-blocking connect bounded by the timeout, then a blocking socket whose sends and receives time out.
  int ConnectTo(const addrinfo& address, std::string& why) const {
    const int fd = socket(address.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, address.ai_protocol);
    if (fd < 0) {
      why = ErrnoText(errno);
      return -1;
    }
    int error = connect(fd, address.ai_addr, address.ai_addrlen) == 0 ? 0 : errno;
    if (error == EINPROGRESS) {
      pollfd waiting{fd, POLLOUT, 0};
      int ready;
      do ready = poll(&waiting, 1, timeout_ms_ > 0 ? timeout_ms_ : -1);
      while (ready < 0 && errno == EINTR);
      socklen_t length = sizeof(error);
      if (ready == 0)
        error = ETIMEDOUT;
      else if (ready < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
        error = errno;
    }
    if (error == 0) {
      if (MakeBlockingWithTimeouts(fd)) return fd;
      error = errno;
    }
    why = error == ETIMEDOUT ? fmt::format("not connected within {} ms", timeout_ms_) : ErrnoText(error);
    ::close(fd);
    return -1;
  }

  // From here on sends and receives block for at most the timeout (then fail with EAGAIN) without a poll each.
  // Nagle off: the rest of a partial write must not wait for the server's ACK.
  bool MakeBlockingWithTimeouts(int fd) const {
    const int one = 1;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) return false;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) return false;
    if (timeout_ms_ <= 0) return true;
    const timeval timeout{timeout_ms_ / 1000, static_cast<suseconds_t>(timeout_ms_ % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) == 0 &&
           setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) == 0;
  }

  // Head and body in one gathered write; more calls only when the kernel took part of them.
  HttpAnswer Send(std::string_view body, bool& closed_before_answer) {
    iovec parts[2] = {{head_.data(), head_.size()}, {const_cast<char*>(body.data()), body.size()}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = body.empty() ? 1 : 2;
    while (message.msg_iovlen > 0) {
      const ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL);
      if (sent < 0) {
        const int error = errno;
        if (error == EINTR) continue;
        if (IsTimeout(error)) return Failure("timed out", fmt::format("sending took over {} ms", timeout_ms_));
        closed_before_answer = IsClosedByPeer(error);
        return Failure("write failed", ErrnoText(error));
      }
      for (auto left = static_cast<std::size_t>(sent); left > 0 && message.msg_iovlen > 0;) {
        iovec& part = message.msg_iov[0];
        const std::size_t taken = std::min(left, part.iov_len);
        part.iov_base = static_cast<char*>(part.iov_base) + taken;
        part.iov_len -= taken;
        left -= taken;
        if (part.iov_len == 0) {
          ++message.msg_iov;
          --message.msg_iovlen;
        }
      }
    }
    return {};
  }

  HttpAnswer Receive(bool& closed_before_answer) {
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    if (buffer_.empty()) buffer_.resize(kInitialBufferBytes);
    std::size_t begin = 0, end = 0, received = 0;  // buffer_[begin, end) is read but not yet parsed
    // SO_RCVTIMEO bounds each recv; this bounds a server that trickles its answer.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
    while (!parser.is_done()) {
      if (timeout_ms_ > 0 && received > 0 && std::chrono::steady_clock::now() > deadline)
        return Failure("timed out", fmt::format("the answer took over {} ms", timeout_ms_));
      if (begin == end) begin = end = 0;
      if (end == buffer_.size()) {
        if (begin > 0) {
          std::memmove(buffer_.data(), buffer_.data() + begin, end - begin);
          end -= begin;
          begin = 0;
        } else if (buffer_.size() < kMaxPendingBytes) {
          buffer_.resize(buffer_.size() * 2);
        } else {
          return Failure("malformed answer", fmt::format("a header or chunk line longer than {} bytes", end));
        }
      }
      const std::size_t room = buffer_.size() - end;
      const ssize_t got = recv(fd_, buffer_.data() + end, room, 0);
      if (got < 0) {
        const int error = errno;
        if (error == EINTR) continue;
        if (IsTimeout(error)) return Failure("timed out", fmt::format("no answer within {} ms", timeout_ms_));
        closed_before_answer = received == 0 && IsClosedByPeer(error);
        return Failure("read failed", ErrnoText(error));
      }
      if (got == 0) return FinishAtEof(parser, received, closed_before_answer);
      end += static_cast<std::size_t>(got);
      received += static_cast<std::size_t>(got);
      if (static_cast<std::size_t>(got) == room && buffer_.size() < kGrowOnFullReadLimit)
        buffer_.resize(buffer_.size() * 2);  // a full read: a big answer is arriving, take more per recv
      while (begin < end && !parser.is_done()) {
        boost::beast::error_code ec;
        const std::size_t used = parser.put(boost::asio::buffer(buffer_.data() + begin, end - begin), ec);
        begin += used;
        if (ec == http::error::need_more) break;
        if (ec) return Failure("malformed answer", ec.message());
        if (used == 0) break;
      }
    }
    if (begin != end) {
      return Failure(
          "malformed answer",
          fmt::format("{} bytes after the end of the answer (perf sends one request at a time)", end - begin));
    }
    if (!parser.keep_alive()) Close();
    return Answer(parser);
  }

  // The server closed the connection: the end of an answer delimited by it, or a failure.
  HttpAnswer FinishAtEof(http::response_parser<http::string_body>& parser, std::size_t received,
                         bool& closed_before_answer) {
    if (received == 0) {
      closed_before_answer = true;
      return Failure("read failed", "the server closed the connection without answering");
    }
    boost::beast::error_code ec;
    parser.put_eof(ec);
    if (ec || !parser.is_done()) {
      return Failure("read failed",
                     fmt::format("the server closed the connection after {} bytes of an unfinished answer", received));
    }
    Close();
    return Answer(parser);
  }

  static HttpAnswer Answer(http::response_parser<http::string_body>& parser) {
    HttpAnswer answer;
    answer.status = parser.get().result_int();
    answer.body = std::move(parser.get().body());
    return answer;
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  Endpoint endpoint_;
  int timeout_ms_;
  int fd_ = -1;
  std::string head_;          // reused: the request line and headers of the exchange in flight
  std::vector<char> buffer_;  // reused: bytes read from the socket
};

class HttpInferClient final : public InferClient {
 public:
  HttpInferClient(const std::string& base, const ClientOptions& options)
      : options_(options),
        connection_(SplitBase(base), options.timeout_ms),
        infer_path_("/v2/models/" + options.model + "/infer") {}

  Status CheckReady() override {
    const HttpAnswer answer = connection_.Exchange({"GET", "/v2/health/ready", {}, {}, 0});
    if (!answer.ok()) {
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("cannot reach the server at {}: {}; is it running and listening there?", base(),
                                   answer.Describe()));
    }
    if (answer.status != 200) {
      return MakeError(
          ErrorKind::kUnavailable,
          fmt::format("the server at {} is not ready: GET /v2/health/ready answered {}", base(), answer.status));
    }
    return OkStatus();
  }

  Result<ServedModel> ModelMetadata() override {
    const std::string path = "/v2/models/" + options_.model;
    const HttpAnswer answer = connection_.Exchange({"GET", path, {}, {}, 0});
    if (!answer.ok())
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("cannot reach the server at {}: {}", base(), answer.Describe()));
    if (answer.status != 200) {
      return MakeError(
          answer.status == 404 ? ErrorKind::kNotFound : ErrorKind::kUnavailable,
          fmt::format("GET {}{} answered {}: {}", base(), path, answer.status, ErrorMessageOf(answer.body)));
    }
    return ParseModelMetadata(answer.body);
  }

  Result<EncodedRequest> Encode(const std::vector<NamedTensor>& inputs,
                                const std::vector<std::string>& outputs) override {
    return options_.json_tensors ? EncodeJsonRequest(inputs, outputs) : EncodeBinaryRequest(inputs, outputs);
  }

  InferOutcome Infer(const EncodedRequest& request) override {
    const bool binary = request.header_length > 0;
    const HttpAnswer answer =
        connection_.Exchange({"POST", infer_path_, request.body,
                              binary ? "application/octet-stream" : "application/json", request.header_length});
    if (!answer.ok()) return {answer.error, answer.detail};
    if (answer.status != 200) return {fmt::format("HTTP {}", answer.status), ErrorMessageOf(answer.body)};
    return {};
  }

 private:
  const std::string& base() const { return connection_.endpoint().base; }

  ClientOptions options_;
  HttpConnection connection_;
  std::string infer_path_;
};

}  // namespace

Result<std::string> NormalizeHttpBase(const std::string& url) {
  std::string rest = url;
  if (rest.rfind("http://", 0) == 0)
    rest = rest.substr(7);
  else if (rest.find("://") != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--url '{}': only http:// (or a bare host:port) is supported", url));
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (rest.find('/') != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--url '{}': give host:port without a path", url));
  }
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size() ||
      rest.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--url '{}': expected host:port, e.g. 127.0.0.1:8000", url));
  }
  return "http://" + rest;
}

Result<std::string> HttpGetText(const std::string& url, int timeout_ms) {
  const auto scheme_end = url.find("://");
  const auto path_begin = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const std::string base = path_begin == std::string::npos ? url : url.substr(0, path_begin);
  const std::string path = path_begin == std::string::npos ? "/" : url.substr(path_begin);
  ORTKIT_ASSIGN_OR_RETURN(std::string normalized, NormalizeHttpBase(base));
  HttpConnection connection(SplitBase(normalized), timeout_ms);
  HttpAnswer answer = connection.Exchange({"GET", path, {}, {}, 0});
  if (!answer.ok()) return MakeError(ErrorKind::kUnavailable, fmt::format("GET {}: {}", url, answer.Describe()));
  if (answer.status != 200)
    return MakeError(ErrorKind::kUnavailable, fmt::format("GET {} answered {}", url, answer.status));
  return std::move(answer.body);
}

Result<std::unique_ptr<InferClient>> CreateHttpClient(const ClientOptions& options) {
  ORTKIT_ASSIGN_OR_RETURN(std::string base, NormalizeHttpBase(options.url));
  return std::unique_ptr<InferClient>(std::make_unique<HttpInferClient>(base, options));
}

}  // namespace ortkit::perf
