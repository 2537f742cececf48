// ortkit serve: the Open Inference Protocol (KServe v2) over HTTP and gRPC, with dynamic
// batching, sequence-length bucketing and N session instances per model.
#include <signal.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "failure.h"
#include "ortkit/core/files.h"
#include "ortkit/core/memory.h"
#include "ortkit/serve/grpc/grpc_server.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/model_repository.h"

namespace ortkit::cli {
namespace {

struct ServeFlags {
  serve::ModelSelection models;
  std::string host = "127.0.0.1";
  int http_port = 8000;
  int grpc_port = 8001;   // -1: no gRPC
  int metrics_port = -1;  // -1: /metrics on the HTTP port
  std::size_t max_body_mb = 64;
  std::uint64_t max_answer_mb = serve::RequestLimits{}.max_answer_bytes >> 20;
  std::optional<std::uint64_t> max_inflight_bytes;  // none: serve::DefaultInflightBytes
  int drain_timeout_s = 30;  // Triton's --exit-timeout-secs, and Kubernetes' default grace period
  int http_max_connections = 1024;
  bool http_workers = false;  // run batches on the core's workers, never on the HTTP I/O thread
  int http_busy_poll_us = 0;
  int grpc_busy_poll_us = 0;
  int http_idle_timeout_s = 60;
  std::string access_log;            // "-": stderr
  serve::ConfigOverrides overrides;  // of every model's configuration file
};

int Fail(const Error& e) { return cli::Fail("serve", e, Format::kText); }

void PrintNotes(const std::vector<std::string>& notes) {
  for (const auto& note : notes) PrintNote("serve", "note: " + note);
}

// Signals are taken by one thread with sigwait: blocked here, before any thread starts, so that
// every thread inherits the mask and none is interrupted.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Where --access-log's lines go: appended to a file, to stderr ("-"), or nowhere (""). Must
// outlive the front ends that write through Callback().
class AccessLogWriter {
 public:
  Status Open(const std::string& where) {
    if (where.empty()) return OkStatus();
    if (where != "-") {
      // A pipe would block the server at the first line no one reads, a device would swallow the log:
      // '-' writes to stderr, which a supervisor collects.
      ORTKIT_RETURN_IF_ERROR(CheckOutputFile(where, "--access-log (use '-' for stderr)"));
      file_.open(where, std::ios::app);
      if (!file_) return MakeError(ErrorKind::kIo, "--access-log: cannot write " + where);
    }
    enabled_ = true;
    return OkStatus();
  }

  serve::AccessLog Callback() {
    if (!enabled_) return {};
    return [this](const serve::AccessRecord& record) {
      const std::string line = serve::AccessRecordToJson(record) + "\n";
      std::lock_guard lock(mutex_);
      if (file_.is_open())
        file_ << line << std::flush;
      else
        PrintText(stderr, line);
    };
  }

