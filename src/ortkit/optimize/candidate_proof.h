#pragma once
// Proving a rewritten model by its numbers before anything is written: the candidate runs on the inputs
// the original ran on, and each output is judged against the original's by what it is for
// (tensor/agreement.h: top-1 where the last axis scores classes or tokens, cosine per row for vectors)
// beside its float errors; NaN or Inf where the original is finite fails; the inputs and outputs must
// keep their names, types and dynamic axes; a batch's rows must be the rows run alone (dynamic
// quantisation's per-batch scale makes that a warning, not a failure). An accuracy gate decides.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/agreement.h"
#include "ortkit/tensor/tensor.h"
#include "ortkit/tensor/tensor_spec.h"

namespace ortkit {

/// The least agreement a candidate must keep, per metric. Written as the largest drop from perfect
/// agreement each metric may take (--max-drop cosine=0.01,top1=0.01,error=0.01).
struct AccuracyGate {
  double cosine = 0.99;  ///< lowest per-row cosine of outputs whose rows are vectors or scores
  double top1 = 0.99;    ///< share of rows keeping their top-1 (scores), of equal elements (labels)
  double error = 0.01;   ///< largest error of other outputs as a share of their range

  /// Parses "cosine=0.001,top1=0.01,error=0.02" (drops, each in [0, 0.5]) over the defaults. A value above
  /// 0.5 is refused with the floor it would set, since "cosine=0.999" is the floor, not the drop.
  static Result<AccuracyGate> Parse(std::string_view text);
  /// "cosine >= 0.99, top-1 >= 0.99, error <= 1%"
  std::string Describe() const;
};

/// The original's run that a candidate is compared with: its inputs and outputs, at one shape.
struct ProofInputs {
  std::string label;  ///< "batch=1, seq_len=128", "test_data_set_0"
  std::vector<NamedTensor> inputs;
  std::vector<NamedTensor> expected;  ///< the original's outputs on `inputs`
};

/// One output of a candidate against the original's.
struct OutputVerdict {
  std::string name;
  std::string trial;
  Agreement agreement;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::int64_t nonfinite = 0;  ///< NaN or Inf in the candidate where the original is finite
  std::string failure;         ///< empty: passed; else the metric that failed ("per-row cosine 0.981 < 0.99")

  nlohmann::json ToJson() const;
};

struct CandidateProof {
  std::vector<OutputVerdict> outputs;     ///< every output at every trial
  std::vector<std::string> interface;     ///< what changed in the declared inputs and outputs (a failure)
  std::vector<std::string> run_failures;  ///< trials the candidate could not run (a failure)
  std::string batch_rows;                 ///< what the batch check found ("rows 0 and 2 of batch 3 equal...")
  bool batch_rows_differ = false;         ///< a failure unless the candidate quantises dynamically
  bool dynamic_quantization = false;      ///< the candidate computes activation scales at run time
  std::vector<std::string> warnings;

  bool Passed() const;
  /// The first reason it failed, for the table ("last_hidden_state: per-row cosine 0.981 < 0.99").
  std::string FirstFailure() const;
  /// The figure each purpose is judged by, worst over trials: "cosine >= 0.9996", "top-1 99.8%".
  std::string AccuracyText() const;
  nlohmann::json ToJson() const;
};

/// Runs `candidate` on each trial's inputs and judges its outputs against the trial's expected ones with
/// `gate`; `purposes` gives each output's purpose (GuessOutputPurpose on the original), by position of
/// `output_names`. Then, when `batch_dim` is set and a trial has a batch above 1, the first and last rows
/// of that batch are run alone and compared with the batched run's rows. Errors only for a session that
/// cannot describe itself; runs that fail are reported.
CandidateProof ProveCandidate(Session& candidate, std::span<const ProofInputs> trials,
                              const std::vector<std::string>& output_names, const std::vector<OutputPurpose>& purposes,
                              const AccuracyGate& gate, const std::string& batch_dim, bool dynamic_quantization);

/// What changed between the declared inputs and outputs of the original and the candidate: a name, an
/// element type, a rank, or a dynamic axis made fixed ("input 'x' axis 0 was 'batch', now 1"). Empty
/// when the candidate keeps the interface.
std::vector<std::string> InterfaceChanges(const std::vector<TensorSpec>& original_inputs,
                                          const std::vector<TensorSpec>& original_outputs,
                                          const std::vector<TensorSpec>& candidate_inputs,
                                          const std::vector<TensorSpec>& candidate_outputs);

}  // namespace ortkit
