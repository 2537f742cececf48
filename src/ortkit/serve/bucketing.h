#pragma once
// Sequence-length bucketing and the row copies of batch assembly: requests of different lengths
// along one symbolic dimension are padded up to a bucket boundary (padding filled with zeros, so
// an attention mask reads 0 there), run together, and each request's outputs are cut back to its
// own length.

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/runtime/run.h"
#include "ortkit/serve/model_config.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit::serve {

/// Copies rows [src_row, src_row + rows) of a row-major tensor of `src_shape` into rows
/// [dst_row, dst_row + rows) of one of `dst_shape` (same rank, element size `element_size`).
/// Along every other axis only the common extent min(src, dst) is copied: a larger destination
/// keeps its padding (whatever it held), a smaller one receives the source cut. This is both
/// "pad into a batch" and "cut out of a batch".
void CopyRows(const std::byte* src, std::span<const std::int64_t> src_shape, std::int64_t src_row, std::byte* dst,
              std::span<const std::int64_t> dst_shape, std::int64_t dst_row, std::int64_t rows,
              std::size_t element_size);

/// Where the bucketed dimension sits in each input and output of a model.
struct BucketPlan {
  BucketingConfig config;
  std::vector<int> input_axis;   ///< per model input (declaration order): axis of config.dim, -1 when absent
  std::vector<int> output_axis;  ///< per model output: axis to cut back, -1 when the output keeps its shape
  std::string mask_input;        ///< the input whose padding must read 0 (detected when not configured)
};

/// Finds config.dim among the inputs' symbolic dimensions (never axis 0, the batch) and the
/// outputs that carry it. Fails with kInvalidArgument naming the model's symbolic dimensions when
/// no input has it, and when a configured mask_input is not an input.
Result<BucketPlan> PlanBucketing(const BucketingConfig& config, const std::vector<TensorSpec>& inputs,
                                 const std::vector<TensorSpec>& outputs);

/// Runs `session` on synthetic inputs at a length that pads (two rows), unpadded and padded to its
/// bucket, and compares the outputs cut back to the unpadded length. Output axes that the
/// declaration did not name are learned from the two runs (the axis that grew with the padding).
/// Fails with kInvalidArgument when an output changes under padding: the message names the
/// output, the lengths, and the largest difference, and says that bucketing is refused.
Status VerifyPaddingInvariance(Session& session, const std::vector<TensorSpec>& inputs,
                               const std::vector<TensorSpec>& outputs, const std::map<std::string, ValueHint>& hints,
                               BucketPlan* plan);

}  // namespace ortkit::serve
