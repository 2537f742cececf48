#pragma once
// Asking one execution provider to run a tiny model for real: whether its session is created, where the
// nodes ran (the profiler's placement: a session asked for CUDA can still run everything on the CPU), and
// whether its numbers match the CPU's. `env` runs it for CUDA.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/runtime/runtime.h"

namespace ortkit {

struct ProviderProbe {
  std::string provider;  ///< ortkit's short name: "cuda"
  std::string error;     ///< empty when the session was created and ran; the runtime's message otherwise
  std::vector<std::pair<std::string, std::int64_t>> placement;  ///< nodes per ONNX Runtime provider, most first
  std::vector<std::string> cpu_fallbacks;  ///< "Relu 'relu'": on the CPU although another provider was asked
  std::string placement_error;             ///< why the placement is unknown; empty when it is known
  double max_abs_diff = -1;                ///< its output against the CPU's; -1 when not compared

  bool Ran() const { return error.empty(); }
  /// Whether any node ran on the provider asked for (false when the placement is unknown).
  bool UsedProvider() const;
  /// "CUDAExecutionProvider 3 nodes, CPUExecutionProvider 1 node"; "unknown" without a placement.
  std::string PlacementText() const;
  /// "ran on CUDAExecutionProvider 3 nodes; matches the CPU (max |diff| 0)", or the error.
  std::string Describe() const;
  nlohmann::json ToJson() const;
};

/// The probe model: y = Relu(x · W + b) with x float[2, 8]: operators every provider implements.
std::string ProviderProbeModel();

/// Creates a session of the probe model on `provider` (optimisations off, so that its nodes stay
/// the model's), runs it once with the profiler on, and compares its output with the CPU's. Never throws.
ProviderProbe ProbeProvider(Runtime& runtime, std::string_view provider);

}  // namespace ortkit
