// ortkit serve: the Open Inference Protocol (KServe v2) over HTTP and gRPC, with dynamic
// batching, sequence-length bucketing and N session instances per model.
#include <signal.h>

#include <chrono>
#include <cmath>
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
#include "ortkit/serve/grpc/grpc_server.h"
#include "ortkit/serve/http/http_server.h"
#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/model_repository.h"
#include "ortkit/serve/repository_poller.h"
#include "serve_flags.h"

namespace ortkit::cli {
namespace {

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

// What reaches the core from outside: the front ends, and the repository's files under --model-control poll.
struct FrontEnds {
  std::unique_ptr<serve::http::HttpServer> http;    // bound, started by the caller
  std::unique_ptr<serve::grpc::GrpcServer> grpc;    // serving; null without gRPC
  std::unique_ptr<serve::RepositoryPoller> poller;  // started by the caller; null unless polling
};

Result<FrontEnds> OpenFrontEnds(serve::InferenceCore& core, const ServeFlags& flags, const serve::AccessLog& log) {
  serve::http::HttpOptions http = HttpOptionsOf(flags);
  http.access_log = log;
  FrontEnds ends;
  ORTKIT_ASSIGN_OR_RETURN(ends.http, serve::http::HttpServer::Create(core, http));
  if (flags.models.control == serve::ModelControlMode::kPoll) {
    // The baseline digests are taken now, before the models load: a file changed during the load is seen.
    const auto period = std::chrono::milliseconds(std::llround(flags.poll_seconds * 1000));
    ends.poller = std::make_unique<serve::RepositoryPoller>(core, flags.models.repository, period,
                                                            [](const std::string& line) { PrintNote("serve", line); });
  }
  if (flags.grpc.port < 0) return ends;
  serve::grpc::GrpcOptions grpc = GrpcOptionsOf(flags);
  grpc.access_log = log;
  ORTKIT_ASSIGN_OR_RETURN(ends.grpc, serve::grpc::GrpcServer::Start(core, grpc));
  return ends;
}

void PrintListening(const ServeFlags& flags, const FrontEnds& ends, const serve::InferenceCore& core) {
  const std::string& host = flags.http.host;
  std::string line = fmt::format("listening http={}:{}", host, ends.http->port());
  if (ends.grpc) line += fmt::format(" grpc={}:{}", host, ends.grpc->port());
  if (ends.http->metrics_port() >= 0) line += fmt::format(" metrics={}:{}", host, ends.http->metrics_port());
  PrintText(stdout, fmt::format("{} models={}\n", line, fmt::join(core.ModelNames(), ",")));
  std::fflush(stdout);
}

// Front ends first: they stop accepting and wait for the requests they hold, which the core is
// still answering; then the core drains whatever is left and joins its workers.
void Drain(FrontEnds& ends, serve::InferenceCore& core) {
  if (ends.poller) ends.poller->Stop();  // no new load; one under way ends once the core has shut down
  std::thread http_stop([&] { ends.http->Stop(); });
  if (ends.grpc) ends.grpc->Stop();
  http_stop.join();
  core.Shutdown();
  ends.poller.reset();
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

int Serve(const ServeFlags& flags) {
  if (Status checked = CheckServeFlags(flags); !checked.ok()) return Fail(checked.error());
  std::vector<std::string> notes;
  auto sources = serve::ResolveModelSources(flags.models, flags.overrides, &notes);
  PrintNotes(notes);
  if (!sources.ok()) return Fail(sources.error());
  sigset_t signals = BlockStopSignals();
  auto runtime = Runtime::Create();
  if (!runtime.ok()) return Fail(runtime.error());
  auto core = serve::InferenceCore::Create(**runtime, std::move(sources).value(), CoreOptionsOf(flags));
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
  if (ends->poller) ends->poller->Start();
  if (flags.core.reload_policy == serve::ReloadPolicy::kUnloadFirst) {
    PrintNote("serve",
              "--reload-policy unload-first: a reload unloads the served copy before it loads the new one; "
              "the model's requests get 503 until that one is ready");
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
  RegisterServeFlags(cmd, *flags);
  cmd->callback([flags, &exit_code] { exit_code = Serve(*flags); });
}

}  // namespace ortkit::cli
