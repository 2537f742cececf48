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
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
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

/// What a step of a non-blocking exchange came to.
enum class Step { kDone, kWouldBlock, kFailed };

/// One keep-alive HTTP/1.1 connection, opened on the first exchange and reopened after the server closed it.
/// Sends one request at a time (never pipelines). Blocking (Exchange: the socket's timeouts bound each call) or
/// not (Begin, then Progress whenever the socket is ready: HttpInferLoop). Used by one thread at a time;
/// neither copyable nor movable.
class HttpConnection {
 public:
  HttpConnection(Endpoint endpoint, int timeout_ms, bool blocking = true)
      : endpoint_(std::move(endpoint)), timeout_ms_(timeout_ms), blocking_(blocking) {}
  ~HttpConnection() { Close(); }
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  int fd() const { return fd_; }
  /// Counts the sockets opened: a new count is a new socket even where the kernel reused the descriptor's number.
  std::uint64_t sockets_opened() const { return sockets_opened_; }

  /// Sends `request` and reads its answer. A kept-alive connection that turns out closed by the server before
  /// any byte of the answer arrived (its idle timeout) is reopened and the request sent once more; once part of
  /// an answer has arrived nothing is resent. Never throws.
  HttpAnswer Exchange(const HttpRequest& request) {
    HttpAnswer answer = ExchangeOnce(request);
    if (Resendable()) answer = ExchangeOnce(request);
    return answer;
  }

  /// Starts an exchange: connects when closed (a connect bounded by the timeout, even when not blocking), then
  /// goes as far as the socket allows (Progress). `request`'s bytes must outlive the exchange.
  Step Begin(const HttpRequest& request) {
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
      if (!answer_.ok()) return Step::kFailed;
    }
    return Progress();
  }

  /// Sends what is left of the request, then reads its answer. kDone: the answer is complete; kWouldBlock: the
  /// socket has to become writable (wants_write) or readable first (when blocking, a receive timed out);
  /// kFailed: the exchange failed. Either way TakeAnswer says how it ended. Never throws.
  Step Progress() {
    if (wants_write()) {
      const Step sent = Write();
      if (sent != Step::kDone) return sent;
    }
    return Read();
  }

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

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  /// Ends the exchange in flight as timed out and closes the connection.
  void TimeOut() {
    answer_ = received_ > 0 ? Failure("timed out", fmt::format("the answer took over {} ms", timeout_ms_))
                            : Failure("timed out", fmt::format("no answer within {} ms", timeout_ms_));
    Close();
  }

 private:
  HttpAnswer ExchangeOnce(const HttpRequest& request) {
    if (Begin(request) == Step::kWouldBlock) TimeOut();  // blocking: a receive timed out
    return TakeAnswer();
  }

  // Head and body in one gathered write; more calls only when the kernel took part of them.
  Step Write() {
    while (next_part_ < part_count_) {
      msghdr message{};
      message.msg_iov = parts_ + next_part_;
      message.msg_iovlen = part_count_ - next_part_;
      const ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL);
      if (sent < 0) {
        const int error = errno;
        if (error == EINTR) continue;
        if (IsTimeout(error)) {
          if (!blocking_) return Step::kWouldBlock;
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
    return Step::kDone;
  }

  // Reads and parses until the answer is complete, the socket has nothing more for now or the exchange failed.
  Step Read() {
    try {
      return ReadAnswer();
    } catch (const std::exception& e) {  // the parser's allocations: a body the size the server claimed
      return Fail(Failure("read failed", e.what()));
    }
  }

  Step Fail(HttpAnswer failure) {
    answer_ = std::move(failure);
    Close();
    return Step::kFailed;
  }

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
      if (fd_ >= 0) {
        ++sockets_opened_;
        return {};
      }
    }
    return Failure("connection failed", fmt::format("connect to {}: {}", endpoint_.host_header, why));
  }

  // A non-blocking connect bounded by the timeout, then a blocking socket whose sends and receives time out
  // (or, for a non-blocking connection, the socket as it is).
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
      if (Configure(fd)) return fd;
      error = errno;
    }
    why = error == ETIMEDOUT ? fmt::format("not connected within {} ms", timeout_ms_) : ErrnoText(error);
    ::close(fd);
    return -1;
  }

  // Nagle off: the rest of a partial write must not wait for the server's ACK. A blocking socket's sends and
  // receives then block for at most the timeout (and fail with EAGAIN) without a poll each.
  bool Configure(int fd) const {
    const int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) return false;
    if (!blocking_) return true;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) return false;
    if (timeout_ms_ <= 0) return true;
    const timeval timeout{timeout_ms_ / 1000, static_cast<suseconds_t>(timeout_ms_ % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) == 0 &&
           setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) == 0;
  }

  Step ReadAnswer() {
    auto& parser = *parser_;
    if (buffer_.empty()) buffer_.resize(kInitialBufferBytes);
    while (!parser.is_done()) {
      // SO_RCVTIMEO bounds each blocking recv; this bounds a server that trickles its answer.
      if (timeout_ms_ > 0 && received_ > 0 && std::chrono::steady_clock::now() > deadline_) {
        TimeOut();
        return Step::kFailed;
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
        if (IsTimeout(error)) return Step::kWouldBlock;
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
      return Fail(Failure(
          "malformed answer",
          fmt::format("{} bytes after the end of the answer (perf sends one request at a time)", end_ - begin_)));
    }
    if (!parser.keep_alive()) Close();
    answer_ = Answer(parser);
    return Step::kDone;
  }

  // The server closed the connection: the end of an answer delimited by it, or a failure.
  Step FinishAtEof() {
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
    return Step::kDone;
  }

  static HttpAnswer Answer(http::response_parser<http::string_body>& parser) {
    HttpAnswer answer;
    answer.status = parser.get().result_int();
    answer.body = std::move(parser.get().body());
    return answer;
  }

  Endpoint endpoint_;
  int timeout_ms_;
  bool blocking_;
  int fd_ = -1;
  std::uint64_t sockets_opened_ = 0;
  // The exchange in flight.
  std::string head_;  // reused: the request line and headers
  iovec parts_[2] = {};
  std::size_t next_part_ = 0, part_count_ = 0;
  std::optional<http::response_parser<http::string_body>> parser_;
  std::vector<char> buffer_;                        // reused: bytes read from the socket
  std::size_t begin_ = 0, end_ = 0, received_ = 0;  // buffer_[begin_, end_) is read but not yet parsed
  std::chrono::steady_clock::time_point deadline_;
  HttpAnswer answer_;
  bool reused_ = false;  // the connection was open when the exchange began
  bool closed_before_answer_ = false;
};

