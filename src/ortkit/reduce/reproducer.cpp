#include "ortkit/reduce/reproducer.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/files.h"
#include "ortkit/model/external_data.h"
#include "ortkit/reduce/command_check.h"
#include "ortkit/reduce/input_folder.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

/// A Python literal for any JSON value made of strings, numbers, lists and dicts.
std::string Literal(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const char* PythonLevel(OptimizationLevel level) {
  switch (level) {
    case OptimizationLevel::kOff: return "ORT_DISABLE_ALL";
    case OptimizationLevel::kBasic: return "ORT_ENABLE_BASIC";
    case OptimizationLevel::kExtended: return "ORT_ENABLE_EXTENDED";
    case OptimizationLevel::kLayout: return "ORT_ENABLE_LAYOUT";
    case OptimizationLevel::kAll: return "ORT_ENABLE_ALL";
  }
  return "ORT_ENABLE_ALL";
}

std::string SideLiteral(const ReproCheck::Side& side) {
  return Literal(nlohmann::json::array({side.provider, PythonLevel(side.level)}));
}

/// The script's settings: what it loads and what it checks.
std::string ScriptSettings(const ReduceReport& report, const std::string& model_file,
                           const std::vector<std::string>& npy_files) {
  nlohmann::json inputs = nlohmann::json::object();
  for (std::size_t i = 0; i < report.inputs.size() && i < npy_files.size(); ++i)
    inputs[report.inputs[i].name] = npy_files[i];
  nlohmann::json tolerances = nlohmann::json::object();
  for (const auto& [name, t] : report.repro.tolerances) tolerances[name] = {t.atol, t.rtol};
  std::string text;
  text += fmt::format("MODEL = os.path.join(HERE, {})\n", Literal(model_file));
  text += fmt::format("INPUTS = {}\n", Literal(inputs));
  text += fmt::format("CONDITION = {}\n", Literal(ToString(report.condition.kind)));
  text += fmt::format("FRAGMENTS = {}\n", Literal(report.repro.fragments));
  text += fmt::format("SIDE_A = {}\n", SideLiteral(report.repro.a));
  text += fmt::format("SIDE_B = {}\n", SideLiteral(report.repro.b));
  text += fmt::format("TOLERANCES = {}\n", Literal(tolerances));
  return text;
}

/// The script's first line. Only numbers and the condition's kind, a word of ortkit's own: what the user
/// wrote (a command, a message) is in the settings as string literals, data and never code or docstring.
std::string Docstring(const ReduceReport& report) {
  return fmt::format("\"\"\"Written by `ortkit reduce`: {} nodes of {} that still fail ({}).\n\n", report.nodes.size(),
                     report.original_nodes, ToString(report.condition.kind));
}

constexpr const char* kScriptBody = R"PY(

def session(side):
    options = ort.SessionOptions()
    level = getattr(ort.GraphOptimizationLevel, side[1], ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    options.graph_optimization_level = level
    options.log_severity_level = 4  # the failure is reported once, by this script
    return ort.InferenceSession(MODEL, options, providers=[side[0]])


def feeds():
    return {name: np.load(os.path.join(HERE, path)) for name, path in INPUTS.items()}


def refused(error):
    text = str(error)
    return all(fragment in text for fragment in FRAGMENTS)


def non_finite(value):
    return np.issubdtype(value.dtype, np.floating) and not np.isfinite(value).all()


def check_load():
    try:
        session(SIDE_A)
    except Exception as error:  # noqa: BLE001 - any refusal is the finding
        return f"ONNX Runtime refuses the model: {error}" if refused(error) else None
    return None


def check_run():
    model = session(SIDE_A)
    try:
        model.run(None, feeds())
    except Exception as error:  # noqa: BLE001
        return f"the run fails: {error}" if refused(error) else None
    return None


def check_nan():
    inputs = feeds()
    if any(non_finite(value) for value in inputs.values()):
        return None
    model = session(SIDE_A)
    names = [output.name for output in model.get_outputs()]
    for name, value in zip(names, model.run(None, inputs)):
        if isinstance(value, np.ndarray) and non_finite(value):
            return f"output '{name}' holds {int(np.isnan(value).sum())} NaN and {int(np.isinf(value).sum())} Inf"
    return None


def check_diverge():
    inputs = feeds()
    a, b = session(SIDE_A), session(SIDE_B)
    names = [output.name for output in a.get_outputs()]
    for name, x, y in zip(names, a.run(None, inputs), b.run(None, inputs)):
        atol, rtol = TOLERANCES.get(name, (1e-5, 1e-3))
        if x.shape != y.shape:
            return f"output '{name}' has shape {x.shape} on {SIDE_A} and {y.shape} on {SIDE_B}"
        x, y = x.astype(np.float64), y.astype(np.float64)
        agree = (np.abs(y - x) <= atol + rtol * np.abs(x)) | (np.isnan(x) & np.isnan(y)) | (np.isinf(x) & (x == y))
        if not agree.all():
            worst = float(np.nanmax(np.abs(y - x))) if x.size else 0.0
            return (f"output '{name}': {int((~agree).sum())} of {x.size} elements differ between {SIDE_A[1]} on "
                    f"{SIDE_A[0]} and {SIDE_B[1]} on {SIDE_B[0]} beyond atol {atol:g}, rtol {rtol:g}; "
                    f"max abs error {worst:.3g}")
    return None


def main():
    checks = {"load": check_load, "run": check_run, "nan": check_nan, "diverge": check_diverge}
    try:
        found = checks[CONDITION]()
    except Exception as error:  # noqa: BLE001 - another failure is not this one
        print(f"not reproduced: {error}")
        return 0
    if found:
        print(f"reproduced: {found}")
        return 1
    print("not reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
)PY";

/// cmd: runs the check command on the files beside the script, as ortkit judged each candidate.
constexpr const char* kCommandScriptBody = R"PY(

def main():
    argv = [arg.replace("{model}", MODEL).replace("{inputs}", INPUTS) for arg in COMMAND]
    try:
        run = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                             timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        print(f"not reproduced: timed out after {TIMEOUT:g} s")
        return 0
    except OSError as error:
        print(f"not reproduced: {error}")
        return 0
    output = run.stdout + run.stderr
    status = f"killed by signal {-run.returncode}" if run.returncode < 0 else f"exit status {run.returncode}"
    if run.returncode != 0 and all(fragment in output for fragment in FRAGMENTS):
        print(f"reproduced: {status}")
        return 1
    print(f"not reproduced: {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
)PY";

std::string CommandScript(const ReduceReport& report, const std::string& model_file, const std::string& inputs) {
  std::string script = "#!/usr/bin/env python3\n";
  script += Docstring(report);
  script += "Runs the check command on the reduced model; exits 1 and prints 'reproduced: ...' when it fails\n";
  script += "(non-zero exit or a signal, within the time-out), 0 with 'not reproduced' otherwise.\n\"\"\"\n";
  script += "import os\nimport subprocess\nimport sys\n\n";
  script += "HERE = os.path.dirname(os.path.abspath(__file__))\n";
  script += fmt::format("MODEL = os.path.join(HERE, {})\n", Literal(model_file));
  script += fmt::format("INPUTS = os.path.join(HERE, {})\n", Literal(inputs));
  script += fmt::format("COMMAND = {}\n", Literal(report.repro.command));
  script += fmt::format("FRAGMENTS = {}\n", Literal(report.repro.fragments));
  script += fmt::format("TIMEOUT = {}\n", Literal(report.repro.command_timeout_s));
  return script + kCommandScriptBody;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) return MakeError(ErrorKind::kIo, fmt::format("writing '{}' failed", path.string()));
  return OkStatus();
}

}  // namespace

