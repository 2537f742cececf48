#include "ortkit/env/environment.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/scratch_folder.h"
#include "ortkit/diagnose/runtime_messages.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCuda = "CUDAExecutionProvider";
constexpr std::string_view kProviderLibrary = "libonnxruntime_providers_cuda.so";

// What the GPU builds of each ONNX Runtime release need, newest first: the fallback when the
// provider library is not on disk to be read, and the only source for cuDNN, which the provider
// loads at run time rather than linking against it.
struct CudaRelease {
  int minor_from;  ///< ONNX Runtime 1.<minor_from> and newer, up to the row above
  int cuda;
  int cudnn;
  std::string_view source;
};
constexpr std::array kCudaReleases = std::to_array<CudaRelease>({
    {29, 13, 9,
     "the onnxruntime-gpu 1.29.0 wheel on PyPI: its CUDA provider links libcudart.so.13 and libcublas.so.13, and its "
     "'cudnn' extra is nvidia-cudnn-cu13 9.x"},
    {19, 12, 9,
     "ONNX Runtime's CUDA provider requirements: from 1.19 the PyPI GPU packages are built with CUDA 12.x and "
     "cuDNN 9"},
    {0, 11, 8, "ONNX Runtime's CUDA provider requirements: CUDA 11.x with cuDNN 8 up to 1.18"},
});

const CudaRelease& ReleaseFor(const std::string& version) {
  int major = 1, minor = 0;
  std::sscanf(version.c_str(), "%d.%d", &major, &minor);  // NOLINT(cert-err34-c): a failed parse keeps 1.0
  for (const auto& release : kCudaReleases) {
    if (major > 1 || minor >= release.minor_from) return release;
  }
  return kCudaReleases.back();
}

bool Has(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

CudaLibraries ProbeCudaLibraries(CudaRequirement requirement, const std::vector<fs::path>& wheel_folders) {
  CudaLibraries libraries;
  for (const auto& soname : requirement.libraries) {
    LibraryProbe probe = ProbeLibrary(soname);  // where the runtime's own dlopen looks
    if (!probe.found() && !wheel_folders.empty()) {
      LibraryProbe in_wheels = ProbeLibrary(soname, wheel_folders);
      if (in_wheels.found()) probe = in_wheels;
    }
    libraries.versions.push_back(LibraryVersion(probe));
    libraries.probes.push_back(std::move(probe));
  }
  libraries.requirement = std::move(requirement);
  for (const auto& folder : wheel_folders) libraries.wheel_folders.push_back(folder.string());
  return libraries;
}

OwnRuntime InspectOwnRuntime(Runtime& runtime, const EnvironmentOptions& options) {
  OwnRuntime own;
  own.version = Runtime::Version();
  own.library = Runtime::LibraryPath().string();
  own.providers = Runtime::AvailableProviders();
  own.cuda_built = Has(own.providers, kCuda);
  if (own.cuda_built) {
    const fs::path provider = own.library.empty() ? fs::path() : fs::path(own.library).parent_path() / kProviderLibrary;
    own.cuda =
        ProbeCudaLibraries(CudaRequirementFor("ortkit's ONNX Runtime " + own.version, own.version, provider), {});
  }
  if (own.cuda_built || options.provider == "cuda") {
    own.cuda_session = ProbeProvider(runtime, "cuda");
  }
  return own;
}

void InspectPython(const EnvironmentOptions& options, EnvironmentReport& report) {
  fs::path folder = options.work_folder;
  std::optional<ScratchFolder> scratch;  // the probe model's, removed when the report is done
  if (folder.empty()) {
    if (auto created = ScratchFolder::Create("env"); created.ok()) {
      scratch.emplace(std::move(*created));
      folder = scratch->path();
    }
  }
  PythonProbeOptions probe;
  probe.interpreter = options.python;
  if (!folder.empty()) {
    probe.cuda_probe_model = folder / "cuda_probe.onnx";
    std::ofstream(probe.cuda_probe_model, std::ios::binary) << ProviderProbeModel();
  }
  auto python = ProbePython(probe);
  if (!python.ok()) {
    report.python_note = python.error().message;
    return;
  }
  report.python = std::move(*python);
  const OrtImport& import = report.python->import;
  if (!import.ok || !Has(import.providers, kCuda)) return;
  std::vector<fs::path> wheels(report.python->nvidia_library_folders.begin(),
                               report.python->nvidia_library_folders.end());
  const std::string name = import.package_name.empty() ? "onnxruntime" : import.package_name;
  report.python_cuda = ProbeCudaLibraries(
      CudaRequirementFor(fmt::format("Python: {} {}", name, import.version), import.version,
                         import.capi_folder.empty() ? fs::path() : fs::path(import.capi_folder) / kProviderLibrary),
      wheels);
}

// ---- diagnoses

std::string Owner(const std::vector<OrtDistribution>& distributions) {
  for (const auto& d : distributions) {
    if (d.owns_package_files.value_or(false)) return fmt::format("{} {}", d.name, d.version);
  }
  return "";
}

// The runtime's reason for falling back, from its log: the first line that says what failed, without
// the colour codes, time stamp and source location ONNX Runtime prefixes it with.
std::string FallbackReason(std::string_view log) {
  while (!log.empty()) {
    const auto end = log.find('\n');
    std::string_view line = log.substr(0, end);
    log = end == std::string_view::npos ? std::string_view() : log.substr(end + 1);
    if (line.find("Failed") == std::string_view::npos && line.find("Error") == std::string_view::npos) continue;
    if (const auto fail = line.rfind("FAIL : "); fail != std::string_view::npos) line.remove_prefix(fail + 7);
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b') {  // an ANSI colour sequence: ESC [ ... m
        while (i < line.size() && line[i] != 'm') ++i;
        continue;
      }
      text += line[i];
    }
    return text;
  }
  return "";
}

