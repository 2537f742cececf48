#include "ortkit/runtime/runtime.h"

#include "ortkit/runtime/ort_handles.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ortkit {
namespace {

constexpr std::array kProviders = std::to_array<ProviderInfo>({
    {"cpu", "CPUExecutionProvider"},
    {"cuda", "CUDAExecutionProvider", true},
    {"tensorrt", "TensorrtExecutionProvider", true},
    {"openvino", "OpenVINOExecutionProvider"},
    {"dnnl", "DnnlExecutionProvider"},
    {"xnnpack", "XnnpackExecutionProvider"},
});

// ONNX Runtime says only "Failed to load shared library" when a provider library will not load, and logs
// the loader's reason (the missing CUDA library) where ortkit's log level hides it: ask the loader again.
std::string ProviderLoadError(const std::string& provider, std::string_view message) {
  if (message.find("Failed to load shared library") == std::string_view::npos) return "";
  const auto folder = Runtime::LibraryPath().parent_path();
  if (folder.empty()) return "";
  const auto library = (folder / fmt::format("libonnxruntime_providers_{}.so", provider)).string();
  void* handle = dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle != nullptr) {
    dlclose(handle);
    return "";
  }
  const char* reason = dlerror();
  return reason == nullptr ? "" : fmt::format(" (Failed to load library {} with error: {})", library, reason);
}

GraphOptimizationLevel OrtOptimizationLevel(OptimizationLevel level) {
  switch (level) {
    case OptimizationLevel::kOff: return ORT_DISABLE_ALL;
    case OptimizationLevel::kBasic: return ORT_ENABLE_BASIC;
    case OptimizationLevel::kExtended: return ORT_ENABLE_EXTENDED;
    case OptimizationLevel::kLayout: return ORT_ENABLE_LAYOUT;
    case OptimizationLevel::kAll: return ORT_ENABLE_ALL;
  }
  return ORT_ENABLE_ALL;
}

Error RuntimeError(std::string what, const Ort::Exception& e) {
  return MakeError(ErrorKind::kRuntime, std::move(what) + ": " + e.what());
}

}  // namespace

int OptimizationLevelNumber(OptimizationLevel level) { return static_cast<int>(OrtOptimizationLevel(level)); }

std::optional<OptimizationLevel> OptimizationLevelOfNumber(int number) {
  for (auto level :
       {OptimizationLevel::kOff, OptimizationLevel::kBasic, OptimizationLevel::kExtended, OptimizationLevel::kAll}) {
    if (OptimizationLevelNumber(level) == number) return level;
  }
  return std::nullopt;
}

struct Runtime::Impl {
  Ort::Env env;
};

struct Session::Impl {
  Ort::Session session;
};

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;
Ort::Env& OrtEnv(Runtime& runtime) { return runtime.impl_->env; }

Session::Session(std::unique_ptr<Impl> impl, SessionConfig config)
    : impl_(std::move(impl)), config_(std::move(config)) {}
Session::~Session() = default;
Ort::Session& OrtSession(Session& session) { return session.impl_->session; }

Result<std::unique_ptr<Runtime>> Runtime::Create(const Options& options) {
  try {
    Ort::Env env(static_cast<OrtLoggingLevel>(options.log_level), options.log_id.c_str());
    return std::unique_ptr<Runtime>(new Runtime(std::make_unique<Runtime::Impl>(Runtime::Impl{std::move(env)})));
  } catch (const Ort::Exception& e) {
    // The machine's runtime, not a model: unavailable, as a provider that cannot start is.
    return MakeError(ErrorKind::kUnavailable, RuntimeError("creating the ONNX Runtime environment", e).message);
  }
}

std::string Runtime::Version() { return Ort::GetVersionString(); }

std::vector<std::string> Runtime::AvailableProviders() { return Ort::GetAvailableProviders(); }

std::filesystem::path Runtime::LibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&OrtGetApiBase), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const auto resolved = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname) : resolved;
}

Status CheckProviderName(std::string_view short_name) {
  if (FindProvider(short_name) != nullptr) return OkStatus();
  return MakeError(ErrorKind::kInvalidArgument, fmt::format("unknown execution provider '{}'; known: {}", short_name,
                                                            fmt::join(KnownProviderNames(), ", ")));
}

