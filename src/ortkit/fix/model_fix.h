#pragma once
// `ortkit fix` as one call: read a model, apply the mechanical fixes for what `check` finds
// (fix/fix_passes.h), then prove the result before anything is written: the ONNX checker, the
// fixed model's outputs against the original's at the shapes where the original runs, and each
// fix's purpose (other batch sizes now run and agree row by row; a model in inference mode gives the
// same outputs twice). A fix whose purpose does not hold is refused with the reason and the others
// are proven again without it; outputs that differ from the original's write nothing at all.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/check/target_runtime.h"
#include "ortkit/convert/opset_conversion.h"
#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/fix/fix_passes.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/validate/model_equivalence.h"

namespace ortkit {

struct ModelFixOptions {
  std::filesystem::path model;
  std::filesystem::path out;
  /// Diagnosis codes or pass names (FixPasses) to apply; empty: every pass a finding of `check` calls for.
  std::vector<std::string> only;
  bool dry_run = false;  ///< plan and report; prove and write nothing
  /// Fold constant subgraphs and drop redundant nodes with ONNX Runtime's basic-level optimisations, saved
  /// offline (what the session would do at load, done once in the file).
  bool fold_constants = false;
  bool external_data = false;  ///< write tensors of 1 KiB or more to OUT.data (also when the weights exceed 1.5 GiB)
  FixPassOptions passes;
  EquivalenceOptions proof;  ///< inputs, tolerances and session of every run
  /// Also move the model to this opset / IR version (--opset, --target-ort), after the other fixes.
  std::optional<ConversionOptions> conversion;
  const OrtRelease* target = nullptr;  ///< when set, the fixed model must also load on this release
  /// The framework's own outputs (ReadReference): the fixed model must match them too.
  std::filesystem::path reference;
};

/// One claim a fix makes, and whether running it held.
struct FixEvidence {
  std::string claim;  ///< "other batch sizes run: batch = 1, 4, 9, rows agree"
  bool held = false;
  std::string detail;    ///< the figures, or why it did not hold
  bool required = true;  ///< false: a note (check still reporting a code elsewhere), not a proof that failed
};

struct ModelFixReport {
  std::string model;
  std::string out;
  std::vector<std::string> codes_found;  ///< check's rule findings on the original, by code, in order
  std::vector<std::string> passes_run;   ///< the passes applied, in order
  std::vector<FixChange> changes;
  std::vector<FixRefusal> refusals;      ///< what a pass left, and fixes refused by their proof
  std::vector<std::string> not_handled;  ///< codes found that no pass fixes mechanically
  std::string baseline;                  ///< what the fixed model's outputs were compared with
  std::optional<EquivalenceReport> proof;
  std::vector<FixEvidence> evidence;
  std::vector<std::string> codes_after;  ///< check's rule findings on the fixed model
  std::vector<Diagnosis> diagnoses;      ///< why nothing was written (errors), and warnings
  bool dry_run = false;
  bool written = false;
  bool external_data = false;
  /// Set when the model file could not be read at all (kIo, with the loader's message) or the reference
  /// cannot be used (kIo, kInvalidArgument; validate.reference-input says why): the caller's to fix, not a
  /// finding about the model (a file that is no model is one: its diagnoses say why).
  std::optional<Error> failure;

  /// An error stopped the fix: nothing is written.
  bool Failed() const;
};

/// Checks `only` against the passes' names and codes: kInvalidArgument naming the entry and listing
/// the valid ones.
Status ValidateFixSelection(const std::vector<std::string>& only);

/// Fixes options.model and writes options.out when every proof holds (see the file comment). A model
/// that cannot be read is a report with the loader's diagnoses (`failure` when the file could not be
/// read at all); the errors returned stop the command itself (bad options, weights too large to hold, the
/// result not writable).
Result<ModelFixReport> FixModelFile(Runtime& runtime, const ModelFixOptions& options);

void to_json(nlohmann::json& json, const ModelFixReport& report);

}  // namespace ortkit
