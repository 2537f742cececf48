#include "ortkit/serve/grpc/grpc_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "grpc_predict_v2.grpc.pb.h"
#include "ortkit/serve/option_range.h"
#include "ortkit/serve/request_values.h"
#include "ortkit/serve/run_when_idle.h"
#include "ortkit/serve/thread_name.h"

namespace ortkit::serve::grpc {
namespace {

using ::grpc::ServerContext;
using ::grpc::Status;
using ::grpc::StatusCode;

struct CodeOf {
  ErrorKind kind;
  StatusCode code;
};
constexpr CodeOf kCodeTable[] = {
    {ErrorKind::kInvalidArgument, StatusCode::INVALID_ARGUMENT},
    {ErrorKind::kNotFound, StatusCode::NOT_FOUND},
    {ErrorKind::kUnavailable, StatusCode::UNAVAILABLE},
    {ErrorKind::kIo, StatusCode::INTERNAL},
    {ErrorKind::kInvalidModel, StatusCode::INTERNAL},
    {ErrorKind::kRuntime, StatusCode::INTERNAL},
    {ErrorKind::kInternal, StatusCode::INTERNAL},
};

Status ToStatus(const Error& error) { return Status(GrpcCodeFor(error.kind), error.message); }

std::string ProtocolName(DataType type) {
  const DataTypeInfo* info = FindDataType(type);
  return info ? std::string(info->protocol) : "";
}

template <typename Field>
ortkit::Status CheckCount(const Field& field, const Tensor& tensor, const std::string& name, const char* field_name) {
  if (static_cast<std::int64_t>(field.size()) == tensor.element_count()) return OkStatus();
  return MakeError(ErrorKind::kInvalidArgument,
                   fmt::format("input '{}': shape {} needs {} values, contents.{} holds {}", name,
                               ShapeToString(tensor.shape()), tensor.element_count(), field_name, field.size()));
}

// Each value as T. The protocol carries INT8 and INT16 in int32 fields and UINT8 and UINT16 in
// uint32 ones: a value that does not fit T is refused as HTTP refuses it, never clamped.
template <typename T, typename Field>
Result<Tensor> FromContents(const Field& field, Tensor tensor, const std::string& name, const char* field_name) {
  using Value = typename Field::value_type;
  ORTKIT_RETURN_IF_ERROR(CheckCount(field, tensor, name, field_name));
  if constexpr (std::is_same_v<T, Value>) {
    if (!field.empty()) std::memcpy(tensor.data(), field.data(), tensor.byte_size());
    return tensor;
  }
  auto out = tensor.values<T>();
  for (int i = 0; i < field.size(); ++i) {
    if constexpr (std::is_integral_v<Value> && !std::is_same_v<Value, bool>) {
      if (!std::in_range<T>(field[i])) {
        return ElementOutOfRange(name, static_cast<std::size_t>(i), std::to_string(field[i]), tensor.type());
      }
    }
    out[i] = static_cast<T>(field[i]);
  }
  return tensor;
}

Result<Tensor> DecodeContents(const inference::InferTensorContents& c, Tensor tensor, const std::string& name) {
  switch (tensor.type()) {
    case DataType::kFloat32: return FromContents<float>(c.fp32_contents(), std::move(tensor), name, "fp32_contents");
    case DataType::kFloat64: return FromContents<double>(c.fp64_contents(), std::move(tensor), name, "fp64_contents");
    case DataType::kInt64:
      return FromContents<std::int64_t>(c.int64_contents(), std::move(tensor), name, "int64_contents");
    case DataType::kInt32: return FromContents<std::int32_t>(c.int_contents(), std::move(tensor), name, "int_contents");
    case DataType::kInt16: return FromContents<std::int16_t>(c.int_contents(), std::move(tensor), name, "int_contents");
    case DataType::kInt8: return FromContents<std::int8_t>(c.int_contents(), std::move(tensor), name, "int_contents");
    case DataType::kUInt64:
      return FromContents<std::uint64_t>(c.uint64_contents(), std::move(tensor), name, "uint64_contents");
    case DataType::kUInt32:
      return FromContents<std::uint32_t>(c.uint_contents(), std::move(tensor), name, "uint_contents");
    case DataType::kUInt16:
      return FromContents<std::uint16_t>(c.uint_contents(), std::move(tensor), name, "uint_contents");
    case DataType::kUInt8:
      return FromContents<std::uint8_t>(c.uint_contents(), std::move(tensor), name, "uint_contents");
    case DataType::kBool:
      return FromContents<std::uint8_t>(c.bool_contents(), std::move(tensor), name, "bool_contents");
    default:
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("input '{}': datatype {} must come in raw_input_contents", name, ProtocolName(tensor.type())));
  }
}

// An integer request parameter in either integer form; a uint64 beyond int64 saturates, so that the
// core's range check refuses it. Any other form (a string, a double, a bool) is refused with HTTP's
// words for a JSON value that is not an integer.
Result<std::int64_t> IntegerParameter(const std::string& key, const inference::InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case inference::InferParameter::kInt64Param: return p.int64_param();
    case inference::InferParameter::kUint64Param:
      return static_cast<std::int64_t>(std::min<std::uint64_t>(p.uint64_param(), INT64_MAX));
    default: return ParameterNotAnInteger(key);
  }
}

