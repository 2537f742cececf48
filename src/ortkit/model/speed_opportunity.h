#pragma once
// Whether `ortkit optimize` is likely to make a model faster, from facts other reports already hold: where
// the model's float weights are (doctor) or where a profiled run's time went (bench --profile). The answer
// is one line naming the command and the fact behind it, or nothing: doctor and bench end with it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/cpu_features.h"

namespace ortkit {

/// The float32 weights of the main graph, by the operators that read them.
struct WeightShare {
  std::int64_t float_bytes = 0;        ///< every float32 initializer
  std::int64_t product_bytes = 0;      ///< rank-2 weights (input 1) of MatMul and Gemm
  std::int64_t convolution_bytes = 0;  ///< weights (input 1) of Conv
  bool quantized = false;              ///< quantisation operators already (SummarizeQuantization)
};
WeightShare ShareWeights(const onnx::ModelProto& model);

/// At least this much of quantisable weight, and half of the float weights, before a step is suggested:
/// below it a run is overhead that quantising does not remove.
inline constexpr std::int64_t kWorthQuantisingBytes = 1 << 20;

/// "`ortkit optimize MODEL --out fast.onnx` (MatMul/Gemm hold 85% of the weights; int8 with this CPU's
/// VNNI ...)", or "" when the model is quantised already or its products and convolutions hold too little.
std::string NextStepFromWeights(const WeightShare& share, std::string_view model_path, const CpuFeatures& cpu);

/// Time by operator type, as a profile gives it (share 0..1 of the nodes' time).
struct OpTimeShare {
  std::string op_type;
  double share = 0;
};

/// "MatMul is 78% of the time: `ortkit optimize MODEL --out fast.onnx` ..." when float matrix products and
/// convolutions (MatMul, Gemm, Conv and ONNX Runtime's fused forms of them) take at least half of the time;
/// "" otherwise (already quantised operators are not counted).
std::string NextStepFromProfile(const std::vector<OpTimeShare>& op_types, std::string_view model_path);

}  // namespace ortkit
