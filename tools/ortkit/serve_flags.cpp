// The flags of `ortkit serve`, registered with the defaults of the options they fill in, and checked.
#include "serve_flags.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/memory.h"
#include "ortkit/core/numbers.h"

namespace ortkit::cli {
namespace {

// A port flag's check: 0 to 65535, or -1 where `minus_one` says what -1 means ("" when it may not be
// -1). Checked here because a port is cast to 16 bits when bound: 65536 would wrap to 0 (a random
// port) and -1 to 65535.
CLI::Validator PortValidator(const std::string& minus_one) {
  return CLI::Validator(
      [minus_one](std::string& text) -> std::string {
        auto port = ParseWholeNumber(
            text, "", {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
        if (!port.ok()) return "";  // not a number that fits: CheckEveryNumber says
        if ((*port >= 0 && *port <= 65535) || (*port == -1 && !minus_one.empty())) return "";
        return fmt::format("{} is not a port: give 0 to 65535 (0: a free one){}", text,
                           minus_one.empty() ? "" : fmt::format(" or -1 ({})", minus_one));
      },
      "PORT");
}

// Two front ends on one port: the second could not bind, so say which flags collide before loading.
Status CheckPortsDiffer(const ServeFlags& flags) {
  auto same = [](int a, int b) { return a > 0 && a == b; };
  if (same(flags.http.port, flags.grpc.port)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--http-port and --grpc-port are both {}: give each its own port", flags.http.port));
  }
  if (same(flags.http.port, flags.http.metrics_port) || same(flags.grpc.port, flags.http.metrics_port)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--metrics-port {} is also {}: give it a port of its own, or -1 to serve /metrics "
                                 "on the HTTP port",
                                 flags.http.metrics_port,
                                 same(flags.http.port, flags.http.metrics_port) ? "--http-port" : "--grpc-port"));
  }
  return OkStatus();
}

// A validator that reads one of `choices` into an enum option, refusing anything else with the list.
template <typename Enum>
CLI::Validator EnumChoice(std::vector<std::pair<std::string, Enum>> choices) {
  return CLI::Validator(
      [choices](std::string& text) -> std::string {
        std::vector<std::string> names;
        for (const auto& [name, value] : choices) {
          if (name == text) {
            text = std::to_string(static_cast<int>(value));  // what CLI11 reads into the enum
            return "";
          }
          names.push_back(name);
        }
        return fmt::format("{} is not one of {}", text, fmt::join(names, ", "));
      },
      "");
}

/// --model, --config, --model-repository: what is served.
void RegisterModelFlags(CLI::App* cmd, ServeFlags& flags) {
  cmd->add_option("--model", flags.models.models,
                  "NAME=PATH of an ONNX model to serve (repeatable; a bare PATH is named after the file)");
  cmd->add_option("--config", flags.models.configs,
                  "serving configuration (JSON, docs/serving.md) of the model; NAME=FILE with several models");
  cmd->add_option("--model-repository", flags.models.repository,
                  "folder of NAME/model.onnx or NAME/VERSION/model.onnx with optional NAME/config.json");
  cmd->add_option("--model-control", flags.models.control,
                  "none: every model of the repository loads at start; poll: every one, then whatever its files "
                  "become (checked every --poll-seconds); explicit: the --load-model ones, then the repository API's")
      ->transform(EnumChoice<serve::ModelControlMode>({{"none", serve::ModelControlMode::kNone},
                                                       {"poll", serve::ModelControlMode::kPoll},
                                                       {"explicit", serve::ModelControlMode::kExplicit}}))
      ->type_name("none|poll|explicit")
      ->default_str("none");
  cmd->add_option("--poll-seconds", flags.poll_seconds,
                  "with --model-control poll, how often the repository is read: a model whose files changed is "
                  "reloaded once they have stayed the same for this long (0.1 to 86400)")
      ->capture_default_str();
  cmd->add_option("--reload-policy", flags.core.reload_policy,
                  "beside: a reload loads the new copy beside the served one and swaps it in, refusing no request; "
                  "unload-first: it unloads the served copy first (requests get 503 until the new one is ready), "
                  "for a machine that cannot hold two copies")
      ->transform(EnumChoice<serve::ReloadPolicy>(
          {{"beside", serve::ReloadPolicy::kBeside}, {"unload-first", serve::ReloadPolicy::kUnloadFirst}}))
      ->type_name("beside|unload-first")
      ->default_str("beside");
  cmd->add_flag("!--no-check-on-load", flags.core.check_on_load,
                "load new files through the repository API or polling without running ortkit check's file, "
                "external-data and checker layers on them first");
  cmd->add_option("--load-model", flags.models.load_models,
                  "with --model-control explicit, a model of the repository to load at start (repeatable; '*': "
                  "every one)");
  cmd->add_flag("--repository-api", flags.core.repository_api,
                "answer the repository extension's load and unload (HTTP POST /v2/repository/models/NAME/load, "
                "gRPC RepositoryModelLoad, ...); off, they are refused");
  cmd->add_option("--repository-api-key", flags.repository_api_key,
                  "NAME=VALUE: the repository API (index, load, unload) answers only requests carrying the HTTP "
                  "header (gRPC metadata) NAME with VALUE; others get 403 / PERMISSION_DENIED");
}

/// The front ends: where they listen, their limits and threads, and the drain.
void RegisterFrontEndFlags(CLI::App* cmd, ServeFlags& flags) {
  cmd->add_option("--host", flags.http.host, "address to bind")->capture_default_str();
  cmd->add_option("--http-port", flags.http.port, "HTTP port, 0 to 65535 (0: a free one, printed)")
      ->check(PortValidator(""))
      ->capture_default_str();
  cmd->add_option("--grpc-port", flags.grpc.port, "gRPC port, 0 to 65535 (0: a free one, printed; -1: no gRPC)")
      ->check(PortValidator("no gRPC"))
      ->capture_default_str();
  cmd->add_option("--metrics-port", flags.http.metrics_port,
                  "a separate port for /metrics, 0 to 65535 (-1: on the HTTP port only)")
      ->check(PortValidator("/metrics on the HTTP port only"))
      ->capture_default_str();
  // gRPC takes the limit as an int of bytes: 2047 MiB is the most it can say.
  cmd->add_option("--max-body-mb", flags.max_body_mb,
                  "largest request body (HTTP 413 / gRPC RESOURCE_EXHAUSTED beyond), 1 to 2047")
      ->check(CLI::Range(1, 2047))
      ->capture_default_str();
  cmd->add_option("--max-answer-mb", flags.max_answer_mb,
                  "largest answer to one request, as it is written (JSON text or binary), checked before it runs "
                  "(HTTP 400 / gRPC INVALID_ARGUMENT beyond), 1 to 2047")
      ->check(CLI::Range(1, 2047))
      ->capture_default_str();
  cmd->add_option("--max-inflight-bytes", flags.max_inflight_bytes,
                  "request bodies, inputs and answers the server holds at once, over every connection; beyond, "
                  "new requests get HTTP 503 with Retry-After / gRPC UNAVAILABLE (default: room for four of the "
                  "largest bodies or an eighth of the memory, whichever is less)");
  cmd->add_option("--drain-timeout-s", flags.drain_timeout_s,
                  "after SIGTERM or SIGINT, answer the requests in progress for at most this long, then exit 1 (a "
                  "second signal exits at once)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_option("--http-max-connections", flags.http.max_connections,
                  "open HTTP connections; further clients wait in the listen backlog")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_flag("--http-workers", flags.http_workers,
                "run every batch on the core's workers, so that the HTTP I/O thread never pauses for a run "
                "(many cores, long runs)");
  cmd->add_option("--http-idle-timeout-s", flags.http.idle_timeout_s,
                  "close an HTTP connection idle (or stalled mid-read or mid-write) this long")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--http-busy-poll-us", flags.http.busy_poll_us,
                  "after the last event the HTTP I/O thread polls this long before sleeping (low latency at low "
                  "load, for some CPU)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--grpc-busy-poll-us", flags.grpc.busy_poll_us, "the same for the thread that takes gRPC infer calls")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
}

/// --access-log and the overrides of every model's configuration.
void RegisterConfigOverrideFlags(CLI::App* cmd, ServeFlags& flags) {
  cmd->add_option("--access-log", flags.access_log, "one JSON line per request to FILE ('-': stderr)");
  cmd->add_option("--instances", flags.overrides.instances, "session instances per model (overrides the config)");
  cmd->add_option("--intra-op-threads", flags.overrides.intra_op_threads,
                  "intra-op threads per instance; 0: cores / instances");
  cmd->add_option("--provider", flags.overrides.provider, "execution provider (cpu, cuda, ...)");
  cmd->add_option("--max-batch-size", flags.overrides.max_batch_size, "rows per run; 0: no batching");
  cmd->add_option("--max-queue-delay-us", flags.overrides.max_queue_delay_us, "how long a batch may wait to fill");
  cmd->add_option("--max-queue-size", flags.overrides.max_queue_size,
                  "queued requests beyond which new ones get 503 / UNAVAILABLE");
  cmd->add_option("--timeout-us", flags.overrides.timeout_us, "deadline of a request in the queue; 0: none");
  cmd->add_flag("--no-batching", flags.overrides.no_batching, "one request per run");
  cmd->add_flag("--no-bucketing", flags.overrides.no_bucketing, "ignore the configs' bucketing");
}

}  // namespace

