// The gRPC transport: the generated KServe v2 stub over one channel per client. Requests are
// serialized ModelInferRequests with raw_input_contents, parsed once per send (cheap next to the
// round trip, and it keeps EncodedRequest a plain byte string for both transports).
#include <grpcpp/grpcpp.h>

#include <fmt/format.h>

#include "grpc_predict_v2.grpc.pb.h"
#include "ortkit/perf/infer_client.h"

namespace ortkit::perf {
namespace {

std::string StatusCodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  const auto index = static_cast<std::size_t>(code);
  return index < std::size(kNames) ? kNames[index] : fmt::format("code {}", index);
}

class GrpcInferClient final : public InferClient {
 public:
  GrpcInferClient(const std::string& target, const ClientOptions& options)
      : target_(target),
        options_(options),
        stub_(
            inference::GRPCInferenceService::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()))) {
  }

  Status CheckReady() override {
    grpc::ClientContext context;
    SetDeadline(context);
    inference::ServerReadyRequest request;
    inference::ServerReadyResponse response;
    const grpc::Status status = stub_->ServerReady(&context, request, &response);
    if (!status.ok()) {
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("cannot reach the server at {} over gRPC: {} {}", target_,
                                   StatusCodeName(status.error_code()), status.error_message()));
    }
    if (!response.ready())
      return MakeError(ErrorKind::kUnavailable, fmt::format("the server at {} is not ready", target_));
    return OkStatus();
  }

  Result<RemoteModel> ModelMetadata() override {
    grpc::ClientContext context;
    SetDeadline(context);
    inference::ModelMetadataRequest request;
    request.set_name(options_.model);
    inference::ModelMetadataResponse response;
    const grpc::Status status = stub_->ModelMetadata(&context, request, &response);
    if (!status.ok()) {
      return MakeError(
          status.error_code() == grpc::StatusCode::NOT_FOUND ? ErrorKind::kNotFound : ErrorKind::kUnavailable,
          fmt::format("ModelMetadata at {}: {} {}", target_, StatusCodeName(status.error_code()),
                      status.error_message()));
    }
    // One parser for both transports: the metadata goes through the JSON form.
    std::string json = fmt::format(R"({{"name":"{}","inputs":[)", response.name());
    auto append = [&json](const auto& list) {
      for (int i = 0; i < list.size(); ++i) {
        json += fmt::format(R"({}{{"name":"{}","datatype":"{}","shape":[{}]}})", i > 0 ? "," : "", list[i].name(),
                            list[i].datatype(), fmt::join(list[i].shape(), ","));
      }
    };
    append(response.inputs());
    json += R"(],"outputs":[)";
    append(response.outputs());
    json += "]}";
    return ParseModelMetadata(json);
  }

  Result<EncodedRequest> Encode(const std::vector<NamedTensor>& inputs,
                                const std::vector<std::string>& outputs) override {
    inference::ModelInferRequest request;
    request.set_model_name(options_.model);
    for (const auto& input : inputs) {
      const DataTypeInfo* info = FindDataType(input.tensor.type());
      if (info == nullptr || info->protocol.empty() || input.tensor.is_string()) {
        return MakeError(ErrorKind::kInvalidArgument, fmt::format("input '{}': {} tensors cannot be sent by perf",
                                                                  input.name, DataTypeName(input.tensor.type())));
      }
      auto* tensor = request.add_inputs();
      tensor->set_name(input.name);
      tensor->set_datatype(std::string(info->protocol));
      for (std::int64_t d : input.tensor.shape()) tensor->add_shape(d);
      request.add_raw_input_contents(reinterpret_cast<const char*>(input.tensor.data()), input.tensor.byte_size());
    }
    for (const auto& name : outputs) request.add_outputs()->set_name(name);
    EncodedRequest encoded;
    encoded.body = request.SerializeAsString();
    encoded.rows = inputs.empty() || inputs.front().tensor.shape().empty() ? 1 : inputs.front().tensor.shape().front();
    return encoded;
  }

  InferOutcome Infer(const EncodedRequest& encoded) override {
    inference::ModelInferRequest request;
    if (!request.ParseFromString(encoded.body)) return {"request does not parse", ""};
    grpc::ClientContext context;
    SetDeadline(context);
    inference::ModelInferResponse response;
    const grpc::Status status = stub_->ModelInfer(&context, request, &response);
    if (!status.ok()) return {"gRPC " + StatusCodeName(status.error_code()), status.error_message()};
    return {};
  }

 private:
  void SetDeadline(grpc::ClientContext& context) const {
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(options_.timeout_ms));
  }

  std::string target_;
  ClientOptions options_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

}  // namespace

Result<std::unique_ptr<InferClient>> CreateGrpcClient(const ClientOptions& options) {
  std::string target = options.url;
  if (target.rfind("grpc://", 0) == 0) target = target.substr(7);
  const auto colon = target.rfind(':');
  if (target.find("://") != std::string::npos || target.find('/') != std::string::npos || colon == std::string::npos ||
      colon == 0 || colon + 1 == target.size() ||
      target.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--url '{}': gRPC takes host:port, e.g. 127.0.0.1:8001", options.url));
  }
  return std::unique_ptr<InferClient>(std::make_unique<GrpcInferClient>(target, options));
}

}  // namespace ortkit::perf