// In HTTP's order, so that a request with both wrong gets the same message over both.
ortkit::Status DecodeParameters(const inference::ModelInferRequest& in, InferRequest* request) {
  const auto& parameters = in.parameters();
  if (auto it = parameters.find("priority"); it != parameters.end()) {
    ORTKIT_ASSIGN_OR_RETURN(request->priority, IntegerParameter(it->first, it->second));
  }
  if (auto it = parameters.find("timeout"); it != parameters.end()) {
    ORTKIT_ASSIGN_OR_RETURN(request->timeout_us, IntegerParameter(it->first, it->second));
  }
  return OkStatus();
}

Result<InferRequest> Decode(const inference::ModelInferRequest& in) {
  InferRequest request;
  request.model_name = in.model_name();
  request.model_version = in.model_version();
  request.id = in.id();
  ORTKIT_RETURN_IF_ERROR(DecodeParameters(in, &request));
  for (const auto& [count, what] : {std::pair{in.inputs_size(), "inputs"}, std::pair{in.outputs_size(), "outputs"}}) {
    if (static_cast<std::size_t>(count) > kMaxTensorsPerRequest) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("the request lists more than {} {}", kMaxTensorsPerRequest, what));
    }
  }
  const bool raw = in.raw_input_contents_size() > 0;
  if (raw && in.raw_input_contents_size() != in.inputs_size()) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("raw_input_contents has {} entries for {} inputs",
                                                              in.raw_input_contents_size(), in.inputs_size()));
  }
  for (int i = 0; i < in.inputs_size(); ++i) {
    const auto& input = in.inputs(i);
    const DataTypeInfo* info = FindDataTypeByProtocol(input.datatype());
    if (info == nullptr || info->type == DataType::kString) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("input '{}': datatype \"{}\" is not supported", input.name(), input.datatype()));
    }
    std::vector<std::int64_t> shape(input.shape().begin(), input.shape().end());
    auto tensor = Tensor::Allocate(info->type, shape);
    if (!tensor.ok()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("input '{}': {}", input.name(), tensor.error().message));
    }
    if (raw) {
      if (input.has_contents() && input.contents().ByteSizeLong() > 0) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("input '{}' has both contents and raw_input_contents: send the values once, in "
                                     "one of them",
                                     input.name()));
      }
      const std::string& bytes = in.raw_input_contents(i);
      if (bytes.size() != tensor->byte_size()) {
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("input '{}': raw_input_contents holds {} bytes but {} {} needs {}", input.name(),
                                     bytes.size(), input.datatype(), ShapeToString(shape), tensor->byte_size()));
      }
      if (!bytes.empty()) std::memcpy(tensor->data(), bytes.data(), bytes.size());
      request.inputs.push_back({input.name(), std::move(tensor).value()});
    } else {
      ORTKIT_ASSIGN_OR_RETURN(Tensor decoded,
                              DecodeContents(input.contents(), std::move(tensor).value(), input.name()));
      request.inputs.push_back({input.name(), std::move(decoded)});
    }
  }
  for (const auto& out : in.outputs()) {
    if (out.parameters().count("classification") > 0) return ClassificationNotSupported(out.name());
    request.outputs.push_back(out.name());
  }
  return request;
}

void Encode(const InferResponse& response, inference::ModelInferResponse* out) {
  out->set_model_name(response.model_name);
  out->set_model_version(response.model_version);
  out->set_id(response.id);
  for (const auto& o : response.outputs) {
    auto* tensor = out->add_outputs();
    tensor->set_name(o.name);
    tensor->set_datatype(ProtocolName(o.tensor.type()));
    for (std::int64_t d : o.tensor.shape()) tensor->add_shape(d);
    out->add_raw_output_contents(reinterpret_cast<const char*>(o.tensor.data()), o.tensor.byte_size());
  }
}

}  // namespace