/// The outcome of an infer answer: its status and, for an error status, the server's message.
InferOutcome InferOutcomeOf(const HttpAnswer& answer) {
  if (!answer.ok()) return {answer.error, answer.detail};
  if (answer.status != 200) return {fmt::format("HTTP {}", answer.status), ErrorMessageOf(answer.body)};
  return {};
}

HttpRequest InferRequestOf(const std::string& path, const EncodedRequest& request) {
  const bool binary = request.header_length > 0;
  return {"POST", path, request.body, binary ? "application/octet-stream" : "application/json", request.header_length};
}

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
    return InferOutcomeOf(connection_.Exchange(InferRequestOf(infer_path_, request)));
  }

 private:
  const std::string& base() const { return connection_.endpoint().base; }

  ClientOptions options_;
  HttpConnection connection_;
  std::string infer_path_;
};

/// The exchanges of one load thread over many connections: each connection is non-blocking and watched by one
/// epoll set, for writing while its request is not all sent and for reading while its answer comes in.
class HttpInferLoop final : public InferLoop {
 public:
  HttpInferLoop(const std::string& base, const ClientOptions& options, std::size_t connections, int epoll)
      : epoll_(epoll), infer_path_("/v2/models/" + options.model + "/infer"), slots_(connections) {
    for (auto& slot : slots_)
      slot.connection = std::make_unique<HttpConnection>(SplitBase(base), options.timeout_ms, false);
    events_.resize(connections);
  }
  ~HttpInferLoop() override { ::close(epoll_); }
  HttpInferLoop(const HttpInferLoop&) = delete;
  HttpInferLoop& operator=(const HttpInferLoop&) = delete;

  void Send(std::size_t connection, const EncodedRequest& request) override {
    Slot& slot = slots_.at(connection);
    slot.request = InferRequestOf(infer_path_, request);
    slot.in_flight = true;
    ++in_flight_;
    Advance(connection, slot.connection->Begin(slot.request));
  }

