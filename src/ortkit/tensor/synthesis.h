#pragma once
// Inputs made up when the user gives none: shapes from --dim / --shape, values fit for each input
// (floats from a seeded normal, embedding indices inside their table, masks of ones, control
// scalars set to a value an If compares against, booleans true, strings that are numbers written as
// text). Never an input that makes the runtime read out of bounds.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/tensor/tensor.h"
#include "ortkit/tensor/tensor_spec.h"

namespace ortkit {

/// How to size and fill synthesised inputs.
struct InputPlan {
  std::map<std::string, std::int64_t> dims;                 ///< symbolic name -> size (--dim batch=4)
  std::map<std::string, std::vector<std::int64_t>> shapes;  ///< input name -> full shape (--shape x=1x3x8x8)
  /// Dimensions that are the sum of others (total_len = past_len + seq_len: a decoder's attention mask
  /// spans the cache and the new tokens, as export.json records it): always computed, never given a size.
  std::map<std::string, std::vector<std::string>> dim_sums;
  std::uint64_t seed = 0;
  /// Floats without a hint: normal(0, 1), or uniform in [0.1, 1) when normal values make a correct model
  /// emit NaN (the log or square root of a power spectrum, a variance, a probability).
  bool positive_floats = false;
  /// Integers without a hint: 0, 1, 2, 3, 0, 1, ... in order instead of at random, so that every value a
  /// small index (a graph id, a segment) can take appears (a second draw the sweep compares with).
  bool covering_integers = false;
  /// Most bytes all synthesised inputs together may take: a model that fixes a dimension to 2^31
  /// is refused with the size named rather than allocated.
  std::uint64_t max_bytes = kMaxSynthesizedBytes;
  static constexpr std::uint64_t kMaxSynthesizedBytes = std::uint64_t{2} << 30;
};

/// What values an input should hold, learned from how the graph uses it.
struct ValueHint {
  enum class Kind { kNormal, kIndices, kOnes, kChoice } kind = Kind::kNormal;
  std::int64_t index_limit = 0;  ///< kIndices: values in [0, index_limit)
  double choice = 0;             ///< kChoice: the constant an If condition compares against
  std::string reason;            ///< "indices into 'embeddings.weight' (30522 rows)"
};

/// Hints for graph inputs, by input name; inputs without a hint get kNormal.
std::map<std::string, ValueHint> AnalyzeInputValues(const onnx::ModelProto& model);

/// The size a symbolic dimension gets when the plan does not name it: 1 for batch-like names,
/// 16 for sequence-like names, 32 for spatial names, 4 otherwise. An unnamed axis (INPUT:AXIS, see
/// NameUnnamedAxes) starts at 1.
std::int64_t DefaultDimSize(const std::string& symbol, std::size_t axis);

/// Unnamed dynamic dimensions (no name, or a converter's "?", "-1", "None") are named INPUT:AXIS
/// ("x:2"), so that each is an axis of its own that --dim, --sweep and the size search can name.
std::vector<TensorSpec> NameUnnamedAxes(std::vector<TensorSpec> specs);

/// The axis in an INPUT:AXIS name, or -1 for any other name.
int UnnamedAxisOf(const std::string& symbol);

/// Checks the plan against the model: every --dim names a symbolic dimension of some input and
/// every --shape names an input with a matching rank and fixed dimensions. Errors name the flag.
Status ValidatePlan(const InputPlan& plan, const std::vector<TensorSpec>& inputs);

/// The concrete shape of `spec` under `plan`.
Result<std::vector<std::int64_t>> ResolveShape(const TensorSpec& spec, const InputPlan& plan);

/// Whether the inputs `plan` makes for `specs` fit in plan.max_bytes, found before allocating any:
/// kInvalidArgument naming the total, the largest input and the limit when they do not.
Status CheckSynthesisSize(const std::vector<TensorSpec>& specs, const InputPlan& plan);

/// One tensor per input in `specs`, filled according to `hints`. Deterministic for a given seed.
Result<std::vector<NamedTensor>> SynthesizeInputs(const std::vector<TensorSpec>& specs,
                                                  const std::map<std::string, ValueHint>& hints, const InputPlan& plan);

}  // namespace ortkit
