#include "ortkit/serve/http/http_server.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "ortkit/serve/http/rest_codec.h"
#include "ortkit/serve/run_when_idle.h"
#include "ortkit/serve/thread_name.h"

namespace ortkit::serve::http {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using boost::system::error_code;
using nlohmann::json;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

struct StatusOf {
  ErrorKind kind;
  int status;
};
constexpr StatusOf kStatusTable[] = {
    {ErrorKind::kInvalidArgument, 400}, {ErrorKind::kNotFound, 404},
    {ErrorKind::kUnavailable, 503},     {ErrorKind::kIo, 500},
    {ErrorKind::kInvalidModel, 500},    {ErrorKind::kRuntime, 500},
    {ErrorKind::kInternal, 500},
};

constexpr char kJson[] = "application/json";
constexpr char kHeaderLength[] = "Inference-Header-Content-Length";
constexpr std::uint32_t kHeaderLimit = 64 << 10;
constexpr std::size_t kReadBuffer = 16 << 10;  // one recv takes a whole small request
// What the read buffer may hold that the parser has not taken yet: a header, or a chunked body's
// trailer, which Beast buffers whole before parsing it and bounds by nothing else. Body bytes leave
// the buffer as they are parsed, so only these parts ever fill it.
constexpr std::size_t kReadBufferLimit = 2 * kHeaderLimit;
constexpr auto kLingerTimeout = std::chrono::seconds(2);  // reading what a closed-down client still sends

enum class Endpoint {
  kServer,
  kLive,
  kReady,
  kRepositoryIndex,
  kMetrics,
  kModel,
  kModelReady,
  kModelConfig,
  kInfer,
  kUnknown
};

struct Route {
  std::string_view path;  // fixed paths; for model paths, the part after /v2/models/NAME[/versions/V]
  Endpoint endpoint;
  bhttp::verb method;
};
constexpr Route kFixedRoutes[] = {
    {"/v2", Endpoint::kServer, bhttp::verb::get},
    {"/v2/health/live", Endpoint::kLive, bhttp::verb::get},
    {"/v2/health/ready", Endpoint::kReady, bhttp::verb::get},
    {"/v2/repository/index", Endpoint::kRepositoryIndex, bhttp::verb::post},
    {"/metrics", Endpoint::kMetrics, bhttp::verb::get},
};
constexpr Route kModelRoutes[] = {
    {"", Endpoint::kModel, bhttp::verb::get},
    {"/ready", Endpoint::kModelReady, bhttp::verb::get},
    {"/config", Endpoint::kModelConfig, bhttp::verb::get},
    {"/infer", Endpoint::kInfer, bhttp::verb::post},
};

struct Target {
  Endpoint endpoint = Endpoint::kUnknown;
  bhttp::verb method = bhttp::verb::unknown;  // the one the endpoint answers
  std::string model;
  std::string version;
};

// Splits the next path segment off `rest` ("NAME/..." -> "NAME"); empty when there is none.
std::string_view NextSegment(std::string_view* rest) {
  const std::size_t end = std::min(rest->find('/'), rest->size());
  std::string_view segment = rest->substr(0, end);
  rest->remove_prefix(end);
  return segment;
}

Target ParseTarget(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  for (const Route& r : kFixedRoutes) {
    if (path == r.path) return Target{r.endpoint, r.method, "", ""};
  }
  constexpr std::string_view kModels = "/v2/models/";
  constexpr std::string_view kVersions = "/versions/";
  if (path.substr(0, kModels.size()) != kModels) return {};
  std::string_view rest = path.substr(kModels.size());
  Target parsed;
  parsed.model = NextSegment(&rest);
  if (parsed.model.empty()) return {};
  if (rest.substr(0, kVersions.size()) == kVersions) {
    rest.remove_prefix(kVersions.size());
    parsed.version = NextSegment(&rest);
    if (parsed.version.empty()) return {};
  }
  for (const Route& r : kModelRoutes) {
    if (rest == r.path) {
      parsed.endpoint = r.endpoint;
      parsed.method = r.method;
      return parsed;
    }
  }
  return {};
}

std::string ErrorBody(std::string_view message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

Response MakeResponse(int status, std::string body = {}, const char* content_type = kJson) {
  Response res{static_cast<bhttp::status>(status), 11};
  if (!body.empty()) res.set(bhttp::field::content_type, content_type);
  res.body() = std::move(body);
  return res;
}

// The answer to an infer request, built on whichever thread finished it: a 200 is written from
// its parts (JSON header, then the binary outputs straight from the response's tensors); an
// error is a plain response.
struct InferAnswer {
  InferResponse response;  // owns the bytes `encoded.binary` points into
  EncodedResponse encoded;
  std::optional<Response> error;
  std::string error_message;  // for the access log

  InferAnswer(Result<InferResponse> result, const OutputEncoding& encoding) {
    if (!result.ok()) {
      error_message = result.error().message;
      error = MakeResponse(HttpStatusFor(result.error().kind), ErrorBody(error_message));
      return;
    }
    try {
      response = std::move(result).value();
      encoded = EncodeInferResponse(response, encoding);
    } catch (const std::exception& e) {
      error_message = std::string("internal error encoding the response: ") + e.what();
      error = MakeResponse(500, ErrorBody(error_message));
    }
  }
};

// Beast's request parser, with two throws of Beast's own turned into errors: a field is stored
// only in the header (v2 defines no trailer fields, so a chunked body's trailer is parsed and
// dropped), and a field too long for Beast's storage is a header_limit error rather than a
// std::length_error thrown through the event loop.
class RequestParser : public bhttp::request_parser<bhttp::string_body> {
 private:
  void on_field_impl(bhttp::field name, boost::beast::string_view name_string, boost::beast::string_view value,
                     error_code& ec) override {
    if (is_header_done()) return;
    try {
      get().insert(name, name_string, value);
    } catch (const std::length_error&) {
      ec = bhttp::error::header_limit;
    }
  }
};

bool ClientWentAway(const error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor;
}

}  // namespace

int HttpStatusFor(ErrorKind kind) {
  for (const auto& entry : kStatusTable) {
    if (entry.kind == kind) return entry.status;
  }
  return 500;
}

struct HttpServer::Impl {
  class Connection;

