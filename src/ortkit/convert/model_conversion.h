#pragma once
// `ortkit convert` as one call: read a model file, move it to another opset, check the result (the
// ONNX checker, and a target ONNX Runtime release when one is named), prove it by the numbers
// against the original, and write it only when nothing failed.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/check/target_runtime.h"
#include "ortkit/convert/opset_conversion.h"
#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/validate/model_equivalence.h"

namespace ortkit {

struct ModelConversionOptions {
  std::filesystem::path model;
  std::filesystem::path out;
  ConversionOptions conversion;
  const OrtRelease* target = nullptr;  ///< when set, the result must also load on this release
  bool prove = true;                   ///< compare both models' outputs before writing
  /// The inputs and tolerances of the proof; `proof.session` runs both models.
  EquivalenceOptions proof;
};

/// Everything a conversion found, whether or not it wrote a file.
struct ModelConversionReport {
  std::string model;
  std::string out;
  ConversionOutcome conversion;
  std::optional<EquivalenceReport> proof;
  std::vector<Diagnosis> diagnoses;  ///< the conversion's, then the checker's, the target's and the proof's
  bool written = false;
  bool external_data = false;  ///< the model keeps (and, once written, the result keeps) weights in a side file
  /// Set when the model file could not be read at all (kIo, with the loader's message): the caller's to fix,
  /// not a finding about the model (a file that is no model is one: its diagnoses say why).
  std::optional<Error> failure;

  /// Whether an error was found: nothing is written then.
  bool Failed() const;
};

/// The opset and IR version to convert to: `opset` and `ir_version` as given (0: not given), the
/// opset defaulting to the newest `target` loads. kInvalidArgument, naming --opset and --target-ort,
/// when neither says an opset or `opset` is newer than `target` loads.
Result<ConversionOptions> ResolveConversionTarget(int opset, int ir_version, const OrtRelease* target);

/// Converts options.model and writes it to options.out when every check holds. A model that does not
/// load is a report with the loader's diagnoses (`failure` when it could not be read at all); the
/// errors returned are those that stop the command itself: weights too large to hold in memory, no
/// ONNX Runtime to prove with, the result not serialisable or not writable.
Result<ModelConversionReport> ConvertModelFile(const ModelConversionOptions& options);

void to_json(nlohmann::json& json, const ModelConversionReport& report);

}  // namespace ortkit
