#pragma once
// The values a reduced model is fed: the original's graph inputs, and the intermediate values the
// original computes from them, for the graph inputs that replace removed nodes.
//
// Intermediate values are computed on a reference configuration by a model made of the wanted
// values' ancestors only, the values exposed as untyped outputs (ONNX Runtime infers their types, as
// localisation does), and cached by name. When nothing can run (the original fails to load), the
// types come from ONNX shape inference instead and values are synthesised at the inferred shapes.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/reduce/graph_slice.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// Values of one model's main graph on one set of inputs. Holds references to the runtime, the
/// slicer and the inputs, which must outlive it. Not thread-safe.
class FedValues {
 public:
  /// Values computed by running the model's ancestors with `reference`.
  static FedValues Computed(Runtime& runtime, const GraphSlicer& slicer, const SessionConfig& reference,
                            std::span<const NamedTensor> inputs);
  /// Types from ONNX shape inference run on the model with the inputs' concrete shapes; values
  /// synthesised from `seed` when asked for.
  static FedValues Inferred(const GraphSlicer& slicer, std::span<const NamedTensor> inputs, std::uint64_t seed);

  /// Makes `names` available. False when one cannot be: the nodes it depends on fail on the reference
  /// configuration, it is not a tensor, or (inferred) its type is not concrete. With `split`, a failed
  /// batch is halved until what can be computed is (a slower search that caches more).
  bool Provide(const std::vector<std::string>& names, bool split = false);
  /// The concrete type of a value: a graph input's fed tensor, a value computed or inferred.
  std::optional<ValueType> TypeOf(const std::string& name) const;
  /// Whether a value provided holds NaN or Inf (false for inferred values, synthesised finite).
  bool NonFinite(const std::string& name) const;
  /// Tensors for `names` (provided before), each a copy.
  Result<std::vector<NamedTensor>> Feeds(const std::vector<std::string>& names) const;
  /// Whether values are computed (Computed) rather than inferred and synthesised (Inferred).
  bool computes() const { return runtime_ != nullptr; }
  /// Sessions created to compute values.
  std::size_t sessions() const { return sessions_; }

 private:
  FedValues(Runtime* runtime, const GraphSlicer& slicer, SessionConfig reference, std::span<const NamedTensor> inputs);
  bool Compute(const std::vector<std::string>& missing);
  const NamedTensor* Input(const std::string& name) const;

  Runtime* runtime_;  ///< null when inferred
  const GraphSlicer& slicer_;
  SessionConfig reference_;
  std::span<const NamedTensor> inputs_;
  std::uint64_t seed_ = 0;
  std::unordered_map<std::string, Tensor> computed_;
  std::unordered_map<std::string, bool> non_finite_;
  std::unordered_map<std::string, ValueType> inferred_;
  std::set<std::vector<std::string>> failed_;  ///< batches whose ancestors failed
  std::size_t sessions_ = 0;
};

/// Whether a float tensor holds NaN or Inf (false for other element types).
bool HoldsNonFinite(const Tensor& tensor);

/// The ValueType of a tensor.
ValueType TypeOfTensor(const Tensor& tensor);

}  // namespace ortkit
