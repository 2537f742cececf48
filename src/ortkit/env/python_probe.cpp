#include "ortkit/env/python_probe.h"

#include <csignal>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/process.h"

namespace ortkit {
namespace {

// Installed distributions and the owner of onnxruntime/'s files, from package metadata alone.
// Every distribution that writes files under onnxruntime/ counts (onnxruntime, onnxruntime-gpu,
// onnxruntime-openvino, onnxruntime-directml, ort-nightly ...): they all install the same package.
constexpr const char* kMetadataProbe = R"py(
import base64, hashlib, json, os, sys
import importlib.metadata as md
out = {"executable": sys.executable, "version": sys.version.split()[0], "prefix": sys.prefix,
       "distributions": [], "nvidia": []}
seen = set()
for dist in md.distributions():
    name = dist.metadata.get("Name") or ""
    files = [f for f in (dist.files or []) if str(f).startswith("onnxruntime/")]
    key = (name.lower(), str(dist.locate_file("")))
    if not files or key in seen:
        continue
    seen.add(key)
    owns = None
    for f in files:
        if str(f).startswith("onnxruntime/capi/onnxruntime_pybind11_state") and f.hash:
            try:
                with open(f.locate(), "rb") as data:
                    digest = hashlib.new(f.hash.mode, data.read()).digest()
                owns = base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == f.hash.value
            except OSError:
                owns = False
    out["distributions"].append({"name": name, "version": dist.version,
                                 "location": str(dist.locate_file("")), "owns": owns})
for folder in sys.path:
    nvidia = os.path.join(folder, "nvidia")
    if os.path.isdir(nvidia):
        for sub in sorted(os.listdir(nvidia)):
            lib = os.path.join(nvidia, sub, "lib")
            if os.path.isdir(lib):
                out["nvidia"].append(lib)
print(json.dumps(out))
)py";

// `import onnxruntime`, and with a model path argument, a session asked for CUDA first.
constexpr const char* kImportProbe = R"py(
import json, os, sys
out = {}
try:
    import onnxruntime as ort
    out["version"] = ort.__version__
    out["file"] = ort.__file__
    out["capi"] = os.path.join(os.path.dirname(ort.__file__), "capi")
    out["providers"] = ort.get_available_providers()
    try:
        from onnxruntime.capi import build_and_package_info as info
        out["package_name"] = getattr(info, "package_name", "")
        out["cuda_version"] = getattr(info, "cuda_version", "")
    except Exception:
        pass
except BaseException as e:
    out["error"] = f"{type(e).__name__}: {e}"
if len(sys.argv) > 1 and "CUDAExecutionProvider" in out.get("providers", []):
    session = {}
    try:
        s = ort.InferenceSession(sys.argv[1], providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        session["providers"] = s.get_providers()
    except BaseException as e:
        session["error"] = f"{type(e).__name__}: {e}"
    out["cuda_session"] = session
print(json.dumps(out))
)py";

std::string HowItDied(const ProcessOutput& run) {
  if (run.timed_out) return "it did not finish in time";
  if (run.signal != 0) return fmt::format("it was killed by signal {} ({})", run.signal, strsignal(run.signal));
  return fmt::format("it exited with status {}", run.exit_code);
}

// The last line of standard output that is a JSON object: packages may print on import.
Result<nlohmann::json> JsonReply(const ProcessOutput& run, const std::string& what) {
  const auto end = run.out.find_last_not_of("\r\n");
  const auto start = end == std::string::npos ? std::string::npos : run.out.rfind('\n', end);
  const std::string last = end == std::string::npos ? "" : run.out.substr(start == std::string::npos ? 0 : start + 1);
  auto json = nlohmann::json::parse(last, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    const auto err_end = run.err.find_last_not_of("\r\n");
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: {}{}", what, HowItDied(run),
                                 err_end == std::string::npos ? "" : ": " + run.err.substr(0, err_end + 1)));
  }
  return json;
}

std::vector<std::string> Strings(const nlohmann::json& json, const char* key) {
  std::vector<std::string> out;
  if (auto it = json.find(key); it != json.end() && it->is_array()) {
    for (const auto& item : *it) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
  }
  return out;
}

std::string Text(const nlohmann::json& json, const char* key) {
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : "";
}

void ReadMetadata(const nlohmann::json& json, PythonEnvironment& env) {
  env.executable = Text(json, "executable");
  env.version = Text(json, "version");
  env.prefix = Text(json, "prefix");
  env.nvidia_library_folders = Strings(json, "nvidia");
  for (const auto& d : json.value("distributions", nlohmann::json::array())) {
    if (!d.is_object()) continue;
    OrtDistribution dist{Text(d, "name"), Text(d, "version"), Text(d, "location"), std::nullopt};
    if (auto owns = d.find("owns"); owns != d.end() && owns->is_boolean()) dist.owns_package_files = owns->get<bool>();
    env.distributions.push_back(std::move(dist));
  }
}

void ReadImport(const nlohmann::json& json, const ProcessOutput& run, PythonEnvironment& env) {
  OrtImport& import = env.import;
  import.error = Text(json, "error");
  import.ok = import.error.empty() && json.contains("version");
  import.version = Text(json, "version");
  import.file = Text(json, "file");
  import.capi_folder = Text(json, "capi");
  import.providers = Strings(json, "providers");
  import.package_name = Text(json, "package_name");
  import.cuda_version = Text(json, "cuda_version");
  if (auto it = json.find("cuda_session"); it != json.end() && it->is_object()) {
    OrtCudaSession session;
    session.error = Text(*it, "error");
    session.providers = Strings(*it, "providers");
    session.created = session.error.empty();
    session.log = run.err;
    env.cuda_session = std::move(session);
  }
}

}  // namespace

Result<PythonEnvironment> ProbePython(const PythonProbeOptions& options) {
  PythonEnvironment env;
  env.interpreter = options.interpreter;
  const ProcessOptions process{options.timeout};
  ORTKIT_ASSIGN_OR_RETURN(auto metadata, RunProcess({options.interpreter, "-c", kMetadataProbe}, process));
  ORTKIT_ASSIGN_OR_RETURN(auto json, JsonReply(metadata, fmt::format("'{}' did not answer as a Python 3.8+ interpreter",
                                                                     options.interpreter)));
  ReadMetadata(json, env);

  std::vector<std::string> argv{options.interpreter, "-c", kImportProbe};
  if (!options.cuda_probe_model.empty()) argv.push_back(options.cuda_probe_model.string());
  ORTKIT_ASSIGN_OR_RETURN(auto imported, RunProcess(argv, process));
  auto reply = JsonReply(imported, "importing onnxruntime");
  if (reply.ok()) {
    ReadImport(*reply, imported, env);
  } else {
    env.import.error = reply.error().message;  // the import crashed the interpreter
  }
  return env;
}

}  // namespace ortkit
