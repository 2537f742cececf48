// ortkit serve: the Open Inference Protocol (KServe v2) over HTTP and gRPC, with dynamic
// batching, sequence-length bucketing and N session instances per model.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "commands.h"
#include "ortkit/serve/grpc/grpc_server.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/model_repository.h"

namespace ortkit::cli {
namespace {

struct ServeFlags {
  std::vector<std::string> models;   // NAME=PATH
  std::vector<std::string> configs;  // FILE, or NAME=FILE with several models
  std::string repository;
  std::string host = "127.0.0.1";
  int http_port = 8000;
  int grpc_port = 8001;   // -1: no gRPC
  int metrics_port = -1;  // -1: /metrics on the HTTP port
  std::size_t max_body_mb = 64;
  int http_max_connections = 1024;
  bool http_workers = false;  // run batches on the core's workers, never on the HTTP I/O thread
  int http_busy_poll_us = 0;
  int grpc_busy_poll_us = 0;
  int http_idle_timeout_s = 60;
  std::string access_log;  // "-": stderr
  // Overrides of every model's configuration file (unset: the file's value).
  std::optional<int> instances;
  std::optional<int> intra_op_threads;
  std::optional<std::string> provider;
  std::optional<int> max_batch_size;
  std::optional<std::int64_t> max_queue_delay_us;
  std::optional<int> max_queue_size;
  std::optional<std::int64_t> timeout_us;
  bool no_batching = false;
  bool no_bucketing = false;
};

void Override(const ServeFlags& f, serve::ModelConfig* c) {
  if (f.instances) c->instances = *f.instances;
  if (f.intra_op_threads) c->session.intra_op_threads = *f.intra_op_threads;
  if (f.provider) c->session.provider = *f.provider;
  if (f.max_batch_size) {
    c->batching.max_batch_size = *f.max_batch_size;
    auto& preferred = c->batching.preferred_batch_sizes;
    preferred.erase(std::remove_if(preferred.begin(), preferred.end(), [&](int s) { return s > *f.max_batch_size; }),
                    preferred.end());
  }
  if (f.max_queue_delay_us) c->batching.max_queue_delay_us = *f.max_queue_delay_us;
  if (f.max_queue_size) c->batching.max_queue_size = *f.max_queue_size;
  if (f.timeout_us) c->batching.timeout_us = *f.timeout_us;
  if (f.no_batching) c->batching.enabled = false;
  if (f.no_bucketing) c->bucketing.enabled = false;
}

Result<std::vector<serve::ModelSource>> Sources(const ServeFlags& f) {
  if (f.models.empty() == f.repository.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "give --model NAME=PATH (one or more) or --model-repository DIR");
  }
  std::vector<serve::ModelSource> sources;
  if (!f.repository.empty()) {
    if (!f.configs.empty()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "--config goes with --model; in a repository put DIR/NAME/config.json");
    }
    ORTKIT_ASSIGN_OR_RETURN(auto scan, serve::ScanModelRepository(f.repository));
    for (const auto& note : scan.notes) std::fprintf(stderr, "ortkit serve: note: %s\n", note.c_str());
    sources = std::move(scan.models);
  } else {
    // --config FILE applies to the only model; with several, --config NAME=FILE.
    std::map<std::string, std::filesystem::path> configs;
    for (const auto& c : f.configs) {
      const auto eq = c.find('=');
      if (eq != std::string::npos)
        configs[c.substr(0, eq)] = c.substr(eq + 1);
      else if (f.models.size() == 1)
        configs[""] = c;
      else
        return MakeError(ErrorKind::kInvalidArgument,
                         fmt::format("--config {}: with several models write --config NAME=FILE", c));
    }
    for (const auto& m : f.models) {
      const auto eq = m.find('=');
      const std::string name = eq == std::string::npos ? "" : m.substr(0, eq);
      std::optional<std::filesystem::path> config;
      if (configs.count(name))
        config = configs[name];
      else if (configs.count(""))
        config = configs[""];
      configs.erase(name);
      ORTKIT_ASSIGN_OR_RETURN(auto source, serve::ModelFromFlag(m, config));
      sources.push_back(std::move(source));
    }
    configs.erase("");
    if (!configs.empty()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--config {}=...: no --model of that name", configs.begin()->first));
    }
  }
  for (auto& s : sources) {
    Override(f, &s.config);
    ORTKIT_RETURN_IF_ERROR(serve::ValidateModelConfig(s.config, fmt::format("model '{}'", s.name)));
  }
  return sources;
}