  // A listening socket; the main one stops accepting at max_connections.
  struct Listener {
    explicit Listener(asio::io_context& io) : acceptor(io) {}
    tcp::acceptor acceptor;
    bool metrics_only = false;
    bool paused = false;  // at the connection limit: clients wait in the backlog
  };

  InferenceCore* core = nullptr;
  HttpOptions options;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  Listener main{io};
  std::optional<Listener> metrics;
  asio::steady_timer sweep{io};
  std::thread thread;
  int port = -1;
  int metrics_port = -1;
  bool stopped = false;  // Stop()'s caller only

  // The I/O thread's own state.
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections;
  bool draining = false;
  RunWhenIdle run{std::chrono::microseconds(0)};  // when the queued requests run
  std::thread::id io_thread_id;                   // the thread that runs Loop()

  Status Listen(Listener& listener, int port);
  void Accept(Listener& listener);
  void Forget(Connection* connection);
  void ResumeAccepting();
  void Sweep();
  void Drain();
  void Handle(const std::shared_ptr<Connection>& c, Request& req);
  void Infer(const std::shared_ptr<Connection>& c, Request& req, const Target& target);
  void RunQueuedSoon();
  void Turn();  // one pass of the event loop
  void Loop();
};

// One client connection, on the I/O thread: reads a request, has it answered, writes the
// answer, and reads the next while the client keeps the connection alive.
class HttpServer::Impl::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Impl& server, tcp::socket socket, bool metrics_only)
      : server_(server), socket_(std::move(socket)), metrics_only_(metrics_only), buffer_(kReadBufferLimit) {
    // Beast reads at most the buffer's free room (512 bytes at first): a request read in pieces
    // completes one event-loop pass later and misses the batch that its neighbours make.
    buffer_.reserve(kReadBuffer);
  }

  bool metrics_only() const { return metrics_only_; }
  AccessRecord& record() { return record_; }

  void Start() {
    if (server_.options.access_log) {
      error_code ec;
      const tcp::endpoint peer = socket_.remote_endpoint(ec);
      if (!ec) peer_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
    }
    Read();
  }

  /// Whether the sweep should close it: nothing owed and no progress for the idle timeout, or
  /// a closing client that does not finish.
  bool Stale(Clock::time_point now) const {
    if (closing_) return now - active_ > kLingerTimeout;
    if (answering_ && !writing_) return false;  // the core owes the answer; its timeout bounds the wait
    return now - active_ > std::chrono::seconds(server_.options.idle_timeout_s);
  }

  /// While draining: a connection in the middle of receiving a request finishes it.
  bool MidRequest() {
    error_code ec;
    return answering_ || buffer_.size() > 0 || (parser_ && parser_->got_some()) || socket_.available(ec) > 0;
  }

  /// Answers the current request with `res` (which must not be called twice per request).
  void Write(Response res) {
    if (closed_) return;
    response_ = std::move(res);
    response_.keep_alive(keep_alive_ && !server_.draining);
    response_.prepare_payload();
    Sent(response_.result_int(), response_.body().size(), response_.keep_alive());
    bhttp::async_write(socket_, response_,
                       [self = shared_from_this()](error_code ec, std::size_t) { self->OnWritten(ec); });
  }

  /// Answers the current request with a 200 carrying `answer` in one gathered write: the head,
  /// the JSON, then the binary outputs from the response's own tensors (Beast's serializer and a
  /// copy of every output into a body string cost 3 us per bert-tiny answer).
  void WriteAnswer(const std::shared_ptr<InferAnswer>& answer) {
    if (closed_) return;
    const EncodedResponse& encoded = answer->encoded;
    std::size_t length = encoded.json.size();
    for (std::string_view part : encoded.binary) length += part.size();
    const bool keep_alive = keep_alive_ && !server_.draining;
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

  void Fail(int status, std::string message) {
    Response res = MakeResponse(status, ErrorBody(message));
    record_.error = std::move(message);
    Write(std::move(res));
  }

  /// Ends the connection: at once, or (`graceful`) after telling the client and reading what
  /// it still sends, so that the kernel does not reset the connection under the last answer.
  void Close(bool graceful) {
    if (closed_) return;
    error_code ec;
    if (graceful && !closing_) {
      closing_ = true;
      active_ = Clock::now();
      socket_.shutdown(tcp::socket::shutdown_send, ec);
      if (!ec) return Discard();
    }
    closed_ = true;
    socket_.close(ec);
    server_.Forget(this);
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(server_.options.max_body_bytes);
    parser_->header_limit(kHeaderLimit);
    record_ = AccessRecord{};
    active_ = Clock::now();
    bhttp::async_read_header(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (!self->closed_) ec ? self->OnReadError(ec) : self->OnHeader();
    });
  }

  void OnHeader() {
    if (parser_->is_done()) return OnRequest();
    // A small request's body arrives with its header: parsed here, it is handled at once rather than
    // when a second read operation completes through the event loop.
    const auto length = parser_->content_length();
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

  void ReadBody() {
    active_ = Clock::now();
    bhttp::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (!self->closed_) ec ? self->OnReadError(ec) : self->OnRequest();
    });
  }

  void OnReadError(const error_code& ec) {
    if (ClientWentAway(ec)) return Close(false);
    // The stream is out of step with the protocol: answer once, then close.
    keep_alive_ = false;
    answering_ = true;
    received_ = Clock::now();
    if (ec == bhttp::error::body_limit) {
      return Fail(413, fmt::format("the request body is larger than the server's limit of {} bytes",
                                   server_.options.max_body_bytes));
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

  void OnRequest() {
    answering_ = true;
    received_ = Clock::now();
    Request& req = parser_->get();
    keep_alive_ = req.keep_alive();
    if (server_.options.access_log) {
      record_.protocol = "http";
      record_.method = std::string(req.method_string());
      record_.path = std::string(req.target());
      record_.peer = peer_;
      record_.request_bytes = req.body().size();
    }
    try {
      server_.Handle(shared_from_this(), req);
    } catch (const std::exception& e) {
      if (answering_ && !writing_) Fail(500, std::string("internal error: ") + e.what());
    }
  }

  /// Notes what is being written, for OnWritten and the access log.
  void Sent(unsigned status, std::size_t body_bytes, bool keep_alive) {
    writing_ = true;
    active_ = Clock::now();
    record_.status = static_cast<int>(status);
    record_.response_bytes = body_bytes;
    sent_keep_alive_ = keep_alive;
  }

  void OnWritten(const error_code& ec) {
    writing_ = false;
    answering_ = false;
    if (server_.options.access_log) {
      record_.duration_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - received_).count();
      server_.options.access_log(record_);
    }
    if (ec) return Close(false);
    if (!sent_keep_alive_ || server_.draining) return Close(true);
    response_ = {};
    Read();
  }

  void Discard() {
    buffer_.clear();
    socket_.async_read_some(buffer_.prepare(16 << 10), [self = shared_from_this()](error_code ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->Close(false);
      self->Discard();
    });
  }

  Impl& server_;
  tcp::socket socket_;
  const bool metrics_only_;
  std::string peer_;  // for the access log
  boost::beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  Response response_;  // being written
  std::string head_;   // the status line and fields of an answer written by WriteAnswer
  bool sent_keep_alive_ = true;
  AccessRecord record_;
  Clock::time_point active_;    // the last progress
  Clock::time_point received_;  // when the request being answered was read
  bool keep_alive_ = true;
  bool answering_ = false;  // a request is read and its answer not written yet
  bool writing_ = false;
  bool closing_ = false;  // shut down for sending, reading what the client still sends
  bool closed_ = false;
};

