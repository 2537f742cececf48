#pragma once
// Judging two runs of a quantised model by what its outputs are for. With optimisations on, ONNX
// Runtime runs a quantised graph with integer kernels (QDQ groups as QLinearConv, MatMulInteger chains
// as DynamicQuantizeMatMul) that round differently from the unfused float reference by design; a float
// tolerance cannot judge that, so an output it fails is judged by its purpose (tensor/agreement.h):
// the same best class, the same direction, an error small beside its range, or within a few steps of
// the quantisation it is computed from. The float figures stay in the comparison beside the judgement.

#include <span>
#include <string>

#include <onnx/onnx_pb.h>

#include "ortkit/model/quantization.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// Steps of an output's quantisation that fused kernels may change it by and still only round: a
/// requantisation rounds each value to within one step, and a value that lands on the other side of
/// a half step in one layer moves the next ones by a step or two. A divergence of tens of steps is
/// not rounding (measured on ONNX Runtime 1.29's own quantiser's models: 0.02 to 2 steps).
inline constexpr double kRoundingSteps = 4;

/// Measures the task-level agreement of every numeric output of equal shape and type in `comparison`
/// (expected from `expected`, actual from `actual`, matched by name; the purpose read from `model`).
/// When `quantization` says the model is quantised, each output the float tolerance failed is judged
/// by its purpose instead (OutputComparison::judged, passed, judgement). A float model's outputs keep
/// the tolerance's verdict: their agreement is information only. NaN or infinities on one side only are
/// never rounding.
void JudgeByPurpose(ComparisonReport& comparison, std::span<const NamedTensor> expected,
                    std::span<const NamedTensor> actual, const onnx::ModelProto& model,
                    const QuantizationSummary& quantization);

/// Each judged output's task-level agreement, for a report line: "'logits' (values): max error 0.0816% of the
/// output's range 0.98; '387' (scores): top-1 28/28 rows, top-5 overlap 99.6%"; "" when none was measured.
std::string DescribeAgreements(const ComparisonReport& comparison);

}  // namespace ortkit