Status CheckProviderAvailable(std::string_view short_name) {
  ORTKIT_RETURN_IF_ERROR(CheckProviderName(short_name));
  const ProviderInfo* provider = FindProvider(short_name);
  const auto available = Runtime::AvailableProviders();
  if (std::find(available.begin(), available.end(), provider->ort_name) == available.end()) {
    return MakeError(
        ErrorKind::kUnavailable,
        fmt::format("execution provider '{}' ({}) is not available in this ONNX Runtime build {}; available: {}",
                    short_name, provider->ort_name, Runtime::Version(), fmt::join(available, ", ")));
  }
  return OkStatus();
}

const ProviderInfo* FindProvider(std::string_view short_name) {
  auto it = std::find_if(kProviders.begin(), kProviders.end(),
                         [&](const ProviderInfo& p) { return p.short_name == short_name; });
  return it == kProviders.end() ? nullptr : &*it;
}

std::vector<std::string_view> KnownProviderNames() {
  std::vector<std::string_view> names;
  for (const auto& p : kProviders) names.push_back(p.short_name);
  return names;
}

Result<Ort::SessionOptions> MakeSessionOptions(const SessionConfig& config) {
  ORTKIT_RETURN_IF_ERROR(CheckProviderAvailable(config.provider));
  const ProviderInfo* provider = FindProvider(config.provider);
  try {
    Ort::SessionOptions options;
    if (config.intra_op_threads > 0) options.SetIntraOpNumThreads(config.intra_op_threads);
    if (config.inter_op_threads > 0) options.SetInterOpNumThreads(config.inter_op_threads);
    options.SetGraphOptimizationLevel(OrtOptimizationLevel(config.optimization_level));
    options.SetExecutionMode(config.sequential_execution ? ORT_SEQUENTIAL : ORT_PARALLEL);
    if (!config.enable_memory_pattern) options.DisableMemPattern();
    if (!config.enable_cpu_arena) options.DisableCpuMemArena();
    if (config.enable_profiling) options.EnableProfiling(config.profile_prefix.c_str());
    if (!config.optimized_model_path.empty()) options.SetOptimizedModelFilePath(config.optimized_model_path.c_str());
    if (config.provider == "cuda") {
      OrtCUDAProviderOptionsV2* cuda = nullptr;
      Ort::ThrowOnError(Ort::GetApi().CreateCUDAProviderOptions(&cuda));
      std::unique_ptr<OrtCUDAProviderOptionsV2, decltype(Ort::GetApi().ReleaseCUDAProviderOptions)> holder(
          cuda, Ort::GetApi().ReleaseCUDAProviderOptions);
      options.AppendExecutionProvider_CUDA_V2(*cuda);
    } else if (config.provider != "cpu") {
      options.AppendExecutionProvider(std::string(provider->ort_name).substr(0, provider->ort_name.size() - 17), {});
    }
    return options;
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kUnavailable, fmt::format("configuring execution provider '{}': {}{}", config.provider,
                                                          e.what(), ProviderLoadError(config.provider, e.what())));
  }
}

Result<std::unique_ptr<Session>> Session::Create(Runtime& runtime, const std::filesystem::path& model_path,
                                                 const SessionConfig& config) {
  ORTKIT_ASSIGN_OR_RETURN(Ort::SessionOptions options, MakeSessionOptions(config));
  try {
    Ort::Session session(OrtEnv(runtime), model_path.c_str(), options);
    return std::unique_ptr<Session>(
        new Session(std::make_unique<Session::Impl>(Session::Impl{std::move(session)}), config));
  } catch (const Ort::Exception& e) {
    return RuntimeError(fmt::format("loading '{}' on {}", model_path.string(), config.provider), e);
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime,
                     fmt::format("loading '{}' on {}: {}", model_path.string(), config.provider, e.what()));
  }
}