Status HttpServer::Impl::Listen(Listener& listener, int port) {
  error_code ec;
  const auto address = asio::ip::make_address(options.host, ec);
  auto refuse = [&] {
    return MakeError(ErrorKind::kUnavailable,
                     fmt::format("cannot listen on {}:{} ({})", options.host, port,
                                 ec ? ec.message() : "address in use, or not an address of this machine"));
  };
  if (ec) return refuse();
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  listener.acceptor.open(endpoint.protocol(), ec);
  if (!ec) listener.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) listener.acceptor.bind(endpoint, ec);
  // A burst of clients connecting at once must not overflow the backlog (the kernel caps it at somaxconn).
  if (!ec) listener.acceptor.listen(4096, ec);
  if (ec) return refuse();
  return OkStatus();
}

void HttpServer::Impl::Accept(Listener& listener) {
  listener.acceptor.async_accept([this, &listener](error_code ec, tcp::socket socket) {
    if (draining || ec == asio::error::operation_aborted) return;
    if (!ec) {
      socket.set_option(tcp::no_delay(true), ec);
      auto c = std::make_shared<Connection>(*this, std::move(socket), listener.metrics_only);
      connections.emplace(c.get(), c);
      c->Start();
    }
    // Out of descriptors or memory (ec set): the sweep tries again.
    if (ec || (!listener.metrics_only && connections.size() >= static_cast<std::size_t>(options.max_connections))) {
      listener.paused = true;
      return;
    }
    Accept(listener);
  });
}