void DiagnosePython(const EnvironmentReport& report, const EnvironmentOptions& options, std::vector<Diagnosis>& out) {
  if (!report.python) {
    if (options.python_given) {
      out.push_back(Diagnose("env.python-unavailable",
                             fmt::format("cannot examine '{}': {}", options.python, report.python_note)));
    }
    return;
  }
  const PythonEnvironment& python = *report.python;
  const OrtImport& import = python.import;
  if (python.distributions.size() > 1) {
    std::vector<std::string> names;
    bool gpu_installed = false;
    for (const auto& d : python.distributions) {
      names.push_back(fmt::format("{} {}", d.name, d.version));
      gpu_installed = gpu_installed || d.name.find("gpu") != std::string::npos;
    }
    std::string message = fmt::format("{} ONNX Runtime distributions in {} write the one `onnxruntime` package: {}",
                                      python.distributions.size(), python.prefix, fmt::join(names, ", "));
    if (const auto owner = Owner(python.distributions); !owner.empty()) {
      message += fmt::format("; the files on disk are {}'s", owner);
    }
    if (gpu_installed && import.ok && !Has(import.providers, kCuda)) {
      message += fmt::format(", so import lists {} and no CUDAExecutionProvider", fmt::join(import.providers, ", "));
    }
    Diagnosis d = Diagnose("env.ort-conflict", std::move(message));
    d.fix = "Leave one: " + ConflictFix(python.distributions);
    out.push_back(std::move(d));
  }
  if (!import.ok) {
    const bool absent = python.distributions.empty() && import.error.find("No module named") != std::string::npos;
    out.push_back(absent ? Diagnose("env.no-python-ort", fmt::format("{} ({}) has no onnxruntime package",
                                                                     python.executable, python.version))
                         : Diagnose("env.ort-import-failed", fmt::format("import onnxruntime in {} fails: {}",
                                                                         python.executable, import.error)));
  }
  if (python.cuda_session && (!python.cuda_session->created || !Has(python.cuda_session->providers, kCuda))) {
    const auto& session = *python.cuda_session;
    const std::string reason = session.error.empty() ? FallbackReason(session.log) : session.error;
    out.push_back(Diagnose(
        "env.cuda-fallback",
        fmt::format("in {}, a session asked for CUDAExecutionProvider runs on {}{}", python.executable,
                    session.providers.empty() ? "nothing" : fmt::format("{}", fmt::join(session.providers, ", ")),
                    reason.empty() ? "" : ": " + reason)));
  }
}

void DiagnoseLibraries(const CudaLibraries& libraries, std::vector<Diagnosis>& out) {
  std::vector<std::string> missing, in_wheels;
  for (const auto& probe : libraries.probes) {
    if (!probe.found()) missing.push_back(probe.soname);
    if (probe.found() && probe.where != "the dynamic loader's search path") {
      in_wheels.push_back(fmt::format("{} (in {})", probe.soname, probe.where));
    }
  }
  const auto& need = libraries.requirement;
  if (!missing.empty()) {
    const char* path = std::getenv("LD_LIBRARY_PATH");
    Diagnosis d = Diagnose(
        "env.cuda-library-missing",
        fmt::format("{} needs CUDA {} and cuDNN {}: {} cannot be loaded (looked in LD_LIBRARY_PATH={}, the ld.so "
                    "cache, the default folders{})",
                    need.build, need.cuda_major, need.cudnn_major, fmt::join(missing, ", "),
                    path == nullptr ? "(unset)" : path,
                    libraries.wheel_folders.empty() ? "" : " and NVIDIA's Python wheels"));
    d.fix = fmt::format(
        "Install CUDA {0}.x and cuDNN {1}: pip install 'onnxruntime-gpu[cuda,cudnn]' in a Python environment (NVIDIA's "
        "wheels, then onnxruntime.preload_dlls()), or NVIDIA's CUDA {0} and cuDNN {1} packages with their lib folder "
        "on LD_LIBRARY_PATH. A CUDA {2} install does not serve this build.",
        need.cuda_major, need.cudnn_major, need.cuda_major - 1);
    out.push_back(std::move(d));
  }
  if (!in_wheels.empty()) {
    out.push_back(Diagnose("env.cuda-library-not-on-path", fmt::format("{}: {} only in NVIDIA's Python wheels",
                                                                       need.build, fmt::join(in_wheels, ", "))));
  }
}

