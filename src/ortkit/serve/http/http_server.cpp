#include "ortkit/serve/http/http_server.h"

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

#include "ortkit/serve/http/http_connection.h"
#include "ortkit/serve/http/http_routes.h"
#include "ortkit/serve/option_range.h"
#include "ortkit/serve/run_when_idle.h"
#include "ortkit/serve/thread_name.h"

namespace ortkit::serve::http {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

}  // namespace

// The listening sockets, the connections and the event loop, on one I/O thread; the routes
// answer what the connections read.
struct HttpServer::Impl final : ConnectionOwner {
  // A listening socket; the main one stops accepting at max_connections.
  struct Listener {
    explicit Listener(asio::io_context& io) : acceptor(io) {}
    tcp::acceptor acceptor;
    bool metrics_only = false;
    bool paused = false;  // at the connection limit: clients wait in the backlog
  };

  Impl(InferenceCore& core, const HttpOptions& options)
      : core(&core), options_(options), routes_(core, options, [this] { run.Queued(); }) {
    options_.max_connections = std::max(1, options.max_connections);
    run = RunWhenIdle(std::chrono::microseconds(options.busy_poll_us));
  }

  InferenceCore* core = nullptr;
  HttpOptions options_;
  Routes routes_;
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
  bool draining_ = false;
  RunWhenIdle run{std::chrono::microseconds(0)};  // when the queued requests run
  std::thread::id io_thread_id;                   // the thread that runs Loop()

  // ConnectionOwner
  const HttpOptions& options() const override { return options_; }
  Routes& routes() override { return routes_; }
  bool draining() const override { return draining_; }
  bool OnIoThread() const override { return std::this_thread::get_id() == io_thread_id; }
  ByteBudget& inflight() override { return core->inflight(); }
  void Forget(Connection* connection) override;

  Status Listen(Listener& listener, int port);
  void Accept(Listener& listener);
  void ResumeAccepting();
  void Sweep();
  void Drain();
  void Turn();  // one pass of the event loop
  void Loop();
};

Status HttpServer::Impl::Listen(Listener& listener, int port) {
  const char* what = listener.metrics_only ? "metrics" : "HTTP";
  error_code ec;
  const auto address = asio::ip::make_address(options_.host, ec);
  auto refuse = [&] {
    std::string why = ec.message();
    if (ec == asio::error::address_in_use) why = fmt::format("port {} is in use (another process listens on it)", port);
    if (ec == boost::system::errc::address_not_available)
      why = fmt::format("'{}' is not an address of this machine", options_.host);
    return MakeError(ErrorKind::kUnavailable,
                     fmt::format("cannot listen for {} on {}:{}: {}", what, options_.host, port, why));
  };
  if (ec) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("cannot listen for {} on '{}': not an IP address (give one, such as 127.0.0.1, or "
                                 "0.0.0.0 for every interface)",
                                 what, options_.host));
  }
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
    if (draining_ || ec == asio::error::operation_aborted) return;
    if (!ec) {
      socket.set_option(tcp::no_delay(true), ec);
      auto c = std::make_shared<Connection>(*this, std::move(socket), listener.metrics_only);
      connections.emplace(c.get(), c);
      c->Start();
    }
    // Out of descriptors or memory (ec set): the sweep tries again.
    if (ec || (!listener.metrics_only && connections.size() >= static_cast<std::size_t>(options_.max_connections))) {
      listener.paused = true;
      return;
    }
    Accept(listener);
  });
}

void HttpServer::Impl::Forget(Connection* connection) {
  connections.erase(connection);
  if (!draining_) return ResumeAccepting();
  if (connections.empty()) {
    // Drained: once the last handlers ran, io.run() returns.
    sweep.cancel();
    work.reset();
  }
}

void HttpServer::Impl::ResumeAccepting() {
  if (draining_) return;
  for (Listener* listener : {&main, metrics ? &*metrics : nullptr}) {
    if (listener == nullptr || !listener->paused) continue;
    if (!listener->metrics_only && connections.size() >= static_cast<std::size_t>(options_.max_connections)) continue;
    listener->paused = false;
    Accept(*listener);
  }
}

void HttpServer::Impl::Sweep() {
  sweep.expires_after(std::chrono::seconds(1));
  // Also while draining: a client that never reads its last answer or never closes must not
  // hold the server up.
  sweep.async_wait([this](error_code ec) {
    if (ec || (draining_ && connections.empty())) return;
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
  draining_ = true;
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

Status HttpOptions::Validate() const {
  // Checked before any cast to a 16-bit port, which would wrap 65536 to 0 (a random port) and -1 to 65535.
  if (port < 0 || port > 65535) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("HTTP port {} is not a port: give 0 to 65535 (0: a free one)", port));
  }
  if (metrics_port < -1 || metrics_port > 65535) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("metrics port {} is not a port: give 0 to 65535 (0: a free one) or -1 (/metrics "
                                 "on the HTTP port only)",
                                 metrics_port));
  }
  ORTKIT_RETURN_IF_ERROR(CheckOptionRange("max_body_bytes", "--max-body-mb",
                                          static_cast<std::int64_t>(std::min<std::size_t>(max_body_bytes, INT64_MAX)),
                                          1, std::int64_t{2047} << 20, "bytes"));
  ORTKIT_RETURN_IF_ERROR(CheckOptionRange("max_connections", "--http-max-connections", max_connections, 1, 1 << 20));
  ORTKIT_RETURN_IF_ERROR(CheckOptionRange("idle_timeout_s", "--http-idle-timeout-s", idle_timeout_s, 1, 86400));
  return CheckOptionRange("busy_poll_us", "--http-busy-poll-us", busy_poll_us, 0, 1'000'000);
}

Result<std::unique_ptr<HttpServer>> HttpServer::Create(InferenceCore& core, const HttpOptions& options) {
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  auto impl = std::make_unique<Impl>(core, options);
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