 private:
  std::mutex mutex_;
  std::ofstream file_;
  bool enabled_ = false;
};

struct FrontEnds {
  std::unique_ptr<serve::http::HttpServer> http;  // bound, started by the caller
  std::unique_ptr<serve::grpc::GrpcServer> grpc;  // serving; null without gRPC
};

Result<FrontEnds> OpenFrontEnds(serve::InferenceCore& core, const ServeFlags& flags, const serve::AccessLog& log) {
  serve::http::HttpOptions http;
  http.host = flags.host;
  http.port = flags.http_port;
  http.metrics_port = flags.metrics_port;
  http.max_body_bytes = flags.max_body_mb << 20;
  http.max_connections = flags.http_max_connections;
  http.run_on_io_thread = !flags.http_workers;
  http.busy_poll_us = flags.http_busy_poll_us;
  http.idle_timeout_s = flags.http_idle_timeout_s;
  http.server_version = ORTKIT_VERSION;
  http.access_log = log;
  FrontEnds ends;
  ORTKIT_ASSIGN_OR_RETURN(ends.http, serve::http::HttpServer::Create(core, http));
  if (flags.grpc_port < 0) return ends;
  serve::grpc::GrpcOptions grpc;
  grpc.host = flags.host;
  grpc.port = flags.grpc_port;
  grpc.max_message_bytes = flags.max_body_mb << 20;
  grpc.server_version = ORTKIT_VERSION;
  grpc.busy_poll_us = flags.grpc_busy_poll_us;
  grpc.access_log = log;
  ORTKIT_ASSIGN_OR_RETURN(ends.grpc, serve::grpc::GrpcServer::Start(core, grpc));
  return ends;
}

void PrintListening(const ServeFlags& flags, const FrontEnds& ends, const serve::InferenceCore& core) {
  std::string line = fmt::format("listening http={}:{}", flags.host, ends.http->port());
  if (ends.grpc) line += fmt::format(" grpc={}:{}", flags.host, ends.grpc->port());
  if (ends.http->metrics_port() >= 0) line += fmt::format(" metrics={}:{}", flags.host, ends.http->metrics_port());
  PrintText(stdout, fmt::format("{} models={}\n", line, fmt::join(core.ModelNames(), ",")));
  std::fflush(stdout);
}

// Front ends first: they stop accepting and wait for the requests they hold, which the core is
// still answering; then the core drains whatever is left and joins its workers.
void Drain(FrontEnds& ends, serve::InferenceCore& core) {
  std::thread http_stop([&] { ends.http->Stop(); });
  if (ends.grpc) ends.grpc->Stop();
  http_stop.join();
  core.Shutdown();
}

// Drain() within `deadline`, or at once on a second signal: a request that takes longer (a run
// that does not end, a client that never reads its answer) must not keep the process alive past
// what its supervisor waits before SIGKILL. Returns the exit code.
int DrainWithin(FrontEnds& ends, serve::InferenceCore& core, std::chrono::seconds deadline, const sigset_t& signals) {
  std::promise<void> drained;
  auto done = drained.get_future();
  std::thread drainer([&] {
    Drain(ends, core);
    drained.set_value();
  });
  const auto give_up = std::chrono::steady_clock::now() + deadline;
  while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    const timespec now{0, 0};
    const bool again = sigtimedwait(&signals, nullptr, &now) > 0;
    if (again || std::chrono::steady_clock::now() >= give_up) {
      const std::string why =
          again ? std::string("a second signal")
                : fmt::format("the drain deadline of {} s passed (--drain-timeout-s)", deadline.count());
      PrintNote("serve", why + ": exiting with requests unanswered");
      std::fflush(nullptr);
      std::_Exit(kExitFindings);  // the drainer still holds the objects that destructors would wait for
    }
  }
  drainer.join();
  return kExitOk;
}

// A port flag's check: 0 to 65535, or -1 where `minus_one` says what -1 means ("" when it may not be
// -1). Checked here because a port is cast to 16 bits when bound: 65536 would wrap to 0 (a random
// port) and -1 to 65535.
CLI::Validator PortValidator(const std::string& minus_one) {
  return CLI::Validator(
      [minus_one](std::string& text) -> std::string {
        long long port = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
        if (error == std::errc::invalid_argument || end != text.data() + text.size())
          return "";  // not a number: CLI11 says
        if ((port >= 0 && port <= 65535 && error == std::errc()) || (port == -1 && !minus_one.empty())) return "";
        return fmt::format("{} is not a port: give 0 to 65535 (0: a free one){}", text,
                           minus_one.empty() ? "" : fmt::format(" or -1 ({})", minus_one));
      },
      "PORT");
}

// Two front ends on one port: the second could not bind, so say which flags collide before loading.
Status CheckPortsDiffer(const ServeFlags& flags) {
  auto same = [](int a, int b) { return a > 0 && a == b; };
  if (same(flags.http_port, flags.grpc_port)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--http-port and --grpc-port are both {}: give each its own port", flags.http_port));
  }
  if (same(flags.http_port, flags.metrics_port) || same(flags.grpc_port, flags.metrics_port)) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("--metrics-port {} is also {}: give it a port of its own, or -1 to serve /metrics "
                    "on the HTTP port",
                    flags.metrics_port, same(flags.http_port, flags.metrics_port) ? "--http-port" : "--grpc-port"));
  }
  return OkStatus();
}

