#include "ortkit/runtime/runtime.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ortkit {
namespace {

constexpr std::array kProviders = std::to_array<ProviderInfo>({
    {"cpu", "CPUExecutionProvider"},
    {"cuda", "CUDAExecutionProvider"},
    {"tensorrt", "TensorrtExecutionProvider"},
    {"openvino", "OpenVINOExecutionProvider"},
    {"dnnl", "DnnlExecutionProvider"},
    {"xnnpack", "XnnpackExecutionProvider"},
});

Error RuntimeError(std::string what, const Ort::Exception& e) {
  return MakeError(ErrorKind::kRuntime, std::move(what) + ": " + e.what());
}

}  // namespace

Result<std::unique_ptr<Runtime>> Runtime::Create(const Options& options) {
  try {
    Ort::Env env(options.log_level, options.log_id.c_str());
    return std::unique_ptr<Runtime>(new Runtime(std::move(env)));
  } catch (const Ort::Exception& e) {
    return RuntimeError("creating the ONNX Runtime environment", e);
  }
}

std::string Runtime::Version() { return Ort::GetVersionString(); }

std::vector<std::string> Runtime::AvailableProviders() { return Ort::GetAvailableProviders(); }

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
  const ProviderInfo* provider = FindProvider(config.provider);
  if (provider == nullptr) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("unknown execution provider '{}'; known: {}", config.provider,
                                 fmt::join(KnownProviderNames(), ", ")));
  }
  const auto available = Runtime::AvailableProviders();
  if (std::find(available.begin(), available.end(), provider->ort_name) == available.end()) {
    return MakeError(ErrorKind::kUnavailable,
                     fmt::format("execution provider '{}' ({}) is not available in this ONNX Runtime build {}; available: {}",
                                 config.provider, provider->ort_name, Runtime::Version(), fmt::join(available, ", ")));
  }
  try {
    Ort::SessionOptions options;
    if (config.intra_op_threads > 0) options.SetIntraOpNumThreads(config.intra_op_threads);
    if (config.inter_op_threads > 0) options.SetInterOpNumThreads(config.inter_op_threads);
    options.SetGraphOptimizationLevel(config.optimization_level);
    options.SetExecutionMode(config.sequential_execution ? ORT_SEQUENTIAL : ORT_PARALLEL);
    if (!config.enable_memory_pattern) options.DisableMemPattern();
    if (!config.enable_cpu_arena) options.DisableCpuMemArena();
    if (config.enable_profiling) options.EnableProfiling(config.profile_prefix.c_str());
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
    return MakeError(ErrorKind::kUnavailable, fmt::format("configuring execution provider '{}': {}", config.provider, e.what()));
  }
}

Result<std::unique_ptr<Session>> Session::Create(Runtime& runtime, const std::filesystem::path& model_path,
                                                 const SessionConfig& config) {
  ORTKIT_ASSIGN_OR_RETURN(Ort::SessionOptions options, MakeSessionOptions(config));
  try {
    Ort::Session session(runtime.env(), model_path.c_str(), options);
    return std::unique_ptr<Session>(new Session(std::move(session), config));
  } catch (const Ort::Exception& e) {
    return RuntimeError(fmt::format("loading '{}' on {}", model_path.string(), config.provider), e);
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime, fmt::format("loading '{}' on {}: {}", model_path.string(), config.provider, e.what()));
  }
}

Result<std::unique_ptr<Session>> Session::CreateFromBytes(Runtime& runtime, std::string_view model_bytes,
                                                          const SessionConfig& config) {
  ORTKIT_ASSIGN_OR_RETURN(Ort::SessionOptions options, MakeSessionOptions(config));
  try {
    Ort::Session session(runtime.env(), model_bytes.data(), model_bytes.size(), options);
    return std::unique_ptr<Session>(new Session(std::move(session), config));
  } catch (const Ort::Exception& e) {
    return RuntimeError(fmt::format("loading the model on {}", config.provider), e);
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kRuntime, fmt::format("loading the model on {}: {}", config.provider, e.what()));
  }
}

}  // namespace ortkit