::grpc::StatusCode GrpcCodeFor(ErrorKind kind) {
  for (const auto& entry : kCodeTable) {
    if (entry.kind == kind) return entry.code;
  }
  return StatusCode::INTERNAL;
}

// ModelInfer on gRPC's asynchronous API, driven by one thread of ours that waits on the completion
// queue: it takes each call, decodes it and queues it; once the queue has nothing else ready it
// runs the due batch itself and finishes its calls, as the HTTP I/O thread does (RunWhenIdle). A
// batch that waits for its delay runs on a worker, which finishes its calls. The callback API
// handed each call across gRPC's own thread pools and then to a worker (~20 futex calls per call;
// bert-tiny at concurrency 1 took 0.64 ms against HTTP's 0.33); the synchronous API held one gRPC
// thread per call until its answer (3,593/s at concurrency 64 against HTTP's 8,044/s). The other
// methods stay synchronous.
using ServiceBase =
    inference::GRPCInferenceService::WithAsyncMethod_ModelInfer<inference::GRPCInferenceService::Service>;

// One ModelInfer call, from its arrival to its answer's completion on the queue.
struct InferCall {
  ServerContext context;
  inference::ModelInferRequest request;  // emptied once decoded
  inference::ModelInferResponse response;
  ::grpc::ServerAsyncResponseWriter<inference::ModelInferResponse> responder{&context};
  std::chrono::steady_clock::time_point start;
  std::string model;             // for the access log
  ByteBudget::Reservation held;  // of the server's budget: the request, its inputs, its answer
  bool finishing = false;        // its tag now reports the answer's completion
};

// The bytes an answer of `response`'s outputs takes as a protobuf message.
std::uint64_t AnswerBytes(const InferResponse& response) {
  std::uint64_t bytes = 256 + response.id.size();
  for (const auto& o : response.outputs)
    bytes += 64 + o.name.size() + 10 * o.tensor.shape().size() + o.tensor.byte_size();
  return bytes;
}

// The repository key's metadata on `context` checked (CoreOptions::repository_key_name); OK when
// none is asked for.
Status CheckRepositoryKey(const ServerContext& context, const InferenceCore& core) {
  if (core.repository_key_name().empty()) return Status::OK;
  std::string name = core.repository_key_name();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto& metadata = context.client_metadata();
  auto found = metadata.find(name);
  const std::string given =
      found == metadata.end() ? std::string() : std::string(found->second.data(), found->second.size());
  if (core.RepositoryKeyAccepts(found == metadata.end() ? nullptr : &given)) return Status::OK;
  return Status(StatusCode::PERMISSION_DENIED,
                "the repository API needs the metadata " + name + " with its value (--repository-api-key)");
}

Status RepositoryApiOff() {
  return Status(StatusCode::PERMISSION_DENIED,
                "the repository API is off: start ortkit serve with --repository-api to load and unload models");
}

class InferenceService final : public ServiceBase {
 public:
  InferenceService(InferenceCore& core, const GrpcOptions& options) : core_(core), options_(options) {}

