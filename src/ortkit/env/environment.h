#pragma once
// `ortkit env`: the ONNX Runtime installs a model meets, as one report of diagnoses. ortkit's own
// runtime (the library the loader really chose, its providers), the ONNX Runtime distributions of a
// Python environment (conflicting pairs, which one owns the package files, what import reports),
// and the GPU stack (driver, the CUDA and cuDNN libraries each GPU build needs, whether a session
// asked for CUDA gets it).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/env/provider_probe.h"
#include "ortkit/env/python_probe.h"
#include "ortkit/env/shared_libraries.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit {

/// What one ONNX Runtime GPU build needs of CUDA, and where the answer came from.
struct CudaRequirement {
  std::string build;                   ///< "ortkit's ONNX Runtime 1.29.0", "Python: onnxruntime-gpu 1.29.0"
  std::string provider_library;        ///< its libonnxruntime_providers_cuda.so; empty when not on disk
  std::vector<std::string> libraries;  ///< sonames: libcudart.so.13, libcublas.so.13, libcudnn.so.9, ...
  int cuda_major = 0;
  int cudnn_major = 0;
  std::string source;  ///< "read from the provider library" or the table row used
};

/// The CUDA needs of a GPU build of ONNX Runtime `version`: read from `provider_library`'s ELF
/// header when it exists (the CUDA libraries it links against), else from the release table in
/// environment.cpp; cuDNN is loaded at run time, so its major always comes from the table.
CudaRequirement CudaRequirementFor(std::string build, const std::string& version,
                                   const std::filesystem::path& provider_library);

struct CudaLibraries {
  CudaRequirement requirement;
  std::vector<LibraryProbe> probes;        ///< one per requirement.libraries entry
  std::vector<std::string> versions;       ///< LibraryVersion of each probe ("" when unknown)
  std::vector<std::string> wheel_folders;  ///< NVIDIA's wheels' lib folders also searched
};

struct OwnRuntime {
  std::string version;
  std::string library;  ///< the libonnxruntime.so the loader chose
  std::vector<std::string> providers;
  bool cuda_built = false;
  std::optional<CudaLibraries> cuda;
  /// The probe model run on the CUDA provider (when asked for, or when the build has it).
  std::optional<ProviderProbe> cuda_session;
};

struct EnvironmentOptions {
  std::string python = "python3";
  bool python_given = false;  ///< --python: failing to examine it is an error, not a note
  bool skip_python = false;
  std::string provider = "cpu";       ///< the provider the user means to run on ("cuda": its absence is an error)
  std::filesystem::path work_folder;  ///< where the probe model is written; a temporary folder when empty
};

struct EnvironmentReport {
  OwnRuntime own;
  std::optional<PythonEnvironment> python;
  std::string python_note;  ///< why the Python environment was not examined
  std::optional<CudaLibraries> python_cuda;
  DriverInfo driver;
  std::vector<Diagnosis> diagnoses;  ///< most severe first
};

/// Examines everything the options name. Never throws; what cannot be examined becomes a
/// diagnosis or a note. Loads CUDA libraries into this process to probe them (and unloads them).
EnvironmentReport InspectEnvironment(Runtime& runtime, const EnvironmentOptions& options);

/// The diagnoses for a report's facts (InspectEnvironment calls it; separate so that it can be
/// tested on facts gathered elsewhere).
std::vector<Diagnosis> DiagnoseEnvironment(const EnvironmentReport& report, const EnvironmentOptions& options);

/// "pip uninstall -y A B && pip install KEEP==V": the one line that leaves one distribution.
std::string ConflictFix(const std::vector<OrtDistribution>& distributions);

void to_json(nlohmann::json& json, const EnvironmentReport& report);

}  // namespace ortkit
