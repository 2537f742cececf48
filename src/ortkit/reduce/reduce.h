#pragma once
// Delta debugging of an ONNX model: the smallest set of the main graph's nodes that still fails the
// way the original does, for bug reports against ONNX Runtime.
//
// Candidates are subsets of the nodes in topological order, cut out with GraphSlicer; the values a
// candidate reads from removed nodes are fed with what the original computes there (FedValues). The
// search: the shortest failing prefix [0, b] by bisection, the latest start a with [a, b] still
// failing, then ddmin-style removal of chunks and single nodes inside the range. Every candidate runs
// in this process (a runtime crash, not an error, ends it), except with a check command (`cmd:`),
// which judges each candidate in a process of its own.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/reduce/failure_condition.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// Where the search stands, after each candidate.
struct ReduceProgress {
  std::string phase;           ///< "prefix", "start", "nodes"
  std::size_t candidates = 0;  ///< tried so far
  std::size_t smallest = 0;    ///< nodes of the smallest failing candidate so far
  double seconds = 0;
};

struct ReduceOptions {
  FailureCondition condition;  ///< kAuto: load, run or nan, whichever the original shows first
  std::string message;         ///< load, run: the runtime's message, cmd: the command's output must contain it
  std::chrono::milliseconds command_timeout{60'000};  ///< cmd: each run of the command; a time-out is no failure
  ToleranceRules tolerance;                           ///< diverge
  SessionConfig session;  ///< provider and threads; load, run and nan run with its optimisation level
  std::chrono::milliseconds time_budget{180'000};          ///< the search stops there, keeping the smallest so far
  std::uint64_t seed = 0;                                  ///< load: seed of the values synthesised for cut values
  std::function<void(const ReduceProgress&)> on_progress;  ///< must not throw

  /// kInvalidArgument naming the flag: --message with a condition it does not apply to, a command
  /// condition without a command, a time-out or budget not above 0, an unknown provider, a tolerance
  /// that is not a finite number >= 0. Reduce checks it; a caller may check first.
  Status Validate() const;
};

/// A node of the reduced model.
struct ReducedNode {
  std::string name;
  std::string op_type;
};

/// What the repro script checks, beside the model and its inputs.
struct ReproCheck {
  struct Side {
    std::string provider;  ///< ONNX Runtime's name: "CPUExecutionProvider"
    OptimizationLevel level = OptimizationLevel::kAll;
  };
  Side a;                                       ///< load, run, nan: the only side
  Side b;                                       ///< diverge: the side judged against a
  std::vector<std::string> fragments;           ///< load, run: the error's text must contain each
  std::map<std::string, Tolerance> tolerances;  ///< diverge: per output, absolute part already scaled
  std::vector<std::string> command;             ///< cmd: the check command, placeholders unfilled
  double command_timeout_s = 0;                 ///< cmd
};

struct ReduceReport {
  std::string model;             ///< as given to the caller, for reports
  bool original_fails = false;   ///< false: nothing was reduced (see not_failing)
  std::string not_failing;       ///< why the original does not fail as asked
  FailureCondition condition;    ///< as asked, resolved against the original (never kAuto) when original_fails
  std::string code;              ///< load, run: the diagnosis code both the original and the reduced model give
  std::string node;              ///< load, run: the node the original's message names (kept in the reduced model)
  std::string message;           ///< what the reduced model does (runtime message or finding)
  std::string original_message;  ///< what the original does
  std::size_t original_nodes = 0;
  std::vector<ReducedNode> nodes;  ///< of the reduced model, in order
  std::size_t candidates = 0;      ///< candidates tried
  std::size_t sessions = 0;        ///< sessions created to compute fed values
  bool fed_computed = false;       ///< values fed for cut values: computed by the original (else synthesised)
  double seconds = 0;
  bool budget_ran_out = false;
  onnx::ModelProto reduced;         ///< weights inline
  std::vector<NamedTensor> inputs;  ///< the reduced model's inputs, in its input order
  ReproCheck repro;

  /// The facts with stable keys (not the model nor the tensors).
  nlohmann::json ToJson() const;
};

/// Reads a model for reduction, external data inlined (up to 1.5 GiB). kIo / kInvalidModel naming it.
Result<onnx::ModelProto> LoadModelForReduce(const std::filesystem::path& path);

/// Inputs for the model's graph inputs (initializers excluded): files where given, synthesised at the
/// plan's sizes otherwise (no size search: a failure at the default sizes is what is reduced).
Result<std::vector<NamedTensor>> PrepareReduceInputs(const onnx::ModelProto& model, const InputSources& sources);

/// Reduces `model`, fed `inputs`. Errors: a bad cross-check mode (kInvalidArgument), an unavailable
/// provider (kUnavailable), a --message with nan or diverge (kInvalidArgument), a check command that
/// cannot be started on the original (kInvalidArgument naming --fails). An original that does
/// not fail as asked is a report with original_fails false.
Result<ReduceReport> Reduce(Runtime& runtime, const onnx::ModelProto& model, std::span<const NamedTensor> inputs,
                            const ReduceOptions& options);

}  // namespace ortkit
