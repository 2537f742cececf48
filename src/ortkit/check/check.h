#pragma once
// `ortkit check`: the layered structural and load checks of one model file.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

class Runtime;

struct CheckOptions {
  std::filesystem::path model_path;
  std::string provider = "cpu";
  bool strict = false;       ///< warnings fail the check too
  bool load_runtime = true;  ///< run the ONNX Runtime layer
  /// An ONNX Runtime release ("1.16") the model must also load on: adds the "target" layer
  /// (check/target_runtime.h). Empty: none. An unknown release is the caller's usage error.
  std::string target_ort;
};

struct LayerReport {
  std::string name;  ///< "file", "external-data", "checker", "shape-inference", "rules", "runtime", "target"
  enum class State { kPassed, kFailed, kSkipped } state = State::kPassed;
  std::string skipped_reason;
  std::string note;  ///< why a layer failed without a diagnosis of its own
  std::vector<Diagnosis> diagnoses;
};

const char* ToString(LayerReport::State state);

struct CheckReport {
  std::string model_path;
  std::string provider;
  std::vector<LayerReport> layers;
  /// Set when the check could not be carried out, the caller's or the machine's fault rather than the
  /// model's: kIo when the file could not be read at all, kUnavailable when the runtime layer could not
  /// create a session because the provider cannot run on this machine (not in this ONNX Runtime build, or
  /// its libraries do not load). The layers still say what was found.
  std::optional<Error> failure;
  bool strict = false;

  /// Every diagnosis of every layer, most severe first.
  std::vector<Diagnosis> AllDiagnoses() const;
  int CountOf(Severity severity) const;
  /// Passed: no errors (and, with strict, no warnings).
  bool Passed() const;
};

/// Runs every layer. Each layer reports even when an earlier one found problems, unless it
/// cannot run at all (no parsed model). `runtime` may be null when options.load_runtime is false.
CheckReport RunCheck(Runtime* runtime, const CheckOptions& options);

void to_json(nlohmann::json& json, const LayerReport& layer);
void to_json(nlohmann::json& json, const CheckReport& report);

}  // namespace ortkit
