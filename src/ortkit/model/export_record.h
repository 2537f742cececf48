#pragma once
// export.json, written by the Python export companion (python/ortkit_export) next to model.onnx:
// how the model was exported, and what the exporter warned about. `doctor` reads it to connect a
// finding to its cause at export time (a failed validation to the TracerWarning of a traced `if`);
// convert and fix read which dimensions are sums of others. It is the contract with the companion
// and describes the model file beside it, so it lives with the model, below every reader.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

/// One warning the exporter raised, with the line of user code it points at.
struct ExportWarning {
  std::string category;  ///< "TracerWarning", "UserWarning", "log:tf2onnx"
  std::string message;
  std::string file;
  int line = 0;
  std::string source;  ///< the text of that line, when the file was readable at export time
  std::string code;    ///< export.traced-branch, ...; empty for warnings about the framework's internals
  std::string fix;     ///< the companion's own fix for this export (a finding it made), empty for exporter warnings
  std::string input;   ///< the input it is about, when it is about one

  /// "model.py:12".
  std::string Where() const;
};

struct ExportRecord {
  std::filesystem::path path;  ///< the export.json read
  /// Largest sizes the model is made for, by dimension name ("seq_len": max_position_embeddings).
  std::map<std::string, std::int64_t> dim_limits;
  /// Dimensions that are the sum of others ("total_len": ["past_len", "seq_len"]).
  std::map<std::string, std::vector<std::string>> dim_sums;
  std::string framework;  ///< "torch", "tensorflow"
  std::string framework_version;
  std::string exporter;  ///< "torch.onnx.export (TorchScript)", "tf2onnx (keras)"
  std::string exporter_version;
  int opset = 0;
  bool training = false;       ///< exported in training mode
  bool eval_enforced = false;  ///< the companion put the module in eval mode
  bool module_was_training = false;
  std::vector<std::string> inputs_dropped;
  std::string second_data_set_error;
  std::vector<ExportWarning> warnings;
  /// The export failed: {code, message, fix} as the companion reported it; no model.onnx then. Its
  /// location is the user's line (error_line) when the companion found one, else export.json.
  std::optional<Diagnosis> error;
  /// The user's line the failure points at: file, line and its text (ExportWarning's fields).
  std::optional<ExportWarning> error_line;

  /// "torch 1.13.1, torch.onnx.export (TorchScript), opset 17".
  std::string Describe() const;
};

/// Reads an export.json. Unknown fields are ignored, missing ones keep their defaults, so records of
/// older and newer companions read; a file that is not a JSON object is an error naming the file.
Result<ExportRecord> ReadExportRecord(const std::filesystem::path& path);

/// The findings an export record carries by itself: the export error, warnings with a code (their
/// location is the user's source line), training mode, inputs the exporter dropped.
std::vector<Diagnosis> ExportDiagnoses(const ExportRecord& record);

void to_json(nlohmann::json& json, const ExportRecord& record);

}  // namespace ortkit
