#pragma once
// The one adapter over ONNX Runtime. Nothing else in ortkit includes onnxruntime headers'
// exceptions in its control flow: every Ort::Exception is caught here and returned as an Error.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <onnxruntime_cxx_api.h>

#include "ortkit/core/result.h"

namespace ortkit {

/// The process-wide ONNX Runtime environment. Create one in main and pass it down.
/// Thread-safe after construction.
class Runtime {
 public:
  struct Options {
    std::string log_id = "ortkit";
    /// Failures come back as Errors; ONNX Runtime logging them as well would print each one twice.
    OrtLoggingLevel log_level = ORT_LOGGING_LEVEL_FATAL;
  };

  static Result<std::unique_ptr<Runtime>> Create(const Options& options);
  static Result<std::unique_ptr<Runtime>> Create() { return Create(Options{}); }

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Ort::Env& env() { return env_; }
  /// "1.29.0"
  static std::string Version();
  /// Provider names as ONNX Runtime spells them ("CPUExecutionProvider", ...).
  static std::vector<std::string> AvailableProviders();

 private:
  explicit Runtime(Ort::Env env) : env_(std::move(env)) {}
  Ort::Env env_;
};

/// Execution providers ortkit knows, by their short names on the command line.
struct ProviderInfo {
  std::string_view short_name;  ///< "cpu", "cuda"
  std::string_view ort_name;    ///< "CPUExecutionProvider"
};
/// nullptr for an unknown short name.
const ProviderInfo* FindProvider(std::string_view short_name);
std::vector<std::string_view> KnownProviderNames();

struct SessionConfig {
  std::string provider = "cpu";
  int intra_op_threads = 0;  ///< 0: ONNX Runtime's default
  int inter_op_threads = 0;
  GraphOptimizationLevel optimization_level = ORT_ENABLE_ALL;
  bool sequential_execution = true;
  bool enable_memory_pattern = true;
  bool enable_cpu_arena = true;
  bool enable_profiling = false;
  std::string profile_prefix;  ///< file prefix for the profiler's JSON trace
};

/// An ONNX Runtime session. Run() is thread-safe, as Ort::Session::Run is.
class Session {
 public:
  /// Loads `model_path` with `config`. The Error's message is the runtime's own message,
  /// prefixed with what ortkit was doing; translate it with TranslateRuntimeError().
  static Result<std::unique_ptr<Session>> Create(Runtime& runtime, const std::filesystem::path& model_path,
                                                 const SessionConfig& config);
  /// Same from bytes in memory (external data, if any, is resolved against the current directory).
  static Result<std::unique_ptr<Session>> CreateFromBytes(Runtime& runtime, std::string_view model_bytes,
                                                          const SessionConfig& config);

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Ort::Session& ort() { return session_; }
  const SessionConfig& config() const { return config_; }

 private:
  Session(Ort::Session session, SessionConfig config) : session_(std::move(session)), config_(std::move(config)) {}
  Ort::Session session_;
  SessionConfig config_;
};

/// One input to feed by name: a row-major float32 or int64 tensor. ONNX Runtime reads the
/// values in place, without a copy.
struct NamedBuffer {
  std::string name;
  std::vector<std::int64_t> shape;
  std::variant<std::vector<float>, std::vector<std::int64_t>> values;
};

/// Runs `session` once on `inputs`, computing every output and discarding it: enough to learn
/// whether the model runs on these inputs. Inputs the model declares but `inputs` lacks are not
/// fed, so that ONNX Runtime reports them. Fails with kInvalidArgument when a buffer's value
/// count does not match its shape or ONNX Runtime rejects the inputs, else with kRuntime; the
/// message is "running the model on PROVIDER: " and the runtime's own message (translate it with
/// TranslateRuntimeError(..., during_run = true)).
Status RunOnce(Session& session, std::span<const NamedBuffer> inputs);

/// Stops the profiler of a session created with enable_profiling and returns the trace's path.
Result<std::filesystem::path> EndProfiling(Session& session);

/// Builds Ort::SessionOptions from `config`; fails for an unavailable provider.
Result<Ort::SessionOptions> MakeSessionOptions(const SessionConfig& config);

}  // namespace ortkit