void HttpServer::Impl::Forget(Connection* connection) {
  connections.erase(connection);
  if (!draining) return ResumeAccepting();
  if (connections.empty()) {
    // Drained: once the last handlers ran, io.run() returns.
    sweep.cancel();
    work.reset();
  }
}

void HttpServer::Impl::ResumeAccepting() {
  if (draining) return;
  for (Listener* listener : {&main, metrics ? &*metrics : nullptr}) {
    if (listener == nullptr || !listener->paused) continue;
    if (!listener->metrics_only && connections.size() >= static_cast<std::size_t>(options.max_connections)) continue;
    listener->paused = false;
    Accept(*listener);
  }
}

void HttpServer::Impl::Sweep() {
  sweep.expires_after(std::chrono::seconds(1));
  // Also while draining: a client that never reads its last answer or never closes must not
  // hold the server up.
  sweep.async_wait([this](error_code ec) {
    if (ec || (draining && connections.empty())) return;
    const auto now = Clock::now();
    std::vector<std::shared_ptr<Connection>> stale;
    for (auto& [raw, c] : connections) {
      if (c->Stale(now)) stale.push_back(c);
    }
    for (auto& c : stale) c->Close(false);
    ResumeAccepting();
    Sweep();
  });
}

void HttpServer::Impl::Drain() {
  draining = true;
  error_code ec;
  main.acceptor.close(ec);
  if (metrics) metrics->acceptor.close(ec);
  std::vector<std::shared_ptr<Connection>> all;
  for (auto& [raw, c] : connections) all.push_back(c);
  // Requests already received (or arriving) are answered, with Connection: close.
  for (auto& c : all) {
    if (!c->MidRequest()) c->Close(false);
  }
  if (connections.empty()) {
    sweep.cancel();
    work.reset();
  }
}

