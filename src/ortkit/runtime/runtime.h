#pragma once
// The one adapter over ONNX Runtime. Nothing else in ortkit includes onnxruntime headers'
// exceptions in its control flow: every Ort::Exception is caught here and returned as an Error.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ortkit/core/result.h"

namespace Ort {
struct Env;
struct Session;
}  // namespace Ort

namespace ortkit {

/// The least severe message ONNX Runtime prints itself (its OrtLoggingLevel).
enum class LogLevel { kVerbose, kInfo, kWarning, kError, kFatal };

/// How much ONNX Runtime rewrites the graph before running it (its GraphOptimizationLevel).
enum class OptimizationLevel { kOff, kBasic, kExtended, kLayout, kAll };

/// The number ONNX Runtime's tools, ortkit's --opt-level and serving configs use: 0, 1, 2, 3, 99.
int OptimizationLevelNumber(OptimizationLevel level);
/// The level of a number --opt-level and serving configs accept (0, 1, 2, 99); nullopt otherwise.
std::optional<OptimizationLevel> OptimizationLevelOfNumber(int number);

/// The process-wide ONNX Runtime environment. Create one in main and pass it down.
/// Thread-safe after construction.
class Runtime {
 public:
  struct Options {
    std::string log_id = "ortkit";
    /// Failures come back as Errors; ONNX Runtime logging them as well would print each one twice.
    LogLevel log_level = LogLevel::kFatal;
  };

  static Result<std::unique_ptr<Runtime>> Create(const Options& options);
  static Result<std::unique_ptr<Runtime>> Create() { return Create(Options{}); }

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  /// "1.29.0"
  static std::string Version();
  /// Provider names as ONNX Runtime spells them ("CPUExecutionProvider", ...).
  static std::vector<std::string> AvailableProviders();
  /// The file of the ONNX Runtime library this process loaded (the dynamic loader's choice, which
  /// may not be the one ortkit was built against); empty when the loader cannot say.
  static std::filesystem::path LibraryPath();

 private:
  struct Impl;
  explicit Runtime(std::unique_ptr<Impl> impl);
  friend Ort::Env& OrtEnv(Runtime& runtime);  // runtime/ort_handles.h
  std::unique_ptr<Impl> impl_;
};

/// Execution providers ortkit knows, by their short names on the command line.
struct ProviderInfo {
  std::string_view short_name;  ///< "cpu", "cuda"
  std::string_view ort_name;    ///< "CPUExecutionProvider"
  bool device_memory = false;   ///< outputs live in the device's memory ("Cuda"), not the host's
};
/// nullptr for an unknown short name.
const ProviderInfo* FindProvider(std::string_view short_name);
std::vector<std::string_view> KnownProviderNames();
/// Whether ortkit knows `short_name`: kInvalidArgument "unknown execution provider 'X'; known: cpu,
/// cuda, ..." otherwise. Every command and configuration file checks provider names with it.
Status CheckProviderName(std::string_view short_name);
/// Whether this ONNX Runtime build can run `short_name`: kInvalidArgument "unknown execution provider 'X';
/// known: ..." or kUnavailable "execution provider 'X' (XExecutionProvider) is not available in this ONNX
/// Runtime build 1.29.0; available: ..." (the text the diagnosis of a missing provider recognises).
Status CheckProviderAvailable(std::string_view short_name);

struct SessionConfig {
  std::string provider = "cpu";
  int intra_op_threads = 0;  ///< 0: ONNX Runtime's default
  int inter_op_threads = 0;
  OptimizationLevel optimization_level = OptimizationLevel::kAll;
  bool sequential_execution = true;
  bool enable_memory_pattern = true;
  bool enable_cpu_arena = true;
  bool enable_profiling = false;
  std::string profile_prefix;  ///< file prefix for the profiler's JSON trace
  /// When set, ONNX Runtime writes the graph it optimised at session creation to this file (an ONNX model
  /// at the basic level, which rewrites with standard operators only).
  std::filesystem::path optimized_model_path;
};

/// An ONNX Runtime session. Running it is thread-safe, as Ort::Session::Run is.
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
  ~Session();

  const SessionConfig& config() const { return config_; }

 private:
  struct Impl;
  Session(std::unique_ptr<Impl> impl, SessionConfig config);
  friend Ort::Session& OrtSession(Session& session);  // runtime/ort_handles.h
  std::unique_ptr<Impl> impl_;
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

}  // namespace ortkit
