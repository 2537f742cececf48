#pragma once
// The files of a bug report: the reduced model (weights inline), its inputs as an ONNX test data set
// and as .npy files, and a Python script that needs only numpy and onnxruntime to show the failure
// (for a check command, `cmd:`, a script that runs that command on the files written).

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/reduce/reduce.h"

namespace ortkit {

/// What WriteReproducer wrote.
struct ReproducerFiles {
  std::filesystem::path model;             ///< MIN.onnx
  std::filesystem::path inputs;            ///< MIN_inputs/
  std::filesystem::path test_data_set;     ///< MIN_inputs/test_data_set_0/ (input_K.pb)
  std::vector<std::filesystem::path> npy;  ///< MIN_inputs/NAME.npy, in input order
  std::filesystem::path script;            ///< MIN_repro.py
  std::string command;  ///< "python3 MIN_repro.py"; cmd: the check command with {model} and {inputs} filled

  nlohmann::json ToJson() const;
};

/// The Python script for `report`: loads `model_file` and the .npy files (paths relative to the
/// script's folder), checks the condition and prints "reproduced: ..." (exit 1) or "not reproduced"
/// (exit 0). `npy_files[i]` holds `report.inputs[i]`. For cmd, the script runs the check command with
/// {model} and {inputs} filled with `model_file` and its stem + "_inputs" (beside the script), and
/// checks exit status, signal, time-out and --message as the reduction did; it needs Python only.
std::string ReproScript(const ReduceReport& report, const std::string& model_file,
                        const std::vector<std::string>& npy_files);

/// Writes the reproducer for `report` (which must have original_fails): `out` (the model), out's stem +
/// "_inputs/" and out's stem + "_repro.py" beside it. Folders are created; files of those names are
/// replaced. kIo naming the file on failure.
Result<ReproducerFiles> WriteReproducer(const ReduceReport& report, const std::filesystem::path& out);

}  // namespace ortkit
