#include "ortkit/serve/http/http_server.h"

#include <charconv>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "ortkit/serve/http/rest_codec.h"

namespace ortkit::serve::http {
namespace {

using nlohmann::json;

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

std::string ErrorBody(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

void SetError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(ErrorBody(message), kJson);
}

void SetError(httplib::Response& res, const Error& error) { SetError(res, HttpStatusFor(error.kind), error.message); }

std::string Version(const httplib::Request& req) { return req.matches.size() > 2 ? std::string(req.matches[2]) : ""; }

}  // namespace

int HttpStatusFor(ErrorKind kind) {
  for (const auto& entry : kStatusTable) {
    if (entry.kind == kind) return entry.status;
  }
  return 500;
}

struct HttpServer::Impl {
  InferenceCore* core = nullptr;
  HttpOptions options;
  httplib::Server server;
  std::unique_ptr<httplib::Server> metrics_server;
  int port = -1;
  int metrics_port = -1;
  std::thread thread;
  std::thread metrics_thread;
  bool stopped = false;

  // Runs `handler` and writes the access record; a thrown exception becomes a 500.
  template <typename Handler>
  httplib::Server::Handler Logged(Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      AccessRecord record;
      record.protocol = "http";
      try {
        handler(req, res, record);
      } catch (const std::exception& e) {
        SetError(res, 500, std::string("internal error: ") + e.what());
      }
      if (!options.access_log) return;
      record.method = req.method;
      record.path = req.path;
      record.peer = req.remote_addr + ":" + std::to_string(req.remote_port);
      record.status = res.status == -1 ? 200 : res.status;  // httplib's default, set after the handler
      record.duration_us =
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
      record.request_bytes = req.body.size();
      record.response_bytes = res.body.size();
      if (res.status >= 400 && record.error.empty()) {
        auto parsed = json::parse(res.body, nullptr, false);
        if (parsed.is_object() && parsed.contains("error")) record.error = parsed["error"].get<std::string>();
      }
      options.access_log(record);
    };
  }

  void Metrics(httplib::Server& target) {
    target.Get("/metrics", Logged([this](const httplib::Request&, httplib::Response& res, AccessRecord&) {
                 res.set_content(core->MetricsText(), "text/plain; version=0.0.4");
               }));
  }

