#pragma once
// Localising a numeric divergence: when two runs disagree (two ONNX Runtime configurations, two
// models, or a run against a folder of recorded intermediate values), find the first intermediate
// value of the main graph, in topological order, that differs beyond the tolerance, and the node
// that produces it.
//
// Method: intermediate values are exposed as extra graph outputs, a chunk at a time (one session
// per chunk and side, each created, run and released in turn), so a run holds at most
// `chunk_size` exposed values however large the model is. The walk stops at the first chunk that
// holds a divergence; every value before it agreed. Extra outputs are declared without a type:
// ONNX Runtime infers it (symbolic dimensions included), and values it reports as sequences, maps
// or optionals are skipped. The original graph outputs stay first and unchanged. Fetched values are
// copied out of the runtime's buffers (RunSession), so values that alias another (Reshape,
// Identity, in-place kernels) compare as themselves.
//
// Caveat, optimisations: ONNX Runtime fuses nodes only when the values inside the fused group are
// not graph outputs, so exposing a value switches off the fusions that would consume it and the
// exposed value is computed by the unfused nodes. A divergence that comes from a fused kernel can
// therefore disappear while its values are exposed; LocalizeReport::vanished() says when the
// outputs disagree but no exposed value does.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/file_names.h"
#include "ortkit/tensor/tensor.h"
#include "ortkit/tensor/tensor_stats.h"
#include "ortkit/validate/cross_check.h"

namespace ortkit {

/// Progress of the walk, reported after each chunk.
struct LocalizeChunk {
  std::size_t index = 0;        ///< 0-based chunk number
  std::size_t count = 0;        ///< chunks needed to cover every value considered
  std::size_t first_value = 0;  ///< topological position of the chunk's first value
  std::size_t values = 0;       ///< values in the chunk
  std::size_t fetched = 0;      ///< exposed outputs fetched by the largest run of this chunk
  std::size_t compared = 0;     ///< values compared (tensors on both sides)
  bool diverged = false;
};

struct LocalizeOptions {
  ToleranceRules tolerance;     ///< per_output entries apply to intermediate values by name too
  std::size_t chunk_size = 64;  ///< values exposed per session; bounds the memory of one run
  std::size_t max_values = 0;   ///< 0: every value; else only the first N in topological order
  /// Wall-time budget for the whole localisation, checked before each chunk (a run in progress is
  /// not interrupted). Zero: unbounded.
  std::chrono::milliseconds time_budget{0};
  /// When the graph outputs agree there is nothing to localise: skip the walk.
  bool skip_if_outputs_agree = true;
  /// Called after each chunk (progress lines, tests). Must not throw.
  std::function<void(const LocalizeChunk&)> on_chunk;
  /// Walk a quantised model's divergence (validate/purpose_judgement.h): only the values that side B's
  /// optimised graph keeps between its kernels are exposed, so that its fusions stay as they are (the caveat
  /// above), and a value diverges when the RMS of its difference exceeds kQuantizedSpreadBound of its spread
  /// (standard deviation), not a float tolerance. The diverging value is named with the fused kernel that
  /// computes it.
  bool quantized = false;
};

/// How far a quantised model's intermediate value may move, as a share of its spread, before it is where
/// the runs part: requantisation after requantisation moves values by a few steps, a small part of their
/// spread (ONNX Runtime's quantiser's models: 0.1% to 6% in the first layers); an overflowing accumulator
/// or a saturating scale moves them by all of it.
inline constexpr double kQuantizedSpreadBound = 0.25;

/// A value upstream of the diverging node, and what is known about it.
struct UpstreamValue {
  enum class State {
    kAgreed,       ///< compared on both sides and within tolerance
    kGraphInput,   ///< fed by the caller: identical on both sides
    kInitializer,  ///< a weight of the model
    kNotCompared,  ///< not a tensor, absent on one side, or beyond max_values
  };
  std::string value;
  State state = State::kNotCompared;
  std::string node;  ///< producing node's display name; empty for graph inputs and initializers
  std::string op_type;
  std::optional<TensorStats> range;  ///< the values it held, when it was compared and agreed
};

const char* ToString(UpstreamValue::State state);

/// Where the runs first part.
struct Divergence {
  bool nan_origin = false;  ///< not a difference: the first value holding NaN (on both sides alike)
  std::string value;        ///< the first value that differs, or the first holding NaN
  std::string node;         ///< the node producing it (NodeDisplayName)
  std::string op_type;
  int node_index = -1;                         ///< index in the main graph's node list
  std::size_t position = 0;                    ///< the value's position in topological order
  OutputComparison comparison;                 ///< expected: side A (or the reference), actual: side B
  std::vector<UpstreamValue> inputs;           ///< the node's inputs, in order
  std::optional<UpstreamValue> last_agreeing;  ///< the nearest agreeing value upstream, topologically
  /// Two models only: initializers the node reads that differ between them, with how.
  std::vector<OutputComparison> differing_initializers;
  /// Quantised walks: the RMS of the value's difference over its spread, and the node of side B's optimised
  /// graph that computes it ("QLinearConv 'conv_quant'"), layout nodes skipped.
  double spread_error = 0;
  std::string fused_kernel;
};

/// One value the walk compared: how far its two sides lie apart, in the order compared (topological).
struct ComparedValue {
  std::string value;
  std::string node;  ///< the node producing it (NodeDisplayName)
  double max_abs_error = 0;
  bool passed = true;  ///< within the tolerance (false for the divergence)
};

struct LocalizeStats {
  std::size_t values_total = 0;       ///< node outputs of side A's main graph
  std::size_t values_considered = 0;  ///< after max_values
  std::size_t values_compared = 0;
  std::size_t values_skipped = 0;  ///< not tensors, or absent from side B's graph or from the reference
  std::size_t chunks_run = 0;
  std::size_t sessions_created = 0;  ///< the plain runs included
  std::size_t peak_fetched = 0;      ///< most exposed outputs fetched by one run: never above chunk_size
  double elapsed_ms = 0;
};

struct LocalizeReport {
  std::string label_a;  ///< the reference side
  std::string label_b;
  ComparisonReport outputs;     ///< the graph outputs of plain runs (no value exposed)
  bool walked = false;          ///< false when the outputs agreed and skip_if_outputs_agree held
  bool quantized = false;       ///< walked as a quantised model's divergence (LocalizeOptions::quantized)
  bool complete = false;        ///< every value considered was compared (or the divergence found)
  std::string stopped_because;  ///< when !complete: the time budget or max_values, in words
  std::optional<Divergence> divergence;
  /// Every value compared, the divergence last: the error along the graph up to where the runs part.
  std::vector<ComparedValue> compared;
  std::vector<std::string> skipped;  ///< names of skipped values (the first 20)
  LocalizeStats stats;