  Status ServerLive(ServerContext* context, const inference::ServerLiveRequest*,
                    inference::ServerLiveResponse* out) override {
    return Logged(context, "ServerLive", "", [&] {
      out->set_live(core_.IsLive());
      return Status::OK;
    });
  }
  Status ServerReady(ServerContext* context, const inference::ServerReadyRequest*,
                     inference::ServerReadyResponse* out) override {
    return Logged(context, "ServerReady", "", [&] {
      out->set_ready(core_.IsReady());
      return Status::OK;
    });
  }
  Status ModelReady(ServerContext* context, const inference::ModelReadyRequest* in,
                    inference::ModelReadyResponse* out) override {
    return Logged(context, "ModelReady", in->name(), [&] {
      // An unknown model or version is not ready (Triton's contract): ready=false, not an error.
      auto ready = core_.IsModelReady(in->name(), in->version());
      out->set_ready(ready.ok() && *ready);
      return Status::OK;
    });
  }
  Status ServerMetadata(ServerContext* context, const inference::ServerMetadataRequest*,
                        inference::ServerMetadataResponse* out) override {
    return Logged(context, "ServerMetadata", "", [&] {
      out->set_name("ortkit");
      out->set_version(options_.server_version);
      out->add_extensions("binary_tensor_data");
      out->add_extensions("model_repository");
      return Status::OK;
    });
  }
  Status RepositoryIndex(ServerContext* context, const inference::RepositoryIndexRequest* in,
                         inference::RepositoryIndexResponse* out) override {
    return Logged(context, "RepositoryIndex", "", [&] {
      if (Status key = CheckRepositoryKey(*context, core_); !key.ok()) return key;
      for (const auto& entry : core_.RepositoryIndex(in->ready())) {
        auto* row = out->add_models();
        row->set_name(entry.name);
        row->set_version(entry.version);
        row->set_state(entry.state);
        row->set_reason(entry.reason);
      }
      return Status::OK;
    });
  }
  Status RepositoryModelLoad(ServerContext* context, const inference::RepositoryModelLoadRequest* in,
                             inference::RepositoryModelLoadResponse*) override {
    return Logged(context, "RepositoryModelLoad", in->model_name(), [&] {
      if (!core_.repository_api()) return RepositoryApiOff();
      if (Status key = CheckRepositoryKey(*context, core_); !key.ok()) return key;
      LoadRequest load;
      for (const auto& [key, value] : in->parameters()) {
        if (key == "config") {
          if (value.parameter_choice_case() != inference::ModelRepositoryParameter::kStringParam) {
            return Status(StatusCode::INVALID_ARGUMENT, "parameter \"config\" must be a string holding JSON");
          }
          load.config = value.string_param();
        } else if (key.rfind("file:", 0) == 0) {
          if (value.parameter_choice_case() != inference::ModelRepositoryParameter::kBytesParam) {
            return Status(StatusCode::INVALID_ARGUMENT,
                          "parameter \"" + key + "\" must be a bytes_param holding the file's bytes");
          }
          load.files[key.substr(5)] = value.bytes_param();
        } else {
          return Status(StatusCode::INVALID_ARGUMENT, UnknownLoadParameter(key));
        }
      }
      if (ortkit::Status paths = CheckOverrideFiles(load.files); !paths.ok()) return ToStatus(paths.error());
      ortkit::Status loaded = core_.LoadModel(in->model_name(), load);
      return loaded.ok() ? Status::OK : ToStatus(loaded.error());
    });
  }
  Status RepositoryModelUnload(ServerContext* context, const inference::RepositoryModelUnloadRequest* in,
                               inference::RepositoryModelUnloadResponse*) override {
    return Logged(context, "RepositoryModelUnload", in->model_name(), [&] {
      if (!core_.repository_api()) return RepositoryApiOff();
      if (Status key = CheckRepositoryKey(*context, core_); !key.ok()) return key;
      ortkit::Status unloaded = core_.UnloadModel(in->model_name());
      return unloaded.ok() ? Status::OK : ToStatus(unloaded.error());
    });
  }
  Status ModelMetadata(ServerContext* context, const inference::ModelMetadataRequest* in,
                       inference::ModelMetadataResponse* out) override {
    return Logged(context, "ModelMetadata", in->name(), [&] {
      auto metadata = core_.Metadata(in->name(), in->version());
      if (!metadata.ok()) return ToStatus(metadata.error());
      out->set_name(metadata->name);
      for (const auto& v : metadata->versions) out->add_versions(v);
      out->set_platform(metadata->platform);
      auto fill = [](const std::vector<TensorMetadata>& list, auto* repeated) {
        for (const auto& t : list) {
          auto* m = repeated->Add();
          m->set_name(t.name);
          m->set_datatype(ProtocolName(t.type));
          for (std::int64_t d : t.shape) m->add_shape(d);
        }
      };
      fill(metadata->inputs, out->mutable_inputs());
      fill(metadata->outputs, out->mutable_outputs());
      return Status::OK;
    });
  }
  /// Posts `count` more requests for ModelInfer calls. Server::Shutdown cancels every call that has
  /// arrived without a request posted for it, and the queue thread posts one at a time, so under
  /// load most received calls wait for one: called right before Shutdown, so that they run and are
  /// answered (48 clients: calls sent up to 4 ms before SIGTERM were cancelled without it).
  void AwaitArrivedCalls(::grpc::ServerCompletionQueue* queue, int count) {
    for (int i = 0; i < count; ++i) AwaitCall(queue);
  }

  /// Asks gRPC for the next ModelInfer call; its tag arrives on `queue`.
  void AwaitCall(::grpc::ServerCompletionQueue* queue) {
    auto* call = new InferCall;
    RequestModelInfer(&call->context, &call->request, &call->responder, queue, queue, call);
  }