int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
    case ErrorKind::kNotFound:
    case ErrorKind::kIo:
    case ErrorKind::kUnavailable: return kExitUsage;
    case ErrorKind::kInternal: return kExitInternal;
    default: return kExitFindings;
  }
}

int Serve(const ServeFlags& flags) {
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "ortkit serve: %s\n", e.message.c_str());
    return ExitCodeFor(e.kind);
  };
  auto sources = Sources(flags);
  if (!sources.ok()) return fail(sources.error());

  // Signals are taken by one thread with sigwait: blocked here, before any thread starts, so that
  // every thread inherits the mask and none is interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto runtime = Runtime::Create();
  if (!runtime.ok()) return fail(runtime.error());
  auto core = serve::InferenceCore::Create(**runtime, std::move(sources).value(), serve::CoreOptions{});
  if (!core.ok()) return fail(core.error());

  std::mutex log_mutex;
  std::ofstream log_file;
  serve::AccessLog access_log;
  if (!flags.access_log.empty()) {
    if (flags.access_log != "-") {
      log_file.open(flags.access_log, std::ios::app);
      if (!log_file) return fail(MakeError(ErrorKind::kIo, "--access-log: cannot write " + flags.access_log));
    }
    access_log = [&](const serve::AccessRecord& record) {
      const std::string line = serve::AccessRecordToJson(record) + "\n";
      std::lock_guard lock(log_mutex);
      if (log_file.is_open())
        log_file << line << std::flush;
      else
        std::fputs(line.c_str(), stderr);
    };
  }

  serve::http::HttpOptions http_options;
  http_options.host = flags.host;
  http_options.port = flags.http_port;
  http_options.metrics_port = flags.metrics_port;
  http_options.max_body_bytes = flags.max_body_mb << 20;
  http_options.max_connections = flags.http_max_connections;
  http_options.run_on_io_thread = !flags.http_workers;
  http_options.busy_poll_us = flags.http_busy_poll_us;
  http_options.idle_timeout_s = flags.http_idle_timeout_s;
  http_options.server_version = ORTKIT_VERSION;
  http_options.access_log = access_log;
  auto http = serve::http::HttpServer::Create(**core, http_options);
  if (!http.ok()) return fail(http.error());
  std::unique_ptr<serve::grpc::GrpcServer> grpc;
  if (flags.grpc_port >= 0) {
    serve::grpc::GrpcOptions grpc_options;
    grpc_options.host = flags.host;
    grpc_options.port = flags.grpc_port;
    grpc_options.max_message_bytes = flags.max_body_mb << 20;
    grpc_options.server_version = ORTKIT_VERSION;
    grpc_options.busy_poll_us = flags.grpc_busy_poll_us;
    grpc_options.access_log = access_log;
    auto started = serve::grpc::GrpcServer::Start(**core, grpc_options);
    if (!started.ok()) return fail(started.error());
    grpc = std::move(started).value();
  }
  (*http)->Start();  // live probes answer while the models load; ready waits for them

  std::fprintf(stderr, "ortkit serve: loading %zu model(s)\n", (*core)->ModelNames().size());
  Status loaded = (*core)->LoadModels();
  for (const auto& note : (*core)->notes()) std::fprintf(stderr, "ortkit serve: note: %s\n", note.c_str());
  if (!loaded.ok()) {
    (*http)->Stop();
    if (grpc) grpc->Stop();
    return fail(loaded.error());
  }
  std::string line = fmt::format("listening http={}:{}", flags.host, (*http)->port());
  if (grpc) line += fmt::format(" grpc={}:{}", flags.host, grpc->port());
  if ((*http)->metrics_port() >= 0) line += fmt::format(" metrics={}:{}", flags.host, (*http)->metrics_port());
  std::printf("%s models=%s\n", line.c_str(), fmt::format("{}", fmt::join((*core)->ModelNames(), ",")).c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "ortkit serve: %s: draining\n", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  // Front ends first: they stop accepting and wait for the requests they hold, which the core
  // is still answering; then the core drains whatever is left and joins its workers.
  std::thread http_stop([&] { (*http)->Stop(); });
  if (grpc) grpc->Stop();
  http_stop.join();
  (*core)->Shutdown();
  std::fprintf(stderr, "ortkit serve: stopped\n");
  return kExitOk;
}

}  // namespace

