#pragma once
// What a Python environment holds of ONNX Runtime, asked of its own interpreter: the installed
// distributions (from their metadata, without importing anything), which of them owns the files
// of the importable `onnxruntime` package, and what `import onnxruntime` then reports. Each
// question runs in a child process, so that a crashing or hanging import cannot take ortkit down.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit {

/// One installed distribution that ships ONNX Runtime (onnxruntime, onnxruntime-gpu, ...).
struct OrtDistribution {
  std::string name;     ///< as its metadata spells it: "onnxruntime-gpu"
  std::string version;  ///< "1.29.0"
  std::string location;
  /// The files of `onnxruntime/` on disk are this distribution's (its RECORD hashes match the
  /// Python extension module); nullopt when the record has no hash to compare.
  std::optional<bool> owns_package_files;
};

/// `import onnxruntime` in the environment.
struct OrtImport {
  bool ok = false;
  std::string error;  ///< the exception, or how the child died
  std::string version;
  std::string file;                    ///< onnxruntime/__init__.py that was imported
  std::vector<std::string> providers;  ///< get_available_providers()
  std::string package_name;            ///< build_and_package_info: "onnxruntime-gpu"
  std::string cuda_version;            ///< build_and_package_info: "13.0"; empty for CPU builds
  std::string capi_folder;             ///< onnxruntime/capi, where the provider libraries are
};

/// A session asked for CUDA in the environment (only when the import lists CUDAExecutionProvider).
struct OrtCudaSession {
  bool created = false;
  std::vector<std::string> providers;  ///< what the session really uses
  std::string log;                     ///< what ONNX Runtime printed (its reasons for falling back)
  std::string error;
};

struct PythonEnvironment {
  std::string interpreter;  ///< as asked for
  std::string executable;   ///< sys.executable
  std::string version;      ///< "3.11.2"
  std::string prefix;       ///< sys.prefix: the venv
  std::vector<OrtDistribution> distributions;
  std::vector<std::string> nvidia_library_folders;  ///< site-packages/nvidia/*/lib of NVIDIA's wheels
  OrtImport import;
  std::optional<OrtCudaSession> cuda_session;
};

struct PythonProbeOptions {
  std::string interpreter = "python3";  ///< a path, or a name searched on PATH
  std::chrono::milliseconds timeout{60'000};
  /// A model to open with CUDAExecutionProvider when the import lists it; none: no session.
  std::filesystem::path cuda_probe_model;
};

/// Fails when the interpreter cannot be started or is not a working Python (kNotFound / kInvalidArgument);
/// a failing import is reported in OrtImport, not as an error.
Result<PythonEnvironment> ProbePython(const PythonProbeOptions& options);

}  // namespace ortkit
