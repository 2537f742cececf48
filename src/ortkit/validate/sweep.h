#pragma once
// The dynamic-shape sweep: one session, a grid of values for the model's symbolic dimensions,
// and for each cell: the run succeeds, no NaN/Inf, output dimensions follow the input dimensions
// of the same name, and row i of a batched run equals row i run alone.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/inputs/shape_search.h"
#include "ortkit/inputs/sweep_axis.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit {

/// Parses "batch=1,4,16" into an axis. Errors name the text.
Result<SweepAxis> ParseSweepAxis(const std::string& text);

struct SweepOptions {
  std::vector<SweepAxis> axes;  ///< empty: every symbolic dimension, chosen by ChooseAutoAxes
  InputPlan base;               ///< sizes of dimensions not swept, and the seed
  ToleranceRules tolerance;     ///< for batch consistency
  bool batch_consistency = true;
  std::string batch_dim;                           ///< empty: detected (see DetectBatchDim)
  int rows_checked = 3;                            ///< rows compared per batched cell: first, middle, last
  std::uint64_t memory_budget_bytes = 1ULL << 30;  ///< for choosing the large extreme in auto mode
  /// The most resident memory any run of the sweep may reach, the process's own included; 0: three
  /// quarters of what this process may use (the machine's memory, or its cgroup's limit). Each run's
  /// peak is measured, and a run predicted (from the two largest before it) to exceed this is not
  /// started: an axis is kept below it, a cell is skipped, and the notes say which and why.
  std::uint64_t memory_limit_bytes = 0;
  /// Largest sizes the model is made for, by symbol (export.json's dim_limits, e.g. seq_len up to a
  /// Transformers model's max_position_embeddings): the auto sweep stays within them.
  std::map<std::string, std::int64_t> max_sizes;
  /// The size search already run on this session (Validate's input step runs it); empty: RunSweep
  /// runs it. In auto mode the sweep starts from its sizes and probes each non-batch axis's extremes,
  /// narrowing an extreme that fails to the boundary it finds (a size requirement, not a failure).
  std::optional<ShapeSearch> search;
};

/// For each symbolic input dimension: 1, a typical value and a large one. Each large size is the largest
/// candidate whose inputs, x 64 for activations, fit `memory_budget_bytes` with the other axes at their
/// typical sizes; then, as the grid's largest cell holds every axis at its large size, the large sizes
/// furthest above their typical ones are halved until that cell fits too (for any number of dynamic
/// axes), and `notes` (may be null) says which were shrunk. `typical_sizes` replace the default typical
/// size (the size search's grown sizes); `min_sizes` are the smallest sizes that run.
std::vector<SweepAxis> ChooseAutoAxes(const std::vector<TensorSpec>& inputs, const InputPlan& base,
                                      std::uint64_t memory_budget_bytes,
                                      const std::map<std::string, std::int64_t>& max_sizes = {},
                                      const std::map<std::string, std::int64_t>& typical_sizes = {},
                                      const std::map<std::string, std::int64_t>& min_sizes = {},
                                      std::vector<std::string>* notes = nullptr);

/// The symbolic name of the batch axis: the first input dimension's symbol when it is shared by
/// every input of rank >= 1 (or batch-like). Empty when there is none.
std::string DetectBatchDim(const std::vector<TensorSpec>& inputs);

struct SweepCell {
  std::map<std::string, std::int64_t> dims;
  /// Every symbolic input dimension's size in this cell, swept or not (the search's names).
  std::map<std::string, std::int64_t> sizes;
  /// Each output's shape, when the batched run returned.
  std::map<std::string, std::vector<std::int64_t>> output_shapes;
  enum class State { kPassed, kFailed, kSkipped } state = State::kPassed;
  std::string skipped;           ///< kSkipped: why (the memory it would take)
  std::uint64_t peak_bytes = 0;  ///< the process's peak resident memory during the cell's runs
  double run_ms = 0;             ///< the batched run's wall time
  bool batch_checked = false;
  double batch_max_abs_error = 0;
  std::vector<Diagnosis> diagnoses;  ///< why the cell failed
};

struct SweepReport {
  std::vector<SweepAxis> axes;
  std::vector<SizeFinding> size_findings;  ///< sizes the model refuses: requirements, not failures
  std::vector<std::string> notes;          ///< unnamed axes merged, extremes narrowed
  std::string batch_dim;
  std::vector<SweepCell> cells;  ///< the grid, row-major over `axes`
  bool Passed() const;
  nlohmann::json ToJson() const;
};

/// What the sweep's runs say about one output dimension: it is the same size in every run; it follows an
/// input dimension as it is, or scaled and shifted (2 * seq, seq + 1); it grows (or shrinks) with one input
/// dimension and is the same wherever that dimension is (a convolution's frames, (samples - 512) / 160 + 1);
/// or none of these: runs at one size of every input dimension disagree, or no dimension orders it.
struct OutputDimBehaviour {
  enum class Kind { kUnjudged, kFixed, kFollows, kGrows, kVaries };
  Kind kind = Kind::kUnjudged;  ///< kUnjudged: fewer than two runs returned it, or no input size changed
  std::int64_t value = 0;       ///< kFixed
  std::string axis;             ///< kFollows, kGrows: the input dimension
  std::int64_t scale = 1;       ///< kFollows: size = scale * axis + offset
  std::int64_t offset = 0;
  std::vector<std::int64_t> seen;  ///< the sizes the runs gave, in cell order
  /// Whether the runs account for the size (kFixed, kFollows, kGrows).
  bool Explained() const { return kind == Kind::kFixed || kind == Kind::kFollows || kind == Kind::kGrows; }
  /// "follows 'batch' (1, 4, 16 in 3 runs)", "is 2 in all 3 runs", "grows with 'samples' (1, 97, 1597 in 3 runs)"
  std::string Describe() const;
};

/// How output `output`'s dimension `dimension` behaved over the passing cells of `sweep`.
OutputDimBehaviour ExplainOutputDim(const SweepReport& sweep, const std::string& output, std::size_t dimension);

/// Runs the grid on `session`. `model` gives input value hints (indices, masks). Errors only
/// for bad options (unknown dimension names); failing cells are reported in the result.
Result<SweepReport> RunSweep(Session& session, const onnx::ModelProto& model, const SweepOptions& options);

}  // namespace ortkit