Result<std::unique_ptr<Session>> Session::CreateFromBytes(Runtime& runtime, std::string_view model_bytes,
                                                          const SessionConfig& config) {
  ORTKIT_ASSIGN_OR_RETURN(Ort::SessionOptions options, MakeSessionOptions(config));
  try {
    Ort::Session session(OrtEnv(runtime), model_bytes.data(), model_bytes.size(), options);
    return std::unique_ptr<Session>(
        new Session(std::make_unique<Session::Impl>(Session::Impl{std::move(session)}), config));
  } catch (const Ort::Exception& e) {
    return RuntimeError(fmt::format("loading the model on {}", config.provider), e);
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime, fmt::format("loading the model on {}: {}", config.provider, e.what()));
  }
}

namespace {

Ort::Value WrapBuffer(const NamedBuffer& buffer, const Ort::MemoryInfo& memory) {
  return std::visit(
      [&](const auto& values) {
        using T = typename std::decay_t<decltype(values)>::value_type;
        // ONNX Runtime takes a mutable pointer for every tensor but never writes to a fed input.
        return Ort::Value::CreateTensor<T>(memory, const_cast<T*>(values.data()), values.size(), buffer.shape.data(),
                                           buffer.shape.size());
      },
      buffer.values);
}

Status CheckBufferShape(const NamedBuffer& buffer) {
  const std::size_t count = std::visit([](const auto& values) { return values.size(); }, buffer.values);
  if (std::any_of(buffer.shape.begin(), buffer.shape.end(), [](std::int64_t d) { return d < 0; })) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("input '{}': shape [{}] has a negative dimension",
                                                              buffer.name, fmt::join(buffer.shape, ", ")));
  }
  std::int64_t expected = 1;
  for (std::int64_t d : buffer.shape) {
    if (d != 0 && expected > std::numeric_limits<std::int64_t>::max() / d) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("input '{}': shape [{}] holds more values than memory can", buffer.name,
                                   fmt::join(buffer.shape, ", ")));
    }
    expected *= d;
  }
  if (static_cast<std::size_t>(expected) != count) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("input '{}': shape [{}] holds {} values, but {} were given", buffer.name,
                                 fmt::join(buffer.shape, ", "), expected, count));
  }
  return OkStatus();
}

}  // namespace

Status RunOnce(Session& session, std::span<const NamedBuffer> inputs) {
  for (const auto& buffer : inputs) ORTKIT_RETURN_IF_ERROR(CheckBufferShape(buffer));
  const std::string& provider = session.config().provider;
  try {
    const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
    std::vector<Ort::Value> values;
    std::vector<const char*> input_names;
    for (const auto& buffer : inputs) {
      values.push_back(WrapBuffer(buffer, memory));
      input_names.push_back(buffer.name.c_str());
    }
    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<Ort::AllocatedStringPtr> owned_output_names;
    std::vector<const char*> output_names;
    for (std::size_t i = 0; i < OrtSession(session).GetOutputCount(); ++i) {
      owned_output_names.push_back(OrtSession(session).GetOutputNameAllocated(i, allocator));
      output_names.push_back(owned_output_names.back().get());
    }
    OrtSession(session).Run(Ort::RunOptions{nullptr}, input_names.data(), values.data(), values.size(),
                            output_names.data(), output_names.size());
    return OkStatus();
  } catch (const Ort::Exception& e) {
    const ErrorKind kind =
        e.GetOrtErrorCode() == ORT_INVALID_ARGUMENT ? ErrorKind::kInvalidArgument : ErrorKind::kRuntime;
    return MakeError(kind, fmt::format("running the model on {}: {}", provider, e.what()));
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime, fmt::format("running the model on {}: {}", provider, e.what()));
  }
}

Result<std::filesystem::path> EndProfiling(Session& session) {
  try {
    Ort::AllocatorWithDefaultOptions allocator;
    auto path = OrtSession(session).EndProfilingAllocated(allocator);
    if (path == nullptr || *path.get() == '\0') {
      return MakeError(ErrorKind::kInvalidArgument, "the session was not created with profiling enabled");
    }
    return std::filesystem::path(path.get());
  } catch (const Ort::Exception& e) {
    return MakeError(ErrorKind::kRuntime, std::string("ending the profiler: ") + e.what());
  }
}

}  // namespace ortkit