void RegisterServe(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve models over the Open Inference Protocol (KServe v2): HTTP and gRPC");
  cmd->add_option("--model", flags->models,
                  "NAME=PATH of an ONNX model to serve (repeatable; a bare PATH is named after the file)");
  cmd->add_option("--config", flags->configs,
                  "serving configuration (JSON, docs/serving.md) of the model; NAME=FILE with several models");
  cmd->add_option("--model-repository", flags->repository, "folder of NAME/model.onnx with optional NAME/config.json");
  cmd->add_option("--host", flags->host, "address to bind")->capture_default_str();
  cmd->add_option("--http-port", flags->http_port, "HTTP port (0: a free one, printed)")->capture_default_str();
  cmd->add_option("--grpc-port", flags->grpc_port, "gRPC port (0: a free one, printed; -1: no gRPC)")
      ->capture_default_str();
  cmd->add_option("--metrics-port", flags->metrics_port, "a separate port for /metrics (-1: on the HTTP port only)")
      ->capture_default_str();
  // gRPC takes the limit as an int of bytes: 2047 MiB is the most it can say.
  cmd->add_option("--max-body-mb", flags->max_body_mb,
                  "largest request body (HTTP 413 / gRPC RESOURCE_EXHAUSTED beyond), 1 to 2047")
      ->check(CLI::Range(1, 2047))
      ->capture_default_str();
  cmd->add_option("--http-max-connections", flags->http_max_connections,
                  "open HTTP connections; further clients wait in the listen backlog")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_flag("--http-workers", flags->http_workers,
                "run every batch on the core's workers, so that the HTTP I/O thread never pauses for a run "
                "(many cores, long runs)");
  cmd->add_option("--http-idle-timeout-s", flags->http_idle_timeout_s,
                  "close an HTTP connection idle (or stalled mid-read or mid-write) this long")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--http-busy-poll-us", flags->http_busy_poll_us,
                  "after the last event the HTTP I/O thread polls this long before sleeping (low latency at low "
                  "load, for some CPU)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--grpc-busy-poll-us", flags->grpc_busy_poll_us,
                  "the same for the thread that takes gRPC infer calls")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--access-log", flags->access_log, "one JSON line per request to FILE ('-': stderr)");
  cmd->add_option("--instances", flags->instances, "session instances per model (overrides the config)");
  cmd->add_option("--intra-op-threads", flags->intra_op_threads, "intra-op threads per instance; 0: cores / instances");
  cmd->add_option("--provider", flags->provider, "execution provider (cpu, cuda, ...)");
  cmd->add_option("--max-batch-size", flags->max_batch_size, "rows per run; 0: no batching");
  cmd->add_option("--max-queue-delay-us", flags->max_queue_delay_us, "how long a batch may wait to fill");
  cmd->add_option("--max-queue-size", flags->max_queue_size,
                  "queued requests beyond which new ones get 503 / UNAVAILABLE");
  cmd->add_option("--timeout-us", flags->timeout_us, "deadline of a request in the queue; 0: none");
  cmd->add_flag("--no-batching", flags->no_batching, "one request per run");
  cmd->add_flag("--no-bucketing", flags->no_bucketing, "ignore the configs' bucketing");
  cmd->callback([flags, &exit_code] { exit_code = Serve(*flags); });
}

}  // namespace ortkit::cli
