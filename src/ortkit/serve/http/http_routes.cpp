#include "ortkit/serve/http/http_routes.h"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

namespace ortkit::serve::http {
namespace {

namespace bhttp = boost::beast::http;
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

enum class Endpoint {
  kServer,
  kLive,
  kReady,
  kRepositoryIndex,
  kRepositoryLoad,
  kRepositoryUnload,
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
  constexpr std::string_view kRepositoryModels = "/v2/repository/models/";
  if (path.substr(0, kRepositoryModels.size()) == kRepositoryModels) {
    std::string_view rest = path.substr(kRepositoryModels.size());
    Target parsed;
    parsed.model = NextSegment(&rest);
    parsed.method = bhttp::verb::post;
    if (parsed.model.empty()) return {};
    if (rest == "/load") parsed.endpoint = Endpoint::kRepositoryLoad;
    if (rest == "/unload") parsed.endpoint = Endpoint::kRepositoryUnload;
    return parsed;
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

// A repository request's body: empty, or a JSON object (Triton's {"ready": true} for the index,
// {"parameters": {...}} for load and unload).
Result<json> RepositoryBody(const std::string& body) {
  if (body.empty()) return json::object();
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return MakeError(ErrorKind::kInvalidArgument, "the request body is not a JSON object");
  }
  return parsed;
}

Result<std::string> RepositoryIndexJson(const InferenceCore& core, const std::string& body) {
  ORTKIT_ASSIGN_OR_RETURN(json request, RepositoryBody(body));
  bool ready_only = false;
  if (request.contains("ready")) {
    if (!request["ready"].is_boolean())
      return MakeError(ErrorKind::kInvalidArgument, "\"ready\" must be true or false");
    ready_only = request["ready"].get<bool>();
  }
  json list = json::array();
  for (const auto& entry : core.RepositoryIndex(ready_only)) {
    json row = {{"name", entry.name}};
    if (!entry.version.empty()) row["version"] = entry.version;
    if (!entry.state.empty()) row["state"] = entry.state;
    if (!entry.reason.empty()) row["reason"] = entry.reason;
    list.push_back(std::move(row));
  }
  return list.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Standard base64 (RFC 4648, padded), as Triton's clients write a file override; kInvalidArgument otherwise.
Result<std::string> DecodeBase64(const std::string& text, const std::string& key) {
  if (text.size() % 4 != 0 || text.size() > (std::size_t{INT32_MAX} / 3) * 4) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("parameter \"{}\" is not base64 text", key));
  }
  std::string bytes(text.size() / 4 * 3, '\0');
  const int written =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  const std::size_t padding = text.size() >= 2 ? (text.end()[-1] == '=') + (text.end()[-2] == '=') : 0;
  if (written < 0 || static_cast<std::size_t>(written) != bytes.size()) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("parameter \"{}\" is not base64 text", key));
  }
  bytes.resize(bytes.size() - padding);
  return bytes;
}

// A load request's parameters: "config", a JSON text (a string), and "file:PATH" overrides, base64 text.
Result<LoadRequest> LoadRequestOf(const std::string& body) {
  ORTKIT_ASSIGN_OR_RETURN(json request, RepositoryBody(body));
  LoadRequest load;
  if (!request.contains("parameters")) return load;
  const json& parameters = request["parameters"];
  if (!parameters.is_object()) return MakeError(ErrorKind::kInvalidArgument, "\"parameters\" must be an object");
  for (const auto& [key, value] : parameters.items()) {
    if (key == "config") {
      if (!value.is_string()) {
        return MakeError(ErrorKind::kInvalidArgument, "parameter \"config\" must be a string holding JSON");
      }
      load.config = value.get<std::string>();
    } else if (key.rfind("file:", 0) == 0) {
      if (!value.is_string()) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("parameter \"{}\" must be a string: the file's bytes in base64", key));
      }
      ORTKIT_ASSIGN_OR_RETURN(load.files[key.substr(5)], DecodeBase64(value.get_ref<const std::string&>(), key));
    } else {
      return MakeError(ErrorKind::kInvalidArgument, UnknownLoadParameter(key));
    }
  }
  ORTKIT_RETURN_IF_ERROR(CheckOverrideFiles(load.files));
  return load;
}

std::string ModelConfigJson(const ModelConfig& config) {
  json j = json::parse(ModelConfigToJson(config));
  j["max_batch_size"] = config.batching.EffectiveMaxBatchSize();  // Triton's key, read by its clients
  return j.dump();
}

// The Inference-Header-Content-Length field: absent, or the one non-negative number it holds.
Result<std::optional<std::size_t>> HeaderLengthOf(const Request& request) {
  if (request.count(kHeaderLength) > 1) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{} is given {} times: give it once", kHeaderLength, request.count(kHeaderLength)));
  }
  auto field = request.find(kHeaderLength);
  if (field == request.end()) return std::optional<std::size_t>();
  const std::string_view text = field->value();
  std::size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{} is not a number: '{}'", kHeaderLength, text));
  }
  return std::optional<std::size_t>(value);
}

}  // namespace