void DiagnoseGpu(const EnvironmentReport& report, const EnvironmentOptions& options, std::vector<Diagnosis>& out) {
  const bool wanted = options.provider == "cuda" || report.own.cuda_built || report.python_cuda.has_value();
  if (!wanted) return;
  const DriverInfo& driver = report.driver;
  if (driver.devices <= 0) {
    out.push_back(Diagnose("env.no-gpu", driver.version.empty() && driver.cuda_version == 0
                                             ? fmt::format("no NVIDIA driver is loaded: {}", driver.error)
                                             : fmt::format("the NVIDIA driver {} sees no usable GPU{}", driver.version,
                                                           driver.error.empty() ? "" : ": " + driver.error)));
  }
  for (const auto* cuda :
       {report.own.cuda ? &*report.own.cuda : nullptr, report.python_cuda ? &*report.python_cuda : nullptr}) {
    if (cuda == nullptr || driver.cuda_version == 0) continue;
    if (driver.cuda_version / 1000 < cuda->requirement.cuda_major) {
      out.push_back(Diagnose("env.driver-too-old",
                             fmt::format("the NVIDIA driver {} supports CUDA up to {}.{}; {} needs CUDA {}",
                                         driver.version, driver.cuda_version / 1000, driver.cuda_version % 1000 / 10,
                                         cuda->requirement.build, cuda->requirement.cuda_major)));
    }
  }
}

void DiagnoseOwn(const OwnRuntime& own, const EnvironmentOptions& options, std::vector<Diagnosis>& out) {
  const ProviderInfo* wanted = FindProvider(options.provider);
  if (options.provider != "cpu" && wanted != nullptr && !Has(own.providers, wanted->ort_name)) {
    Diagnosis d = Diagnose("env.provider-not-built",
                           fmt::format("ortkit's ONNX Runtime {} ({}) has no {}: it was built with {}", own.version,
                                       own.library, wanted->ort_name, fmt::join(own.providers, ", ")));
    out.push_back(std::move(d));
    return;
  }
  if (own.cuda) DiagnoseLibraries(*own.cuda, out);
  if (!own.cuda_session) return;
  const ProviderProbe& probe = *own.cuda_session;
  if (!probe.Ran()) {
    Diagnosis d = TranslateRuntimeError(probe.error);
    const bool said = std::any_of(out.begin(), out.end(), [&](const Diagnosis& o) { return o.code == d.code; });
    if (!said) out.push_back(std::move(d));
  } else if (!probe.placement.empty() && !probe.UsedProvider()) {
    out.push_back(Diagnose("env.cuda-fallback",
                           fmt::format("ortkit's session asked for CUDAExecutionProvider ran every node elsewhere: {}",
                                       probe.PlacementText())));
  }
}

}  // namespace

CudaRequirement CudaRequirementFor(std::string build, const std::string& version, const fs::path& provider_library) {
  CudaRequirement need;
  need.build = std::move(build);
  const CudaRelease& release = ReleaseFor(version);
  need.cuda_major = release.cuda;
  need.cudnn_major = release.cudnn;
  need.source = fmt::format("ortkit's table: {}", release.source);
  std::error_code ec;
  if (!provider_library.empty() && fs::exists(provider_library, ec)) {
    if (auto needed = ReadNeededLibraries(provider_library); needed.ok()) {
      need.provider_library = provider_library.string();
      need.source = "read from " + need.provider_library;
      for (const auto& name : *needed) {
        if ((name.rfind("libcu", 0) == 0 || name.rfind("libnv", 0) == 0) && name.rfind("libcuda.so", 0) != 0) {
          need.libraries.push_back(name);
        }
        if (int major = 0; std::sscanf(name.c_str(), "libcudart.so.%d", &major) == 1) need.cuda_major = major;
      }
    }
  }
  if (need.libraries.empty()) {
    for (const char* stem : {"libcudart", "libcublas", "libcublasLt"}) {
      need.libraries.push_back(fmt::format("{}.so.{}", stem, need.cuda_major));
    }
  }
  need.libraries.push_back(fmt::format("libcudnn.so.{}", need.cudnn_major));
  return need;
}

