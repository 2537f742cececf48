#pragma once
// The Open Inference Protocol (KServe v2) over gRPC: inference.GRPCInferenceService
// (grpc_predict_v2.proto) over InferenceCore. Inputs in contents or raw_input_contents; outputs
// always in raw_output_contents.

#include <memory>
#include <string>

#include <grpcpp/support/status.h>

#include "ortkit/core/result.h"
#include "ortkit/serve/access_log.h"
#include "ortkit/serve/inference_core.h"

namespace ortkit::serve::grpc {

/// The gRPC status code for an error kind: INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE (queue full,
/// not ready, shutting down), INTERNAL otherwise.
::grpc::StatusCode GrpcCodeFor(ErrorKind kind);

struct GrpcOptions {
  std::string host = "127.0.0.1";
  int port = 8001;  ///< 0: a free port, see GrpcServer::port()
  std::size_t max_message_bytes = 64 << 20;
  std::string server_version = "0.1.0";
  int busy_poll_us = 0;  ///< after its last event ModelInfer's thread polls this long before sleeping
  AccessLog access_log;  ///< optional

  /// kInvalidArgument for a value out of its range, naming its flag and the range (GrpcServer::
  /// Start checks it).
  Status Validate() const;
};

class GrpcServer {
 public:
  /// Binds and starts serving (kUnavailable when the port cannot be bound). `core` must outlive
  /// the server.
  static Result<std::unique_ptr<GrpcServer>> Start(InferenceCore& core, const GrpcOptions& options);
  ~GrpcServer();  ///< Stop()
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  int port() const;
  /// Stops accepting calls and returns once every call in progress is answered. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ortkit::serve::grpc