int HttpStatusFor(ErrorKind kind) {
  for (const auto& entry : kStatusTable) {
    if (entry.kind == kind) return entry.status;
  }
  return 500;
}

Response MakeResponse(int status, std::string body, const char* content_type) {
  Response res{static_cast<bhttp::status>(status), 11};
  if (!body.empty()) res.set(bhttp::field::content_type, content_type);
  res.body() = std::move(body);
  return res;
}

Response ErrorResponse(int status, std::string_view message) {
  Response res = MakeResponse(status, ErrorBody(message));
  if (status == 503) res.set(bhttp::field::retry_after, "1");
  return res;
}

InferAnswer::InferAnswer(Result<InferResponse> result, const OutputEncoding& encoding,
                         ByteBudget::Reservation reservation)
    : held(std::move(reservation)) {
  if (!result.ok()) {
    status = HttpStatusFor(result.error().kind);
    error = result.error().message;
    return;
  }
  try {
    response = std::move(result).value();
    std::uint64_t bytes = 0;
    for (const auto& out : response.outputs) {
      bytes += EncodedOutputBound(encoding, out.name, out.tensor.type(), out.tensor.shape());
    }
    if (!held.GrowTo(bytes)) {  // the core checked it against --max-answer-mb: no overflow
      status = 503;
      error = held.Refusal(bytes, "the answer").message;
      response = {};
      return;
    }
    encoded = EncodeInferResponse(response, encoding);
  } catch (const std::exception& e) {
    status = 500;
    error = std::string("internal error encoding the response: ") + e.what();
  }
}