int Serve(const ServeFlags& flags) {
  if (Status ports = CheckPortsDiffer(flags); !ports.ok()) return Fail(ports.error());
  std::vector<std::string> notes;
  auto sources = serve::ResolveModelSources(flags.models, flags.overrides, &notes);
  PrintNotes(notes);
  if (!sources.ok()) return Fail(sources.error());
  sigset_t signals = BlockStopSignals();
  auto runtime = Runtime::Create();
  if (!runtime.ok()) return Fail(runtime.error());
  serve::CoreOptions core_options;
  core_options.limits.max_answer_bytes = flags.max_answer_mb << 20;
  core_options.max_inflight_bytes =
      flags.max_inflight_bytes.value_or(serve::DefaultInflightBytes(flags.max_body_mb << 20, UsableMemory()));
  auto core = serve::InferenceCore::Create(**runtime, std::move(sources).value(), core_options);
  if (!core.ok()) return Fail(core.error());
  AccessLogWriter access_log;
  if (Status opened = access_log.Open(flags.access_log); !opened.ok()) return Fail(opened.error());
  auto ends = OpenFrontEnds(**core, flags, access_log.Callback());
  if (!ends.ok()) return Fail(ends.error());
  ends->http->Start();  // live probes answer while the models load; ready waits for them

  PrintNote("serve", fmt::format("loading {} model(s)", (*core)->ModelNames().size()));
  Status loaded = (*core)->LoadModels();
  PrintNotes((*core)->notes());
  if (!loaded.ok()) {
    ends->http->Stop();
    if (ends->grpc) ends->grpc->Stop();
    return Fail(loaded.error());
  }
  PrintListening(flags, *ends, **core);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  PrintNote("serve", fmt::format("{}: draining", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"));
  const int code = DrainWithin(*ends, **core, std::chrono::seconds(flags.drain_timeout_s), signals);
  PrintNote("serve", "stopped");
  return code;
}

}  // namespace

void RegisterServe(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve models over the Open Inference Protocol (KServe v2): HTTP and gRPC");
  cmd->add_option("--model", flags->models.models,
                  "NAME=PATH of an ONNX model to serve (repeatable; a bare PATH is named after the file)");
  cmd->add_option("--config", flags->models.configs,
                  "serving configuration (JSON, docs/serving.md) of the model; NAME=FILE with several models");
  cmd->add_option("--model-repository", flags->models.repository,
                  "folder of NAME/model.onnx with optional NAME/config.json");
  cmd->add_option("--host", flags->host, "address to bind")->capture_default_str();
  cmd->add_option("--http-port", flags->http_port, "HTTP port, 0 to 65535 (0: a free one, printed)")
      ->check(PortValidator(""))
      ->capture_default_str();
  cmd->add_option("--grpc-port", flags->grpc_port, "gRPC port, 0 to 65535 (0: a free one, printed; -1: no gRPC)")
      ->check(PortValidator("no gRPC"))
      ->capture_default_str();
  cmd->add_option("--metrics-port", flags->metrics_port,
                  "a separate port for /metrics, 0 to 65535 (-1: on the HTTP port only)")
      ->check(PortValidator("/metrics on the HTTP port only"))
      ->capture_default_str();
  // gRPC takes the limit as an int of bytes: 2047 MiB is the most it can say.
  cmd->add_option("--max-body-mb", flags->max_body_mb,
                  "largest request body (HTTP 413 / gRPC RESOURCE_EXHAUSTED beyond), 1 to 2047")
      ->check(CLI::Range(1, 2047))
      ->capture_default_str();
  cmd->add_option("--max-answer-mb", flags->max_answer_mb,
                  "largest answer to one request, as it is written (JSON text or binary), checked before it runs "
                  "(HTTP 400 / gRPC INVALID_ARGUMENT beyond), 1 to 2047")
      ->check(CLI::Range(1, 2047))
      ->capture_default_str();
  cmd->add_option("--max-inflight-bytes", flags->max_inflight_bytes,
                  "request bodies, inputs and answers the server holds at once, over every connection; beyond, "
                  "new requests get HTTP 503 with Retry-After / gRPC UNAVAILABLE (default: room for four of the "
                  "largest bodies or an eighth of the memory, whichever is less)");
  cmd->add_option("--drain-timeout-s", flags->drain_timeout_s,
                  "after SIGTERM or SIGINT, answer the requests in progress for at most this long, then exit 1 (a "
                  "second signal exits at once)")
      ->check(CLI::Range(1, 3600))
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
  cmd->add_option("--instances", flags->overrides.instances, "session instances per model (overrides the config)");
  cmd->add_option("--intra-op-threads", flags->overrides.intra_op_threads,
                  "intra-op threads per instance; 0: cores / instances");
  cmd->add_option("--provider", flags->overrides.provider, "execution provider (cpu, cuda, ...)");
  cmd->add_option("--max-batch-size", flags->overrides.max_batch_size, "rows per run; 0: no batching");
  cmd->add_option("--max-queue-delay-us", flags->overrides.max_queue_delay_us, "how long a batch may wait to fill");
  cmd->add_option("--max-queue-size", flags->overrides.max_queue_size,
                  "queued requests beyond which new ones get 503 / UNAVAILABLE");
  cmd->add_option("--timeout-us", flags->overrides.timeout_us, "deadline of a request in the queue; 0: none");
  cmd->add_flag("--no-batching", flags->overrides.no_batching, "one request per run");
  cmd->add_flag("--no-bucketing", flags->overrides.no_bucketing, "ignore the configs' bucketing");
  cmd->callback([flags, &exit_code] { exit_code = Serve(*flags); });
}

}  // namespace ortkit::cli