void RegisterServeFlags(CLI::App* cmd, ServeFlags& flags) {
  RegisterModelFlags(cmd, flags);
  RegisterFrontEndFlags(cmd, flags);
  RegisterConfigOverrideFlags(cmd, flags);
}

serve::http::HttpOptions HttpOptionsOf(const ServeFlags& flags) {
  serve::http::HttpOptions http = flags.http;
  http.max_body_bytes = flags.max_body_mb << 20;
  http.run_on_io_thread = !flags.http_workers;
  http.server_version = ORTKIT_VERSION;
  return http;
}

serve::grpc::GrpcOptions GrpcOptionsOf(const ServeFlags& flags) {
  serve::grpc::GrpcOptions grpc = flags.grpc;
  grpc.host = flags.http.host;
  grpc.max_message_bytes = flags.max_body_mb << 20;
  grpc.server_version = ORTKIT_VERSION;
  return grpc;
}

serve::CoreOptions CoreOptionsOf(const ServeFlags& flags) {
  serve::CoreOptions core = flags.core;
  core.repository = flags.models.repository;
  if (const auto eq = flags.repository_api_key.find('='); eq != std::string::npos) {
    core.repository_key_name = flags.repository_api_key.substr(0, eq);
    core.repository_key_value = flags.repository_api_key.substr(eq + 1);
  }
  core.overrides = flags.overrides;
  core.polled = flags.models.control == serve::ModelControlMode::kPoll;
  core.limits.max_answer_bytes = flags.max_answer_mb << 20;
  core.max_inflight_bytes =
      flags.max_inflight_bytes.value_or(serve::DefaultInflightBytes(flags.max_body_mb << 20, UsableMemory()));
  return core;
}