std::string ConflictFix(const std::vector<OrtDistribution>& distributions) {
  // Keep the GPU build when one is there (it runs on the CPU too), else the newest install.
  const OrtDistribution* keep = &distributions.back();
  for (const auto& d : distributions) {
    if (d.name.find("gpu") != std::string::npos) keep = &d;
  }
  std::vector<std::string> names;
  for (const auto& d : distributions) {
    if (!Has(names, d.name)) names.push_back(d.name);
  }
  return fmt::format("pip uninstall -y {} && pip install {}=={}", fmt::join(names, " "), keep->name, keep->version);
}

std::vector<Diagnosis> DiagnoseEnvironment(const EnvironmentReport& report, const EnvironmentOptions& options) {
  std::vector<Diagnosis> out;
  DiagnoseOwn(report.own, options, out);
  if (!options.skip_python) DiagnosePython(report, options, out);
  if (report.python_cuda) DiagnoseLibraries(*report.python_cuda, out);
  DiagnoseGpu(report, options, out);
  SortBySeverity(out);
  return out;
}

EnvironmentReport InspectEnvironment(Runtime& runtime, const EnvironmentOptions& options) {
  EnvironmentReport report;
  report.own = InspectOwnRuntime(runtime, options);
  if (options.skip_python) {
    report.python_note = "--no-python";
  } else {
    InspectPython(options, report);
  }
  report.driver = ProbeDriver();
  report.diagnoses = DiagnoseEnvironment(report, options);
  return report;
}

void to_json(nlohmann::json& json, const EnvironmentReport& report) {
  auto libraries = [](const CudaLibraries& cuda) {
    nlohmann::json out = {{"build", cuda.requirement.build},
                          {"cuda_major", cuda.requirement.cuda_major},
                          {"cudnn_major", cuda.requirement.cudnn_major},
                          {"source", cuda.requirement.source},
                          {"libraries", nlohmann::json::array()}};
    for (std::size_t i = 0; i < cuda.probes.size(); ++i) {
      const auto& p = cuda.probes[i];
      out["libraries"].push_back({{"soname", p.soname},
                                  {"found", p.found()},
                                  {"path", p.path},
                                  {"where", p.where},
                                  {"version", cuda.versions[i]},
                                  {"error", p.error}});
    }
    return out;
  };
  const OwnRuntime& own = report.own;
  json["ortkit_runtime"] = {{"version", own.version}, {"library", own.library}, {"providers", own.providers}};
  if (own.cuda) json["ortkit_runtime"]["cuda"] = libraries(*own.cuda);
  if (own.cuda_session) json["ortkit_runtime"]["cuda_session"] = own.cuda_session->ToJson();
  if (report.python) {
    const auto& p = *report.python;
    nlohmann::json dists = nlohmann::json::array();
    for (const auto& d : p.distributions) {
      dists.push_back({{"name", d.name},
                       {"version", d.version},
                       {"location", d.location},
                       {"owns_package_files",
                        d.owns_package_files ? nlohmann::json(*d.owns_package_files) : nlohmann::json(nullptr)}});
    }
    json["python"] = {{"interpreter", p.interpreter},
                      {"executable", p.executable},
                      {"version", p.version},
                      {"prefix", p.prefix},
                      {"distributions", dists},
                      {"nvidia_library_folders", p.nvidia_library_folders},
                      {"import",
                       {{"ok", p.import.ok},
                        {"error", p.import.error},
                        {"version", p.import.version},
                        {"file", p.import.file},
                        {"providers", p.import.providers},
                        {"package_name", p.import.package_name},
                        {"cuda_version", p.import.cuda_version}}}};
    if (p.cuda_session) {
      json["python"]["cuda_session"] = {{"created", p.cuda_session->created},
                                        {"providers", p.cuda_session->providers},
                                        {"error", p.cuda_session->error}};
    }
    if (report.python_cuda) json["python"]["cuda"] = libraries(*report.python_cuda);
  } else {
    json["python"] = {{"note", report.python_note}};
  }
  json["gpu"] = {{"driver_version", report.driver.version},
                 {"driver_cuda_version", report.driver.cuda_version},
                 {"devices", report.driver.devices},
                 {"error", report.driver.error}};
  json["diagnoses"] = report.diagnoses;
}

}  // namespace ortkit