  /// The completion queue's loop, until the queue is shut down and drained.
  void Serve(::grpc::ServerCompletionQueue* queue) {
    RunWhenIdle run(std::chrono::microseconds(options_.busy_poll_us));
    AwaitCall(queue);
    while (true) {
      void* tag = nullptr;
      bool ok = false;
      const auto next = run.Overdue() ? ::grpc::CompletionQueue::TIMEOUT
                                      : queue->AsyncNext(&tag, &ok,
                                                         run.Poll() ? gpr_time_0(GPR_CLOCK_MONOTONIC)
                                                                    : gpr_inf_future(GPR_CLOCK_MONOTONIC));
      if (next == ::grpc::CompletionQueue::SHUTDOWN) break;
      if (next == ::grpc::CompletionQueue::TIMEOUT) {
        if (run.wanted()) {  // nothing else ready (or read ahead long enough): run the batch
          run.Running();
          core_.RunQueued();
        }
        continue;
      }
      run.Handled();
      auto* call = static_cast<InferCall*>(tag);
      if (call->finishing || !ok) {  // answered, or the server is shutting down
        delete call;
        continue;
      }
      AwaitCall(queue);
      if (Infer(call)) run.Queued();
    }
  }

 private:
  /// Queues the call for RunQueued(), or answers it at once; returns whether it was queued.
  bool Infer(InferCall* call) {
    call->start = std::chrono::steady_clock::now();
    call->model = call->request.model_name();
    // Once per call, on whichever thread the answer is ready.
    auto finish = [this, call](const Status& status) {
      Log(&call->context, "ModelInfer", call->model, call->start, status);
      call->finishing = true;
      if (status.ok())
        call->responder.Finish(call->response, status, call);
      else
        call->responder.FinishWithError(status, call);
    };
    try {
      auto request = Hold(call);
      if (!request.ok()) {
        finish(ToStatus(request.error()));
        return false;
      }
      core_.InferLater(std::move(request).value(), [call, finish](Result<InferResponse> response) {
        if (!response.ok()) return finish(ToStatus(response.error()));
        const std::uint64_t bytes = AnswerBytes(*response);
        if (!call->held.GrowTo(bytes)) return finish(ToStatus(call->held.Refusal(bytes, "the answer")));
        try {
          Encode(*response, &call->response);
        } catch (const std::exception& e) {
          return finish(Internal(e));
        }
        finish(Status::OK);
      });
      return true;
    } catch (const std::exception& e) {  // before the core took the request: it will not answer
      finish(Internal(e));
      return false;
    }
  }

  // The call's request decoded, once the server's budget holds its message and then its inputs;
  // the message is freed.
  Result<InferRequest> Hold(InferCall* call) {
    call->held = core_.inflight().Reserve();
    const std::uint64_t message = call->request.ByteSizeLong();
    if (!call->held.GrowTo(message)) return call->held.Refusal(message, "this request");
    ORTKIT_ASSIGN_OR_RETURN(InferRequest request, Decode(call->request));
    std::uint64_t tensors = 0;
    for (const auto& input : request.inputs) tensors += input.tensor.byte_size();
    if (!call->held.GrowTo(tensors)) return call->held.Refusal(tensors, "its inputs");
    inference::ModelInferRequest().Swap(&call->request);
    return request;
  }

  static Status Internal(const std::exception& e) {
    return Status(StatusCode::INTERNAL, std::string("internal error: ") + e.what());
  }

  template <typename Body>
  Status Logged(ServerContext* context, const char* method, const std::string& model, Body body) {
    const auto start = std::chrono::steady_clock::now();
    Status status;
    try {
      status = body();
    } catch (const std::exception& e) {
      status = Internal(e);
    }
    Log(context, method, model, start, status);
    return status;
  }

  void Log(::grpc::ServerContextBase* context, const char* method, const std::string& model,
           std::chrono::steady_clock::time_point start, const Status& status) const {
    if (!options_.access_log) return;
    AccessRecord record;
    record.protocol = "grpc";
    record.method = method;
    record.path = std::string("/inference.GRPCInferenceService/") + method;
    record.peer = context->peer();
    record.model = model;
    record.status = static_cast<int>(status.error_code());
    record.duration_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    record.error = status.error_message();
    options_.access_log(record);
  }

  InferenceCore& core_;
  GrpcOptions options_;
};

