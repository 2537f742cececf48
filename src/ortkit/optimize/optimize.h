#pragma once
// `ortkit optimize` as one call: rewrite a model for speed in every way that may help it on this
// machine (optimize/passes.h), prove each candidate by its numbers (candidate_proof.h), measure the
// ones that keep their accuracy against the original side by side (bench/side_by_side.h), and write
// the fastest one that is faster beyond the noise, with its provenance in the model's metadata.
// Nothing is written when no candidate passes both.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/bench/side_by_side.h"
#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/optimize/candidate_proof.h"
#include "ortkit/optimize/passes.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit {

struct OptimizeOptions {
  std::filesystem::path model;
  std::filesystem::path out;
  /// Candidates, each a pass or passes chained with '+' ("fuse+int8-dynamic"); empty: DefaultCandidates.
  std::vector<std::string> candidates;
  bool dry_run = false;        ///< prove and measure; write nothing
  bool external_data = false;  ///< write tensors of 1 KiB or more to OUT.data (also past 1.5 GiB)
  std::string provider = "cpu";
  int threads = 0;      ///< intra-op threads of every session, proofs and measurements alike; 0: the usable cores
  InputSources inputs;  ///< sizes, seed and --input files of the proof and the measurement
  std::filesystem::path reference;  ///< the framework's inputs (and outputs): the proof's inputs
  /// Samples for static quantisation (CalibrationSamples::List); the int8-static candidate needs them.
  std::vector<std::filesystem::path> calibration;
  CalibrationOptions calibration_options;
  std::int64_t int4_block = 32;  ///< the int4 candidate's values along K per scale (16, 32, 64, 128)
  AccuracyGate gate;
  SideBySideOptions measure;
  double min_change = 0.03;  ///< a candidate must be at least this much faster, beyond the noise band
};

/// What happened to one candidate, in the order it went through.
struct CandidateOutcome {
  enum class State {
    kNotApplicable,  ///< no pass of it changed the model
    kFailed,         ///< a pass failed, or the result does not load
    kRefused,        ///< its proof failed: the accuracy gate, NaN, the interface, a run
    kNotFaster,      ///< proven, but not faster than the original beyond the noise
    kPassed,         ///< proven and faster; another was faster still
    kChosen,
  };
  std::string name;  ///< "fuse+int8-dynamic"
  std::vector<std::string> passes;
  std::vector<OptimizePassResult> pass_results;  ///< by position of `passes`
  State state = State::kNotApplicable;
  std::string reason;  ///< why it is not chosen, or how it failed
  std::optional<CandidateProof> proof;
  std::optional<SideBySideSamples> latency;
  SpeedUp speed_up;
  std::int64_t size_bytes = 0;
  double rewrite_s = 0;        ///< the passes alone, without the proof and measurement
  std::filesystem::path file;  ///< where it was written meanwhile (a scratch folder)

  nlohmann::json ToJson() const;
};
const char* ToString(CandidateOutcome::State state);  ///< "not applicable", "failed", "refused", ...

struct OptimizeReport {
  std::string model;
  std::string out;
  std::string provider;
  int threads = 0;
  std::string cpu;                  ///< CpuFeatures::Describe()
  std::string inputs;               ///< where the proof's inputs came from, and their shapes
  std::vector<std::string> trials;  ///< the shapes the proof compared at
  std::string gate;                 ///< AccuracyGate::Describe()
  std::int64_t original_bytes = 0;
  std::optional<SideBySideSamples> original_latency;
  std::vector<CandidateOutcome> candidates;
  std::string chosen;  ///< the written (or, with --dry-run, the would-be) candidate; empty: none
  bool dry_run = false;
  bool written = false;
  /// Set when the model file could not be read at all (kIo, with the loader's message): the caller's to fix,
  /// not a finding about the model (a file that is no model is one: its diagnoses say why).
  std::optional<Error> failure;
  std::vector<Diagnosis> diagnoses;
  double seconds = 0;  ///< the whole run
  std::int64_t peak_rss_bytes = 0;

  /// An error stopped it, or no candidate could be chosen.
  bool Failed() const;
};

void to_json(nlohmann::json& json, const OptimizeReport& report);

/// Checks candidate names: each pass of each chain must exist; kInvalidArgument names the entry and lists
/// the passes. float16, the GPU pass this ortkit does not make, is refused with why and what to do
/// instead: for `provider` "cpu" (or a build of ONNX Runtime without CUDA or TensorRT) because it is for a
/// GPU provider.
Status ValidateCandidates(const std::vector<std::string>& candidates, std::string_view provider = "cpu");

/// Whether int4 is likely to help `graph`: at least 4 MatMul with a constant float weight the int4 pass
/// takes, holding most of the float weights, in a decoder (an input that carries a cache, "past" or
/// "cache" in its name, or a product over a vocabulary, N of 8,192 or more). Weight-only 4 bits pays
/// where reading the weights is the time: a decoder's token-by-token steps.
bool LikelyInt4Decoder(const onnx::GraphProto& graph);

/// The candidates tried when none are named: fuse; int8-dynamic where MatMul or Gemm have constant weights;
/// int8-dynamic-conv where there are convolutions; int4 where LikelyInt4Decoder; int8-static when
/// calibration samples are given; none that quantise a model already quantised.
std::vector<std::string> DefaultCandidates(const onnx::ModelProto& model, const std::string& provider,
                                           bool calibrated = false);

/// The decision, a pure function of the candidates' states and measured speed-ups: the candidate with the
/// largest speed-up among those proven (kPassed) and faster beyond the noise becomes kChosen; the other
/// proven ones say why not. Returns its name, empty when none qualifies.
std::string ChooseFastest(std::vector<CandidateOutcome>& candidates);

/// Optimises options.model (see the file comment). A model that cannot be read is a report with the
/// loader's diagnoses; the errors returned stop the command (bad options, an unavailable provider, inputs
/// the model does not take, the result not writable).
Result<OptimizeReport> OptimizeModelFile(Runtime& runtime, const OptimizeOptions& options);

}  // namespace ortkit
