#pragma once
// The flags of `ortkit serve`: the front ends' and the core's options, whose in-class defaults are the
// flag defaults, and what the command adds (the models, the drain, the access log).

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ortkit/core/result.h"
#include "ortkit/serve/grpc/grpc_server.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/model_repository.h"

namespace ortkit::cli {

struct ServeFlags {
  serve::ModelSelection models;
  /// --host, --http-port, --metrics-port, --http-max-connections, --http-idle-timeout-s, --http-busy-poll-us;
  /// the body limit from --max-body-mb, the I/O thread from --http-workers (FrontEndOptions).
  serve::http::HttpOptions http;
  /// --grpc-port (-1: no gRPC), --grpc-busy-poll-us; the host and the message limit are HTTP's.
  serve::grpc::GrpcOptions grpc;
  serve::CoreOptions core;  ///< the answer and in-flight limits, from the flags below (CoreOptionsOf)
  std::size_t max_body_mb = serve::http::HttpOptions{}.max_body_bytes >> 20;
  std::uint64_t max_answer_mb = serve::RequestLimits{}.max_answer_bytes >> 20;
  std::optional<std::uint64_t> max_inflight_bytes;  ///< none: serve::DefaultInflightBytes
  int drain_timeout_s = 30;          ///< Triton's --exit-timeout-secs, and Kubernetes' default grace period
  bool http_workers = false;         ///< run batches on the core's workers, never on the HTTP I/O thread
  std::string access_log;            ///< "-": stderr
  serve::ConfigOverrides overrides;  ///< of every model's configuration file
  std::string repository_api_key;    ///< NAME=VALUE: the header the repository API asks for; empty: none
  double poll_seconds = 15;          ///< --model-control poll's period (Triton's --repository-poll-secs default)
};

/// Registers serve's flags on `cmd` into `flags`, the defaults read from it.
void RegisterServeFlags(CLI::App* cmd, ServeFlags& flags);

/// The front ends' options as the flags set them (the body limit, the I/O thread, the server's version).
serve::http::HttpOptions HttpOptionsOf(const ServeFlags& flags);
serve::grpc::GrpcOptions GrpcOptionsOf(const ServeFlags& flags);

/// The core's options as the flags set them; the in-flight budget from the memory when not given.
serve::CoreOptions CoreOptionsOf(const ServeFlags& flags);

/// The flags checked as a whole before anything loads: each option in its range (the options' own
/// Validate()), and no two front ends on one port.
Status CheckServeFlags(const ServeFlags& flags);

}  // namespace ortkit::cli