void HttpServer::Impl::RunQueuedSoon() { run.Queued(); }

void HttpServer::Impl::Handle(const std::shared_ptr<Connection>& c, Request& req) {
  Target target = ParseTarget(req.target());
  c->record().model = target.model;
  if (target.endpoint == Endpoint::kUnknown || (c->metrics_only() && target.endpoint != Endpoint::kMetrics)) {
    return c->Fail(404,
                   fmt::format("no such endpoint: {} {}", std::string(req.method_string()), std::string(req.target())));
  }
  if (req.method() != target.method) {
    return c->Fail(405, fmt::format("{} takes {}, not {}", std::string(req.target()),
                                    std::string(bhttp::to_string(target.method)), std::string(req.method_string())));
  }
  auto fail = [&](const Error& error) { c->Fail(HttpStatusFor(error.kind), error.message); };
  switch (target.endpoint) {
    case Endpoint::kServer: {
      json j = {{"name", "ortkit"},
                {"version", options.server_version},
                {"extensions", {"binary_tensor_data", "model_repository", "statistics"}}};
      return c->Write(MakeResponse(200, j.dump()));
    }
    case Endpoint::kLive: return c->Write(MakeResponse(core->IsLive() ? 200 : 503));
    case Endpoint::kReady: return c->Write(MakeResponse(core->IsReady() ? 200 : 503));
    case Endpoint::kMetrics: return c->Write(MakeResponse(200, core->MetricsText(), "text/plain; version=0.0.4"));
    case Endpoint::kRepositoryIndex: {
      json list = json::array();
      for (const auto& name : core->ModelNames()) {
        auto ready = core->IsModelReady(name, "");
        list.push_back({{"name", name}, {"version", "1"}, {"state", ready.ok() && *ready ? "READY" : "UNAVAILABLE"}});
      }
      return c->Write(MakeResponse(200, list.dump()));
    }
    case Endpoint::kModel: {
      auto metadata = core->Metadata(target.model, target.version);
      if (!metadata.ok()) return fail(metadata.error());
      return c->Write(
          MakeResponse(200, ModelMetadataToJson(*metadata).dump(-1, ' ', false, json::error_handler_t::replace)));
    }
    case Endpoint::kModelReady: {
      auto ready = core->IsModelReady(target.model, target.version);
      if (!ready.ok()) return fail(ready.error());
      return c->Write(MakeResponse(*ready ? 200 : 503));
    }
    case Endpoint::kModelConfig: {
      auto config = core->Config(target.model);
      if (!config.ok()) return fail(config.error());
      json j = json::parse(ModelConfigToJson(*config));
      j["max_batch_size"] = config->batching.EffectiveMaxBatchSize();  // Triton's key, read by its clients
      return c->Write(MakeResponse(200, j.dump()));
    }
    case Endpoint::kInfer: return Infer(c, req, target);
    case Endpoint::kUnknown: break;
  }
}