  /// The outputs disagree, yet every exposed value agreed: see the caveat at the top of this file.
  bool vanished() const;
  nlohmann::json ToJson() const;
};

/// Findings for people: validate.diverges-at-node, validate.divergence-vanished or
/// validate.localize-incomplete. Empty when the runs agree everywhere.
/// With `model`, a divergence at a node that `check`'s rules already explain (a Dropout in training mode)
/// gets that explanation as its cause and fix, rather than a kernel being blamed.
std::vector<Diagnosis> LocalizeDiagnoses(const LocalizeReport& report, const onnx::ModelProto* model = nullptr);

/// Where a quantised walk found the runs part, for the finding that judged the output.
struct QuantizedDivergence {
  /// "the first value beyond the rounding of quantised kernels is 'cq', the quantised output of node 'conv'
  /// (Conv), computed by ONNX Runtime's fused kernel QLinearConv 'conv_quant': its difference is 1.31 of its
  /// spread (bound 0.25)"; empty when the walk found none.
  std::string text;
  std::string node;  ///< the computing node: a QuantizeLinear's producer, the node of its group
  std::string op_type;
};
QuantizedDivergence DescribeQuantizedDivergence(const LocalizeReport& report);

/// Localises between the two sides of `plan` on `inputs`. Sides with an empty `model` load
/// `model`; sides with their own model (the same graph with other weights, say) are compared value
/// by value under the names both graphs produce, in side A's topological order.
Result<LocalizeReport> Localize(Runtime& runtime, const ModelToLoad& model, const CrossCheckPlan& plan,
                                std::span<const NamedTensor> inputs, const LocalizeOptions& options);

/// Localises a run of `model` with `config` (side B, labelled by its provider) against recorded
/// values (side A, labelled "reference"). A value is matched to a reference tensor by its name or
/// by ReferenceFileStem(name). When `inputs` is empty, the reference tensors named after graph
/// inputs are fed.
Result<LocalizeReport> LocalizeAgainstReference(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config,
                                                std::span<const NamedTensor> reference,
                                                std::span<const NamedTensor> inputs, const LocalizeOptions& options);

/// The same, reading the reference with ReadTensors (a folder of NAME.npy or .pb files, an .npz).
Result<LocalizeReport> LocalizeAgainstReference(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config,
                                                const std::filesystem::path& reference,
                                                std::span<const NamedTensor> inputs, const LocalizeOptions& options);

struct SavedIntermediates {
  std::size_t inputs = 0;  ///< graph inputs written
  std::size_t values = 0;  ///< intermediate values written
  std::size_t chunks_run = 0;
};

/// Runs `model` with `config` and writes its inputs and every tensor value of the main graph to
/// `folder` as ReferenceFileStem(name).pb (the TensorProto keeps the exact name), a chunk at a time
/// as Localize exposes them: a reference for LocalizeAgainstReference on another machine or build.
/// Uses options.chunk_size, max_values and time_budget. Creates the folder.
Result<SavedIntermediates> SaveIntermediates(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config,
                                             std::span<const NamedTensor> inputs, const std::filesystem::path& folder,
                                             const LocalizeOptions& options);

}  // namespace ortkit