/// A few threads that run the tasks given to them in order of arrival (the repository's loads). The first
/// takes every task while it is free, so that loads one after another run on one thread (and reuse its
/// allocator's memory); another steps in only while those before it are busy, so that a load that takes
/// long holds no load of another model back (the core orders those of one model). The destructor runs
/// what is queued, then joins.
class ControlThread {
 public:
  ControlThread() {
    for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this, i] { Work(i); });
  }
  ~ControlThread() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  ControlThread(const ControlThread&) = delete;
  ControlThread& operator=(const ControlThread&) = delete;

  void Run(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_all();
  }

 private:
  void Work(int rank) {
    std::unique_lock lock(mutex_);
    for (;;) {
      // Thread `rank` takes a task only while `rank` others are busy: the first one whenever it is free.
      wake_.wait(lock, [&] { return (stopping_ && tasks_.empty()) || (!tasks_.empty() && busy_ >= rank); });
      if (tasks_.empty()) return;
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      ++busy_;
      lock.unlock();
      task();
      lock.lock();
      --busy_;
      wake_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;  // guarded by mutex_
  int busy_ = 0;                             // threads running a task; guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  static constexpr int kThreads = 4;
  std::vector<std::thread> threads_;  // last: start once the rest is built
};

Routes::Routes(InferenceCore& core, const HttpOptions& options, std::function<void()> run_queued_soon)
    : core_(core),
      server_version_(options.server_version),
      run_on_io_thread_(options.run_on_io_thread),
      run_queued_soon_(std::move(run_queued_soon)),
      control_(std::make_unique<ControlThread>()) {}

Routes::~Routes() = default;

void Routes::Handle(const std::shared_ptr<Exchange>& exchange, Request& request) {
  Target target = ParseTarget(request.target());
  exchange->record().model = target.model;
  if (target.endpoint == Endpoint::kUnknown || (exchange->metrics_only() && target.endpoint != Endpoint::kMetrics)) {
    return exchange->Fail(404, fmt::format("no such endpoint: {} {}", std::string(request.method_string()),
                                           std::string(request.target())));
  }
  if (request.method() != target.method) {
    return exchange->Fail(
        405, fmt::format("{} takes {}, not {}", std::string(request.target()),
                         std::string(bhttp::to_string(target.method)), std::string(request.method_string())));
  }
  auto fail = [&](const Error& error) { exchange->Fail(HttpStatusFor(error.kind), error.message); };
  const bool repository = target.endpoint == Endpoint::kRepositoryIndex ||
                          target.endpoint == Endpoint::kRepositoryLoad ||
                          target.endpoint == Endpoint::kRepositoryUnload;
  if (repository && !core_.repository_key_name().empty()) {
    auto field = request.find(core_.repository_key_name());
    const std::string given = field == request.end() ? std::string() : std::string(field->value());
    if (!core_.RepositoryKeyAccepts(field == request.end() ? nullptr : &given)) {
      return exchange->Fail(403,
                            fmt::format("the repository API needs the header {} with its value (--repository-api-key)",
                                        core_.repository_key_name()));
    }
  }
  switch (target.endpoint) {
    case Endpoint::kServer: {
      json j = {{"name", "ortkit"},
                {"version", server_version_},
                {"extensions", {"binary_tensor_data", "model_repository", "statistics"}}};
      return exchange->Write(MakeResponse(200, j.dump()));
    }
    case Endpoint::kLive: return exchange->Write(MakeResponse(core_.IsLive() ? 200 : 503));
    case Endpoint::kReady: return exchange->Write(MakeResponse(core_.IsReady() ? 200 : 503));
    case Endpoint::kMetrics:
      return exchange->Write(MakeResponse(200, core_.MetricsText(), "text/plain; version=0.0.4"));
    case Endpoint::kRepositoryIndex: {
      auto index = RepositoryIndexJson(core_, request.body());
      if (!index.ok()) return fail(index.error());
      return exchange->Write(MakeResponse(200, std::move(index).value()));
    }
    case Endpoint::kRepositoryLoad:
    case Endpoint::kRepositoryUnload:
      return RepositoryControl(exchange, request, target.endpoint == Endpoint::kRepositoryLoad, target.model);
    case Endpoint::kModel: {
      auto metadata = core_.Metadata(target.model, target.version);
      if (!metadata.ok()) return fail(metadata.error());
      return exchange->Write(
          MakeResponse(200, ModelMetadataToJson(*metadata).dump(-1, ' ', false, json::error_handler_t::replace)));
    }
    case Endpoint::kModelReady: {
      auto ready = core_.IsModelReady(target.model, target.version);
      if (!ready.ok()) return fail(ready.error());
      return exchange->Write(MakeResponse(*ready ? 200 : 503));
    }
    case Endpoint::kModelConfig: {
      auto config = core_.Config(target.model);
      if (!config.ok()) return fail(config.error());
      return exchange->Write(MakeResponse(200, ModelConfigJson(*config)));
    }
    case Endpoint::kInfer: return Infer(exchange, request, target.model, target.version);
    case Endpoint::kUnknown: break;
  }
}

void Routes::RepositoryControl(const std::shared_ptr<Exchange>& exchange, Request& request, bool load,
                               const std::string& model) {
  if (!core_.repository_api()) {
    return exchange->Fail(403,
                          "the repository API is off: start ortkit serve with --repository-api to load and "
                          "unload models");
  }
  LoadRequest what;
  if (load) {
    auto parsed = LoadRequestOf(request.body());
    if (!parsed.ok()) return exchange->Fail(400, parsed.error().message);
    what = std::move(parsed).value();
  } else if (auto body = RepositoryBody(request.body()); !body.ok()) {
    return exchange->Fail(400, body.error().message);
  }
  control_->Run([this, exchange, load, model, what = std::move(what)] {
    Status done = load ? core_.LoadModel(model, what) : core_.UnloadModel(model);
    exchange->Post([exchange, done = std::move(done)] {
      if (!done.ok()) return exchange->Fail(HttpStatusFor(done.error().kind), done.error().message);
      exchange->Write(MakeResponse(200));
    });
  });
}

void Routes::Infer(const std::shared_ptr<Exchange>& exchange, Request& request, const std::string& model,
                   const std::string& version) {
  auto header_length = HeaderLengthOf(request);
  if (!header_length.ok()) return exchange->Fail(400, header_length.error().message);
  OutputEncoding encoding;
  auto decoded = DecodeInferRequest(request.body(), *header_length, &encoding);
  if (!decoded.ok()) return exchange->Fail(HttpStatusFor(decoded.error().kind), decoded.error().message);
  decoded->model_name = model;
  decoded->model_version = version;
  exchange->record().request_id = decoded->id;
  // The request keeps what its body held (at least that of the server's budget), as much as its
  // tensors take (JSON may hold four times less: "0," for an INT64), and its answer once known.
  auto held = std::make_shared<ByteBudget::Reservation>(exchange->TakeReservation());
  std::uint64_t tensors = 0;
  for (const auto& input : decoded->inputs) tensors += input.tensor.byte_size();
  if (!held->GrowTo(tensors)) return exchange->Fail(503, held->Refusal(tensors, "its inputs").message);
  // The inputs are decoded: free the bytes while the request waits (clear() would keep them).
  std::string().swap(request.body());
  auto shared = std::make_shared<const OutputEncoding>(std::move(encoding));
  decoded->answer_cost = [shared](std::string_view name, DataType type, std::span<const std::int64_t> shape) {
    return EncodedOutputBound(*shared, name, type, shape);
  };
  // On the I/O thread (it ran the batch) the answer is written at once; a worker hands it over.
  auto done = [exchange, shared, held](Result<InferResponse> response) {
    exchange->Deliver(std::make_shared<InferAnswer>(std::move(response), *shared, std::move(*held)));
  };
  if (!run_on_io_thread_) return core_.Infer(std::move(decoded).value(), std::move(done));
  core_.InferLater(std::move(decoded).value(), std::move(done));
  run_queued_soon_();
}

}  // namespace ortkit::serve::http
