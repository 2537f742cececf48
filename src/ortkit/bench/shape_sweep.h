#pragma once
// The shapes one `ortkit bench` session measures: a batch sweep (--batch 1,8,32) crossed with
// sweeps of other symbolic dimensions (--dim seq_len=16,64,256).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/inputs/sweep_axis.h"
#include "ortkit/runtime/run.h"

namespace ortkit {

/// Parses "1,8,32" (sizes >= 1, no duplicates). `flag` names the flag in the error.
Result<std::vector<std::int64_t>> ParseSizeList(const std::string& text, const std::string& flag);

/// Parses --dim values: each "NAME=V[,V...]"; within one value a bare number continues the
/// previous name ("batch=4,seq_len=16,64" is batch 4 and seq_len 16 and 64).
Result<std::vector<SweepAxis>> ParseSweepAxes(const std::vector<std::string>& values);

/// The symbolic first dimension that the inputs with a symbolic first dimension share
/// ("batch", "batch_size", "N"); empty when no input has one or they disagree.
std::string FindBatchSymbol(const std::vector<TensorSpec>& inputs);

/// One shape to measure: a size for each swept symbolic dimension.
struct ShapePoint {
  std::map<std::string, std::int64_t> dims;
  std::int64_t batch = 1;  ///< rows per run: the batch dimension's size (1 without one)
  std::string label;       ///< "batch=8 seq_len=64", or "default" when nothing is swept
};

/// Every combination of `batches` (empty: the model's default) and `sweeps`, batch varying
/// fastest. Fails with kInvalidArgument, naming the flag and the model's dimensions, when a
/// --dim names no symbolic dimension of the inputs, when --batch is given but the inputs have no
/// shared symbolic first dimension (unless every batch equals the fixed first dimension), when
/// --dim sweeps the batch dimension as well as --batch, or when there are more than 256 points.
Result<std::vector<ShapePoint>> ExpandShapePoints(const std::vector<TensorSpec>& inputs,
                                                  const std::vector<std::int64_t>& batches,
                                                  const std::vector<SweepAxis>& sweeps);

}  // namespace ortkit