  void Routes() {
    const std::string model = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
    server.Get("/v2", Logged([this](const httplib::Request&, httplib::Response& res, AccessRecord&) {
                 json j = {{"name", "ortkit"},
                           {"version", options.server_version},
                           {"extensions", {"binary_tensor_data", "model_repository", "statistics"}}};
                 res.set_content(j.dump(), kJson);
               }));
    server.Get("/v2/health/live", Logged([this](const httplib::Request&, httplib::Response& res, AccessRecord&) {
                 res.status = core->IsLive() ? 200 : 503;
               }));
    server.Get("/v2/health/ready", Logged([this](const httplib::Request&, httplib::Response& res, AccessRecord&) {
                 res.status = core->IsReady() ? 200 : 503;
               }));
    server.Get(model, Logged([this](const httplib::Request& req, httplib::Response& res, AccessRecord& record) {
                 record.model = req.matches[1];
                 auto metadata = core->Metadata(req.matches[1], Version(req));
                 if (!metadata.ok()) return SetError(res, metadata.error());
                 res.set_content(ModelMetadataToJson(*metadata).dump(-1, ' ', false, json::error_handler_t::replace),
                                 kJson);
               }));
    server.Get(model + "/ready",
               Logged([this](const httplib::Request& req, httplib::Response& res, AccessRecord& record) {
                 record.model = req.matches[1];
                 auto ready = core->IsModelReady(req.matches[1], Version(req));
                 if (!ready.ok()) return SetError(res, ready.error());
                 res.status = *ready ? 200 : 503;
               }));
    server.Get(model + "/config",
               Logged([this](const httplib::Request& req, httplib::Response& res, AccessRecord& record) {
                 record.model = req.matches[1];
                 auto config = core->Config(req.matches[1]);
                 if (!config.ok()) return SetError(res, config.error());
                 json j = json::parse(ModelConfigToJson(*config));
                 j["max_batch_size"] = config->batching.EffectiveMaxBatchSize();  // Triton's key, read by its clients
                 res.set_content(j.dump(), kJson);
               }));
    server.Post("/v2/repository/index", Logged([this](const httplib::Request&, httplib::Response& res, AccessRecord&) {
                  json list = json::array();
                  for (const auto& name : core->ModelNames()) {
                    auto ready = core->IsModelReady(name, "");
                    list.push_back(
                        {{"name", name}, {"version", "1"}, {"state", ready.ok() && *ready ? "READY" : "UNAVAILABLE"}});
                  }
                  res.set_content(list.dump(), kJson);
                }));
    server.Post(model + "/infer", Logged([this](const httplib::Request& req, httplib::Response& res,
                                                AccessRecord& record) { Infer(req, res, record); }));
    Metrics(server);
    server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 413)
        SetError(res, 413, "the request body is larger than the server's limit");
      else if (res.status == 404)
        SetError(res, 404, fmt::format("no such endpoint: {} {}", req.method, req.path));
      else
        SetError(res, res.status, fmt::format("HTTP status {}", res.status));
    });
  }

  void Infer(const httplib::Request& req, httplib::Response& res, AccessRecord& record) {
    record.model = req.matches[1];
    std::optional<std::size_t> header_length;
    if (req.has_header(kHeaderLength)) {
      const std::string text = req.get_header_value(kHeaderLength);
      std::size_t value = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size()) {
        return SetError(res, 400, fmt::format("{} is not a number: '{}'", kHeaderLength, text));
      }
      header_length = value;
    }
    OutputEncoding encoding;
    auto request = DecodeInferRequest(req.body, header_length, &encoding);
    if (!request.ok()) return SetError(res, request.error());
    request->model_name = req.matches[1];
    request->model_version = Version(req);
    record.request_id = request->id;
    auto response = core->InferAndWait(std::move(request).value());
    if (!response.ok()) return SetError(res, response.error());
    EncodedResponse encoded = EncodeInferResponse(*response, encoding);
    if (encoded.header_length) {
      res.set_header(kHeaderLength, std::to_string(*encoded.header_length));
      res.set_content(std::move(encoded.body), "application/octet-stream");
    } else {
      res.set_content(std::move(encoded.body), kJson);
    }
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Create(InferenceCore& core, const HttpOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->core = &core;
  impl->options = options;
  auto configure = [&](httplib::Server& server, int threads) {
    server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
    server.set_tcp_nodelay(true);
    server.set_keep_alive_max_count(1u << 30);
    server.set_payload_max_length(options.max_body_bytes);
  };
  configure(impl->server, std::max(1, options.threads));
  impl->Routes();
  auto bind = [&](httplib::Server& server, int port) -> Result<int> {
    const int bound =
        port == 0 ? server.bind_to_any_port(options.host) : (server.bind_to_port(options.host, port) ? port : -1);
    if (bound <= 0) {
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("cannot listen on {}:{} (address in use, or not an address of this machine)",
                                   options.host, port));
    }
    return bound;
  };
  ORTKIT_ASSIGN_OR_RETURN(impl->port, bind(impl->server, options.port));
  if (options.metrics_port >= 0) {
    impl->metrics_server = std::make_unique<httplib::Server>();
    configure(*impl->metrics_server, 4);
    impl->Metrics(*impl->metrics_server);
    ORTKIT_ASSIGN_OR_RETURN(impl->metrics_port, bind(*impl->metrics_server, options.metrics_port));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port; }
int HttpServer::metrics_port() const { return impl_->metrics_port; }

void HttpServer::Start() {
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  if (impl_->metrics_server)
    impl_->metrics_thread = std::thread([this] { impl_->metrics_server->listen_after_bind(); });
}

void HttpServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  // stop() closes the listening socket; listen_after_bind() returns once the worker threads
  // have answered what they were serving.
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->metrics_server) impl_->metrics_server->stop();
  if (impl_->metrics_thread.joinable()) impl_->metrics_thread.join();
}

}  // namespace ortkit::serve::http
