#include "http_fuzz_body.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <onnx/defs/parser.h>

#include "ortkit/runtime/runtime.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/inference_core.h"

namespace ortkit::fuzz {
namespace {

constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, 4] x) => (float[batch, 4] y) {
  y = Relu(x)
}
)";

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "http fuzz body: %s\n", what.c_str());
  std::abort();
}

// The server lives for the whole process (libFuzzer never returns from its loop); it is never
// stopped, so that no input's effects are hidden by a restart.
struct Server {
  std::filesystem::path folder;
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<serve::InferenceCore> core;
  std::unique_ptr<serve::http::HttpServer> http;
};

Server* StartServer() {
  auto* s = new Server;
  static char folder[] = "/tmp/ortkit-http-fuzz-XXXXXX";
  if (mkdtemp(folder) == nullptr) Fail("mkdtemp failed");
  s->folder = folder;
  // The server is never stopped, but its model's folder goes when the process exits normally.
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
  });
  onnx::ModelProto model;
  if (!onnx::OnnxParser::Parse(model, kModel).IsOK()) Fail("the model text does not parse");
  // In a repository with its API on, so that the inputs reach load, unload and the index too.
  const auto path = s->folder / "repository" / "m" / "1" / "model.onnx";
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  auto runtime = Runtime::Create();
  if (!runtime.ok()) Fail(runtime.error().message);
  s->runtime = std::move(runtime).value();
  serve::ModelSource source{"m", path, {}};
  source.config.batching.max_queue_delay_us = 100;
  serve::CoreOptions core_options{1};
  core_options.repository = s->folder / "repository";
  core_options.overrides.max_queue_delay_us = 100;
  core_options.repository_api = true;
  auto core = serve::InferenceCore::Create(*s->runtime, {source}, core_options);
  if (!core.ok()) Fail(core.error().message);
  s->core = std::move(core).value();
  if (Status loaded = s->core->LoadModels(); !loaded.ok()) Fail(loaded.error().message);
  serve::http::HttpOptions options;
  options.port = 0;
  options.max_body_bytes = 1 << 20;
  options.idle_timeout_s = 1;
  auto http = serve::http::HttpServer::Create(*s->core, options);
  if (!http.ok()) Fail(http.error().message);
  s->http = std::move(http).value();
  s->http->Start();
  return s;
}

Server& TheServer() {
  static Server* server = StartServer();
  return *server;
}

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Fail(std::string("socket: ") + std::strerror(errno));
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    // A signal (libFuzzer's timers) may interrupt connect; the connection then completes on its own.
    pollfd ready{fd, POLLOUT, 0};
    int error = errno;
    socklen_t length = sizeof error;
    if (error != EINTR || ::poll(&ready, 1, 10000) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      Fail(std::string("connect: ") + std::strerror(error));
    }
  }
  return fd;
}

// Sends `bytes` and returns everything the server says until it closes.
std::string Exchange(std::string_view bytes) {
  const int fd = Connect(TheServer().http->port());
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) Fail("the server stopped reading for 10 s");
    if (n <= 0) break;  // closed by the server (an early error answer): read what it said
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string received;
  char buffer[16384];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) Fail("the server neither answered nor closed in 10 s");
    if (n <= 0) break;
    received.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return received;
}

}  // namespace

void RunHttpFuzzBody(std::string_view bytes) {
  const std::string answer = Exchange(bytes);
  // Whatever came back is HTTP/1.1 answers, or nothing (a client that went away mid-request).
  if (!answer.empty() && answer.rfind("HTTP/1.1 ", 0) != 0) Fail("the server wrote something that is not HTTP/1.1");
}

bool HttpFuzzServerAlive() {
  return Exchange("GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 200 ", 0) == 0;
}

}  // namespace ortkit::fuzz