std::string ReproScript(const ReduceReport& report, const std::string& model_file,
                        const std::vector<std::string>& npy_files) {
  if (report.condition.kind == FailureKind::kCommand) {
    const std::string inputs = fs::path(model_file).stem().string() + "_inputs";
    return CommandScript(report, model_file, inputs);
  }
  std::string script = "#!/usr/bin/env python3\n";
  script += Docstring(report);
  script += "Exits 1 and prints 'reproduced: ...' when the failure shows, 0 with 'not reproduced' otherwise.\n";
  script += "Needs numpy and onnxruntime only.\n\"\"\"\n";
  script += "import os\nimport sys\n\nimport numpy as np\nimport onnxruntime as ort\n\n";
  script += "HERE = os.path.dirname(os.path.abspath(__file__))\n";
  script += ScriptSettings(report, model_file, npy_files);
  script += kScriptBody;
  return script;
}

Result<ReproducerFiles> WriteReproducer(const ReduceReport& report, const fs::path& out) {
  ReproducerFiles files;
  const fs::path folder = out.parent_path();
  const std::string stem = out.stem().string();
  files.model = out;
  files.inputs = folder / (stem + "_inputs");
  files.test_data_set = files.inputs / "test_data_set_0";
  files.script = folder / (stem + "_repro.py");
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(out, "the reduced model"));
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(files.script, "the reproducer script"));
  ORTKIT_RETURN_IF_ERROR(CheckOutputFolder(files.inputs, "the reproducer's inputs"));
  std::error_code ec;
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("creating '{}': {}", folder.string(), ec.message()));
  ORTKIT_RETURN_IF_ERROR(WriteModel(report.reduced, out, /*external_data=*/false));
  ORTKIT_ASSIGN_OR_RETURN(files.npy, WriteInputFolder(files.inputs, report.inputs));
  std::vector<std::string> relative;
  for (const auto& npy : files.npy) relative.push_back((fs::path(stem + "_inputs") / npy.filename()).generic_string());
  ORTKIT_RETURN_IF_ERROR(WriteText(files.script, ReproScript(report, out.filename().string(), relative)));
  fs::permissions(files.script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);
  files.command = ShellCommandLine({"python3", files.script.string()});
  // cmd: the user's own command on the files written is the reproducer; the script wraps the same.
  if (report.condition.kind == FailureKind::kCommand)
    files.command = ShellCommandLine(FillPlaceholders(report.repro.command, out.string(), files.inputs.string()));
  return files;
}

nlohmann::json ReproducerFiles::ToJson() const {
  nlohmann::json npy_json = nlohmann::json::array();
  for (const auto& p : npy) npy_json.push_back(p.string());
  return {{"model", model.string()},    {"inputs", inputs.string()}, {"test_data_set", test_data_set.string()},
          {"npy", std::move(npy_json)}, {"script", script.string()}, {"command", command}};
}

}  // namespace ortkit
