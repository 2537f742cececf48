#include "ortkit/optimize/passes.h"

#include <algorithm>
#include <array>

namespace ortkit {
namespace {

const std::array<OptimizePass, 5> kPasses = {{
    {"fuse",
     "ONNX Runtime's graph fusions for the provider (extended level: Attention, SkipLayerNormalization, Gelu, "
     "MatMul+Scale, Conv+activation, ...) saved offline, never the layout level; the fused operators are counted",
     false, false, true, &FuseForProvider},
    {"int8-dynamic",
     "int8 weights per output channel for MatMul and Gemm, activations quantised at run time (U8S8; 7-bit weights "
     "on x86 without VNNI), in ONNX's integer operators that ONNX Runtime fuses into its integer kernels",
     false, false, false, &QuantizeInt8Dynamic},
    {"int8-dynamic-conv",
     "int8-dynamic with convolutions too (ConvInteger): chosen only when measured faster, which it often is not", false,
     false, false, &QuantizeInt8DynamicWithConvolutions},
    {"int8-static",
     "QDQ: activations uint8 at ranges calibrated on --calibration samples (minmax, percentile or entropy), weights "
     "int8 per channel, biases int32, around Conv, MatMul, Gemm, Add and the pools, after ONNX Runtime's basic level; "
     "a Relu after a quantised operator is folded into its zero point",
     true, false, true, &QuantizeInt8Static},
    {"int4",
     "weight-only 4-bit blocks (com.microsoft MatMulNBits, --int4-block values along K per scale and zero point) for "
     "MatMul with a constant float [K, N] weight of 4,096 values or more; activations stay float",
     false, false, false, &QuantizeInt4WeightOnly},
}};

}  // namespace

std::span<const OptimizePass> OptimizePasses() { return kPasses; }

const OptimizePass* FindOptimizePass(std::string_view name) {
  auto it = std::find_if(kPasses.begin(), kPasses.end(), [&](const OptimizePass& p) { return p.name == name; });
  return it == kPasses.end() ? nullptr : &*it;
}

}  // namespace ortkit
