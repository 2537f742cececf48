#pragma once
// `ortkit doctor`: the whole chain in one verdict. check → load on each provider → validate against
// the framework's references (else cross-check optimisation levels) → dynamic-shape sweep with batch
// consistency → a short baseline benchmark, and every finding ranked in one list. An export folder
// written by the Python companion (model.onnx + test_data_set_N + export.json) is understood as a whole:
// its references are used and its export record connects findings to what the exporter warned about.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/check/check.h"
#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/model/export_record.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/synthesis.h"
#include "ortkit/validate/cross_check.h"
#include "ortkit/validate/reference.h"
#include "ortkit/validate/sweep.h"

namespace ortkit {

struct DoctorOptions {
  /// A .onnx file, or an export folder holding model.onnx (or only export.json when the export failed).
  std::filesystem::path model;
  /// References: an export or test-case folder, one test_data_set_N folder, an .npz, a folder of .npy.
  /// Empty: the model's own folder when it holds export.json and test_data_set_N (an ortkit export).
  std::filesystem::path reference;
  std::vector<std::string> providers = {"cpu"};
  ToleranceRules tolerance;
  InputPlan inputs;  ///< sizes of symbolic dimensions for the cross-check, sweep and benchmark
  bool sweep = true;
  std::uint64_t sweep_memory_bytes = 0;  ///< the sweep's memory limit (ValidateOptions); 0: from the machine
  std::string target_ort;                ///< also check loading on this ONNX Runtime release (CheckOptions::target_ort)
  int benchmark_runs = 20;               ///< timed runs of the baseline latency (bench/runner.h); 0 skips it
};

enum class DoctorVerdict { kHealthy, kWarnings, kBroken };

/// "healthy", "warnings", "broken".
const char* ToString(DoctorVerdict verdict);

/// Latency of one provider at the base shape: a first run, warm-up runs, then `runs` timed runs.
struct LatencySummary {
  std::string shape;  ///< "x[1, 16, 64]"
  int runs = 0;
  double first_ms = 0;  ///< the warm-up run, which pays for allocations and kernel selection
  double mean_ms = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::string measured_by;  ///< which code measured it
};

struct ProviderReport {
  std::string provider;
  bool loaded = false;
  std::optional<ReferenceReport> validation;
  std::optional<CrossCheckReport> cross_check;
  std::optional<SweepReport> sweep;
  std::optional<LatencySummary> latency;
  std::vector<std::string> notes;  ///< steps that could not run here, and why
  /// Not loaded because the provider cannot run on this machine (not in this ONNX Runtime build, or its
  /// libraries do not load), rather than because the runtime refuses the model.
  bool unavailable = false;
};

struct DoctorReport {
  std::string model_path;  ///< the .onnx file examined; empty when the export produced none
  std::string reference_path;
  bool reference_from_export = false;  ///< found next to the model rather than given
  std::optional<ExportRecord> export_record;
  std::optional<CheckReport> check;
  std::vector<ProviderReport> providers;
  std::vector<Diagnosis> diagnoses;  ///< every finding once, most severe first
  DoctorVerdict verdict = DoctorVerdict::kHealthy;
  /// Set when the model could not be examined, the caller's or the machine's fault rather than the model's:
  /// kIo when the model path could not be read at all (the check's layers say why), kUnavailable when a
  /// requested provider cannot run on this machine (unavailable_provider), kInvalidArgument when the
  /// reference given (DoctorOptions::reference) cannot be used (validate.reference-input says why).
  std::optional<Error> failure;
  /// A requested provider that cannot run on this machine (not in this ONNX Runtime build, or its libraries
  /// do not load): the environment's fault, not the model's, so the chain stops and the model is not judged.
  /// `diagnoses` then say why (runtime.provider-unavailable and what the environment says, env.*), and
  /// `verdict` means nothing. Empty when every provider could be tried.
  std::string unavailable_provider;
  /// For a healthy model whose latency was measured and whose float MatMul/Gemm or Conv weights are worth
  /// quantising: the `ortkit optimize` command and the fact behind it (NextStepFromWeights); else empty.
  std::string next_step;

  nlohmann::json ToJson() const;
};

/// The verdict `diagnoses` amount to: broken with an error, warnings with a warning, else healthy.
DoctorVerdict VerdictOf(const std::vector<Diagnosis>& diagnoses);

/// Runs the chain. Errors only for bad options (an unknown provider name, a reference path that does
/// not exist, a --dim or --shape the model's inputs do not have, checked against the file before anything
/// runs: the message is ValidatePlan's, as `run` gives it); everything wrong with the model or its runs is
/// a diagnosis in the report. A provider this machine cannot run is report.unavailable_provider.
Result<DoctorReport> RunDoctor(Runtime& runtime, const DoctorOptions& options);

}  // namespace ortkit