namespace {

// An IPv6 address in brackets, as gRPC's "host:port" needs it ("[::1]:8001").
std::string BracketedHost(const std::string& host) {
  return host.find(':') != std::string::npos && !host.starts_with('[') ? "[" + host + "]" : host;
}

// Why gRPC could not bind host:port, which its builder does not say: found by binding a socket there
// as gRPC does (SO_REUSEADDR, no SO_REUSEPORT).
std::string WhyNotBound(const std::string& host, int port) {
  std::string bare = host;
  if (bare.starts_with('[') && bare.ends_with(']')) bare = bare.substr(1, bare.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(bare.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || found == nullptr) {
    return fmt::format("'{}' is not an address of this machine", host);
  }
  int error = 0;
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd < 0) {
    error = errno;
  } else {
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) error = errno;
    close(fd);
  }
  freeaddrinfo(found);
  if (error == EADDRINUSE) return fmt::format("port {} is in use (another process listens on it)", port);
  if (error == EADDRNOTAVAIL) return fmt::format("'{}' is not an address of this machine", host);
  if (error != 0) return std::strerror(error);
  return "gRPC could not bind it (the port was taken and is free again, or gRPC refused the address)";
}

}  // namespace

// Calls that may have arrived unanswered when the server stops (as many clients as that at once).
constexpr int kArrivedCallsAtStop = 1024;

struct GrpcServer::Impl {
  std::unique_ptr<InferenceService> service;
  std::unique_ptr<::grpc::ServerCompletionQueue> queue;
  std::unique_ptr<::grpc::Server> server;
  std::thread thread;  // ModelInfer's completion queue
  int port = -1;
  bool stopped = false;
};

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcServer::~GrpcServer() { Stop(); }

ortkit::Status GrpcOptions::Validate() const {
  if (port < 0 || port > 65535) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("gRPC port {} is not a port: give 0 to 65535 (0: a free one)", port));
  }
  // gRPC takes the limit as an int of bytes.
  ORTKIT_RETURN_IF_ERROR(
      CheckOptionRange("max_message_bytes", "--max-body-mb",
                       static_cast<std::int64_t>(std::min<std::size_t>(max_message_bytes, INT64_MAX)), 1,
                       std::int64_t{2047} << 20, "bytes"));
  return CheckOptionRange("busy_poll_us", "--grpc-busy-poll-us", busy_poll_us, 0, 1'000'000);
}

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(InferenceCore& core, const GrpcOptions& options) {
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<InferenceService>(core, options);
  ::grpc::ServerBuilder builder;
  const std::string address = fmt::format("{}:{}", BracketedHost(options.host), options.port);
  builder.AddListeningPort(address, ::grpc::InsecureServerCredentials(), &impl->port);
  // gRPC sets SO_REUSEPORT by default: a second server on a port another process listens on would
  // bind too, and the kernel would split the connections between the two.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<std::size_t>(options.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(-1);
  // gRPC holds a message whole before the service sees it (and weighs it against inflight()): its
  // own buffers are bounded by a quota of the same size, enough for two of the largest messages.
  if (const std::uint64_t limit = core.inflight().limit(); limit > 0) {
    const std::uint64_t quota = std::max<std::uint64_t>(limit, 2 * std::uint64_t{options.max_message_bytes});
    builder.SetResourceQuota(::grpc::ResourceQuota("ortkit-grpc")
                                 .Resize(static_cast<std::size_t>(std::min<std::uint64_t>(quota, SIZE_MAX))));
  }
  builder.RegisterService(impl->service.get());
  impl->queue = builder.AddCompletionQueue();
  impl->server = builder.BuildAndStart();
  if (!impl->server || impl->port <= 0) {
    impl->queue->Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (impl->queue->Next(&tag, &ok)) {
    }
    return MakeError(ErrorKind::kUnavailable,
                     fmt::format("cannot listen for gRPC on {}: {}", address, WhyNotBound(options.host, options.port)));
  }
  impl->thread = std::thread([service = impl->service.get(), queue = impl->queue.get()] {
    NameThisThread("ortkit-grpc");
    service->Serve(queue);
  });
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

int GrpcServer::port() const { return impl_->port; }

void GrpcServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (impl_->server) {
    impl_->service->AwaitArrivedCalls(impl_->queue.get(), kArrivedCallsAtStop);
    impl_->server->Shutdown();  // waits for the calls in progress: their answers complete on the queue
    impl_->server->Wait();
    impl_->queue->Shutdown();
    if (impl_->thread.joinable()) impl_->thread.join();  // drains the queue
  }
}

}  // namespace ortkit::serve::grpc
