#pragma once
// `ortkit validate` as one call: a session's numbers against the framework's references, two runtime
// configurations against each other, the first diverging value when they disagree, and every shape
// the model claims to accept, in one report.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/validate/cross_check.h"
#include "ortkit/validate/localize.h"
#include "ortkit/validate/reference.h"
#include "ortkit/validate/sweep.h"

namespace ortkit {

struct ValidateOptions {
  /// The file the session was created from: the cross-check and localisation load it again.
  std::filesystem::path model;
  /// The configuration the session was created with; the cross-check's sides differ from it in one setting.
  SessionConfig session;
  /// Framework references (ReadReference); empty: no reference step.
  std::filesystem::path reference;
  ToleranceRules tolerance;
  /// A cross-check mode (ParseCrossCheckMode: "opt-levels", "providers=cpu,cuda"); empty: no cross-check.
  std::string compare;
  /// The cross-check's inputs; the sizes the plan leaves open are found by running (SettleSizes). The
  /// plan is also the sweep's base.
  InputSources inputs;
  /// Synthesised float inputs whose outputs hold NaN or Inf are drawn from [0.1, 1) instead, when that
  /// clears them: a model that takes a log or a square root of its input is right to give NaN at negative
  /// values. doctor asks for it, since it judges a model on inputs it makes up; validate runs the values
  /// the plan gives.
  bool avoid_nan_inputs = false;
  /// The cross-check's inputs as they are, instead of `inputs` (a caller that made its own); not owned,
  /// they must outlive the call.
  const std::vector<NamedTensor>* given_inputs = nullptr;
  /// When outputs disagree (the cross-check's, or the reference's), find the first intermediate value
  /// that diverges; the reference folder may hold intermediate values too (NAME.npy, NAME.pb).
  bool localize = false;
  std::size_t localize_chunk = LocalizeOptions{}.chunk_size;
  bool sweep = false;
  std::vector<SweepAxis> sweep_axes;  ///< empty: every symbolic dimension (auto)
  bool batch_check = true;            ///< the sweep's batch-consistency check
  /// Largest sizes the model is made for, by symbol (export.json's dim_limits): the auto sweep stays
  /// within them.
  std::map<std::string, std::int64_t> sweep_max_sizes;
  /// The most resident memory a sweep's run may reach (SweepOptions::memory_limit_bytes); 0: three
  /// quarters of what this process may use.
  std::uint64_t sweep_memory_bytes = 0;
  /// An ONNX Runtime release ("1.16", also "1.16.3") the model must also load on, with its operators
  /// (check/target_runtime.h): the first step. Empty: none; one not in the table is a failure (kTarget).
  std::string target_ort;
};

/// How long the localisation of a quantised model's divergence may take when it was not asked for
/// (ValidateOptions::localize): the cross-check localises it whenever an output exceeds the rounding of
/// quantised kernels, so that the finding names the node.
inline constexpr std::chrono::milliseconds kQuantizedLocalizeBudget{60'000};

/// The inputs Validate's steps run on, made once per session: read from files where given, synthesised
/// otherwise (PrepareInputs), at sizes found by running where the plan leaves them open (SettleSizes).
/// Validate's cross-check runs on them and its sweep starts from their size search; doctor runs each
/// provider on them, so that both commands search sizes and make inputs one way.
struct ValidationInputs {
  Result<PreparedInputs> prepared = PreparedInputs{};  ///< the error when they cannot be made (files, sizes)
  SettledSizes settled;          ///< sizes found by running, and the search that found them when one ran
  bool positive_floats = false;  ///< float inputs drawn from [0.1, 1) (avoid_nan_inputs)
};

/// The inputs for `options` on `session`, whose declared inputs are `specs`; `model` gives value hints.
ValidationInputs PrepareValidationInputs(Session& session, const std::vector<TensorSpec>& specs,
                                         const onnx::ModelProto& model, const ValidateOptions& options);

/// The rule of Validate's sweep: the axes `options` give (every symbolic dimension when none) from the
/// plan's sizes, with the options' tolerance, batch check and largest sizes, starting from the size search
/// of `inputs` (PrepareValidationInputs on the same session; null: the sweep searches) and its values.
SweepOptions ValidationSweepOptions(const ValidateOptions& options, const ValidationInputs* inputs);

/// Validate's sweep step, which doctor runs as its own: ValidationSweepOptions on `session` (declared
/// inputs `specs`), after the plan is checked against them. Errors: a plan or axes the model does not take.
Result<SweepReport> SweepForValidation(Session& session, const onnx::ModelProto& model,
                                       const std::vector<TensorSpec>& specs, const ValidateOptions& options,
                                       const ValidationInputs* inputs);

/// A step of Validate that could not be carried out with the options given.
struct ValidateFailure {
  enum class Step {
    kTarget,       ///< the target release is not one ortkit knows
    kReference,    ///< the reference cannot be read or matched to the model
    kCompareMode,  ///< the cross-check mode does not parse
    kInputs,       ///< the cross-check's inputs cannot be made (files, sizes)
    kCrossCheck,   ///< a side cannot be set up (provider unavailable, inputs that do not fit)
    kSweep,        ///< the sweep's plan or axes do not fit the model
  };
  Step step = Step::kReference;
  Error error;
};

/// The finding for a reference that cannot be used: validate.reference-input at the reference's path.
Diagnosis UnusableReference(const std::filesystem::path& reference, const Error& error);

/// One localisation, and the findings it amounts to (LocalizeDiagnoses).
struct Localization {
  Result<LocalizeReport> report;
  std::vector<Diagnosis> diagnoses;
};

/// Whether an older ONNX Runtime release loads the model and has its operators (ValidateOptions::target_ort).
struct TargetRuntimeReport {
  std::string release;               ///< "1.16"
  std::vector<Diagnosis> diagnoses;  ///< CheckTargetRuntime's
  /// No error among the diagnoses: that release loads the model.
  bool Passed() const;
};

struct ValidateReport {
  std::optional<TargetRuntimeReport> target;
  std::filesystem::path reference_path;
  std::optional<ReferenceReport> reference;
  std::string compare_mode;
  std::optional<CrossCheckReport> cross_check;
  /// The cross-check's runs failed at its inputs: a finding, and the other steps still run.
  std::optional<Error> cross_check_error;
  std::vector<std::string> size_notes;  ///< sizes found by running for the cross-check's inputs
  /// Outputs that are sequences, maps or optionals: computed in every run, but ortkit compares tensors only.
  std::vector<std::string> not_compared;
  /// In the order run: the cross-check's, then the reference's.
  std::vector<Localization> localizations;
  std::optional<SweepReport> sweep;
  /// Set when a step could not be carried out: Validate stopped there, the report holds the steps before
  /// it, and the fault is the caller's (options, files), not the model's.
  std::optional<ValidateFailure> failure;

  /// Every step that ran passed (localisation finds where, it does not judge).
  bool Passed() const;
  /// The cross-check's run failure as a finding (runtime.*), at `where`.
  Diagnosis CrossCheckRunDiagnosis(const Location& where = {}) const;
  /// {"target", "reference", "compare", "localize" (the last localisation), "sweep"}, each present when its
  /// step ran.
  nlohmann::json ToJson() const;
};

/// Runs the steps `options` ask for on `session` (created from `options.model` with `options.session` in
/// `runtime`), in order: the target release, the reference, the cross-check, localisation, the sweep. `model` is the
/// parsed file (value hints, rules that explain failures, declared outputs). Never fails as a whole: a step that cannot
/// be carried out is the report's `failure`, and findings about the model are in the report.
ValidateReport Validate(Runtime& runtime, Session& session, const onnx::ModelProto& model,
                        const ValidateOptions& options);

}  // namespace ortkit