  void Wait(int wait_ms, const std::function<void(std::size_t, const InferOutcome&)>& answered) override {
    if (finished_.empty() && in_flight_ > 0) {
      const int n = epoll_wait(epoll_, events_.data(), static_cast<int>(events_.size()), WaitMs(wait_ms));
      for (int i = 0; i < n; ++i) {
        const auto connection = static_cast<std::size_t>(events_[static_cast<std::size_t>(i)].data.u64);
        Slot& slot = slots_[connection];
        if (slot.in_flight)
          Advance(connection, slot.connection->Progress());
        else
          slot.connection->Close();  // idle, yet readable: the server closed it (or sent what nobody asked for)
      }
      TimeOutOverdue();
    }
    std::vector<std::pair<std::size_t, InferOutcome>> finished;
    finished.swap(finished_);  // `answered` may Send, which may finish at once
    for (const auto& [connection, outcome] : finished) {
      --in_flight_;
      answered(connection, outcome);
    }
  }

  std::size_t in_flight() const override { return in_flight_; }

 private:
  struct Slot {
    std::unique_ptr<HttpConnection> connection;
    HttpRequest request;
    bool in_flight = false;            // started and not yet reported
    std::uint64_t watched_socket = 0;  // the connection's socket in the epoll set (its sockets_opened), and for what
    std::uint32_t watched_events = 0;
  };

  // Takes the exchange on from `step`: waits for its socket, sends it once more (Resendable), or finishes it.
  void Advance(std::size_t connection, Step step) {
    Slot& slot = slots_[connection];
    HttpConnection& exchange = *slot.connection;
    if (step == Step::kFailed && exchange.Resendable()) step = exchange.Begin(slot.request);
    if (step == Step::kWouldBlock) return Watch(slot, exchange.wants_write() ? EPOLLOUT : EPOLLIN);
    Finish(connection, InferOutcomeOf(exchange.TakeAnswer()));
  }

  void Finish(std::size_t connection, InferOutcome outcome) {
    Slot& slot = slots_[connection];
    slot.in_flight = false;
    finished_.emplace_back(connection, std::move(outcome));
  }

  // Watches the slot's socket for `events`: added to the epoll set once per socket, modified when they change.
  void Watch(Slot& slot, std::uint32_t events) {
    const HttpConnection& connection = *slot.connection;
    const bool added = slot.watched_socket == connection.sockets_opened();
    if (added && events == slot.watched_events) return;
    epoll_event event{};
    event.events = events;
    event.data.u64 = static_cast<std::uint64_t>(&slot - slots_.data());
    if (epoll_ctl(epoll_, added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, connection.fd(), &event) == 0) {
      slot.watched_socket = connection.sockets_opened();
      slot.watched_events = events;
    }
  }

  // No longer than `wait_ms`, nor past the earliest deadline of an exchange in flight.
  int WaitMs(int wait_ms) const {
    const auto now = std::chrono::steady_clock::now();
    for (const auto& slot : slots_) {
      if (!slot.in_flight) continue;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(slot.connection->deadline() - now).count();
      wait_ms = static_cast<int>(std::clamp<std::int64_t>(left, 0, wait_ms));
    }
    return wait_ms;
  }

  void TimeOutOverdue() {
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      Slot& slot = slots_[i];
      if (!slot.in_flight || !slot.connection->Overdue(now)) continue;
      slot.connection->TimeOut();
      Finish(i, InferOutcomeOf(slot.connection->TakeAnswer()));
    }
  }

  int epoll_;
  std::string infer_path_;
  std::vector<Slot> slots_;
  std::vector<epoll_event> events_;
  std::vector<std::pair<std::size_t, InferOutcome>> finished_;
  std::size_t in_flight_ = 0;
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

Result<std::unique_ptr<InferLoop>> CreateHttpLoop(const ClientOptions& options, std::size_t connections) {
  ORTKIT_ASSIGN_OR_RETURN(std::string base, NormalizeHttpBase(options.url));
  const int epoll = epoll_create1(EPOLL_CLOEXEC);
  if (epoll < 0) return MakeError(ErrorKind::kInternal, fmt::format("epoll_create1: {}", ErrnoText(errno)));
  return std::unique_ptr<InferLoop>(std::make_unique<HttpInferLoop>(base, options, connections, epoll));
}

}  // namespace ortkit::perf