Status CheckServeFlags(const ServeFlags& flags) {
  ORTKIT_RETURN_IF_ERROR(HttpOptionsOf(flags).Validate());
  if (flags.grpc.port >= 0) ORTKIT_RETURN_IF_ERROR(GrpcOptionsOf(flags).Validate());
  ORTKIT_RETURN_IF_ERROR(CoreOptionsOf(flags).Validate());
  if (!flags.repository_api_key.empty()) {
    const auto eq = flags.repository_api_key.find('=');
    const std::string name = flags.repository_api_key.substr(0, eq);
    const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '-' || c == '_';
    });
    if (eq == std::string::npos || !token || eq + 1 == flags.repository_api_key.size()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "--repository-api-key takes NAME=VALUE: a header name (letters, digits, '-', '_') and a "
                       "value that is not empty");
    }
    if (!flags.core.repository_api) {
      return MakeError(ErrorKind::kInvalidArgument, "--repository-api-key goes with --repository-api");
    }
  }
  if (!(flags.poll_seconds >= 0.1 && flags.poll_seconds <= 86400)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--poll-seconds {}: give 0.1 to 86400", flags.poll_seconds));
  }
  if (flags.core.repository_api && flags.models.repository.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--repository-api loads and unloads the models of a "
                     "--model-repository DIR: give one");
  }
  return CheckPortsDiffer(flags);
}

}  // namespace ortkit::cli