void HttpServer::Impl::Infer(const std::shared_ptr<Connection>& c, Request& req, const Target& target) {
  std::optional<std::size_t> header_length;
  if (req.count(kHeaderLength) > 1) {
    return c->Fail(400, fmt::format("{} is given {} times: give it once", kHeaderLength, req.count(kHeaderLength)));
  }
  if (auto field = req.find(kHeaderLength); field != req.end()) {
    const std::string_view text = field->value();
    std::size_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return c->Fail(400, fmt::format("{} is not a number: '{}'", kHeaderLength, text));
    }
    header_length = value;
  }
  OutputEncoding encoding;
  auto request = DecodeInferRequest(req.body(), header_length, &encoding);
  if (!request.ok()) return c->Fail(HttpStatusFor(request.error().kind), request.error().message);
  request->model_name = target.model;
  request->model_version = target.version;
  c->record().request_id = request->id;
  req.body().clear();  // the inputs are decoded: free the bytes while the request waits
  auto done = [this, c, encoding = std::move(encoding)](Result<InferResponse> response) {
    auto write = [c, answer = std::make_shared<InferAnswer>(std::move(response), encoding)] {
      if (!answer->error) return c->WriteAnswer(answer);
      c->record().error = std::move(answer->error_message);
      c->Write(std::move(*answer->error));
    };
    // On the I/O thread (it ran the batch) this writes at once; a worker hands it over.
    if (std::this_thread::get_id() == io_thread_id) return write();
    asio::post(io, std::move(write));
  };
  if (!options.run_on_io_thread) return core->Infer(std::move(request).value(), std::move(done));
  core->InferLater(std::move(request).value(), std::move(done));
  RunQueuedSoon();
}

void HttpServer::Impl::Turn() {
  if (run.Overdue() || io.poll() == 0) {  // nothing else ready: run what is queued, poll or sleep
    if (run.wanted()) {
      run.Running();
      core->RunQueued();  // writes the answers it completes at once
      run.Handled();
      return;
    }
    if (run.Poll() || io.run_one() == 0) return;
  }
  run.Handled();
}

void HttpServer::Impl::Loop() {
  while (!io.stopped()) {
    // The connections turn their own errors into answers; this keeps one unforeseen throw from a
    // handler (the io_context may be run again after one) from ending the server. The connection
    // whose handler threw has no operation left and is closed by the sweep.
    try {
      Turn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ortkit serve: HTTP: a connection's handler failed and the connection is dropped: %s\n",
                   e.what());
    }
  }
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Create(InferenceCore& core, const HttpOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->core = &core;
  impl->options = options;
  impl->options.max_connections = std::max(1, options.max_connections);
  impl->run = RunWhenIdle(std::chrono::microseconds(options.busy_poll_us));
  ORTKIT_RETURN_IF_ERROR(impl->Listen(impl->main, options.port));
  impl->port = impl->main.acceptor.local_endpoint().port();
  if (options.metrics_port >= 0) {
    impl->metrics.emplace(impl->io);
    impl->metrics->metrics_only = true;
    ORTKIT_RETURN_IF_ERROR(impl->Listen(*impl->metrics, options.metrics_port));
    impl->metrics_port = impl->metrics->acceptor.local_endpoint().port();
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port; }
int HttpServer::metrics_port() const { return impl_->metrics_port; }

void HttpServer::Start() {
  impl_->Accept(impl_->main);
  if (impl_->metrics) impl_->Accept(*impl_->metrics);
  impl_->Sweep();
  impl_->thread = std::thread([this] {
    NameThisThread("ortkit-http");
    impl_->io_thread_id = std::this_thread::get_id();
    impl_->Loop();
  });
}

void HttpServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (!impl_->thread.joinable()) return;
  asio::post(impl_->io, [this] { impl_->Drain(); });
  impl_->thread.join();
}

}  // namespace ortkit::serve::http
