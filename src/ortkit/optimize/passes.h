#pragma once
// The rewrites `ortkit optimize` tries, each a pass of its own over a ModelProto (weights inline). A
// candidate is one pass or a chain of them ("fuse+int8-dynamic"); optimize.h proves and measures each
// candidate before anything is written. A pass says what it changed, by op type, and what it left and why.

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/cpu_features.h"
#include "ortkit/core/result.h"
#include "ortkit/optimize/calibration.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit {

/// What a pass may use besides the model.
struct OptimizePassContext {
  Runtime* runtime = nullptr;     ///< the fusion pass runs ONNX Runtime
  CpuFeatures cpu;                ///< decides the int8 arithmetic
  std::string provider = "cpu";   ///< the provider the candidate is for (fusions are provider-specific)
  std::filesystem::path scratch;  ///< a folder of ortkit's own for the files a pass writes
  /// While the candidate is still the original (the first pass of a chain), a pass that hands the model to
  /// ONNX Runtime is given an empty `model` and these instead: it loads the original's file rather than a
  /// copy serialised again (for a model of 400 MB, a copy and a file fewer).
  std::filesystem::path unchanged_source;
  const onnx::ModelProto* unchanged_model = nullptr;
  /// int8-static: the samples it calibrates with (nullptr: the pass cannot run), and how.
  const CalibrationSamples* calibration = nullptr;
  CalibrationOptions calibration_options;
  /// int4: the values along K that share a scale (16, 32, 64 or 128).
  std::int64_t int4_block = 32;
  /// int4: MatMulNBits' accuracy_level. 4 lets the kernel quantise the activations to int8 per block and
  /// multiply in integers: for a decoder step at batch 1 on this CPU (avx512_vnni) ONNX Runtime's kernel took
  /// 0.11 ms at level 4 against 0.46 ms at level 0 (float activations) and 0.29 ms for the float MatMul, with
  /// the same cosine to float (0.9867). 0 keeps the activations float (and the arithmetic exact to the packed
  /// weights, which the unit test of the packing relies on).
  std::int64_t int4_accuracy_level = 4;
};

/// What one pass did.
struct OptimizePassResult {
  std::map<std::string, int> rewritten;  ///< nodes replaced, by op type ("MatMul": 72)
  std::map<std::string, int> produced;   ///< nodes that appeared, by op type ("SkipLayerNormalization": 24)
  std::vector<std::string> notes;        ///< "U8S8 with weights per channel, full range (avx512_vnni)"
  std::vector<std::string> left;         ///< "24 MatMul of two activations left in float"

  bool changed() const { return !rewritten.empty() || !produced.empty(); }
};

struct OptimizePass {
  std::string_view name;     ///< "int8-dynamic"; --passes names it
  std::string_view summary;  ///< one sentence for the docs and --help
  bool needs_calibration = false;
  bool needs_gpu = false;
  bool reads_file = false;  ///< takes unchanged_source / unchanged_model when given
  /// Rewrites `model` in place (see unchanged_model for the one exception). Errors are bugs or inputs the pass cannot
  /// take (a model it cannot read); a model with nothing to rewrite is a result with changed() false.
  Result<OptimizePassResult> (*apply)(onnx::ModelProto& model, const OptimizePassContext& context) = nullptr;
};

/// Every pass, in the order a chain applies them when several are named.
std::span<const OptimizePass> OptimizePasses();
/// nullptr when no pass is named `name`.
const OptimizePass* FindOptimizePass(std::string_view name);

/// ONNX Runtime's graph at `level` for context.provider, made by a session and saved offline, replacing
/// `model` (read from context.unchanged_source when context.unchanged_model is set); the ops it made and
/// absorbed are counted. Imports of domains the saved graph does not use are dropped.
Result<OptimizePassResult> SaveRuntimeGraph(onnx::ModelProto& model, const OptimizePassContext& context,
                                            OptimizationLevel level);

// The passes (each in its own file).
Result<OptimizePassResult> QuantizeInt8Static(onnx::ModelProto& model, const OptimizePassContext& context);
Result<OptimizePassResult> FuseForProvider(onnx::ModelProto& model, const OptimizePassContext& context);
Result<OptimizePassResult> QuantizeInt8Dynamic(onnx::ModelProto& model, const OptimizePassContext& context);
Result<OptimizePassResult> QuantizeInt8DynamicWithConvolutions(onnx::ModelProto& model,
                                                               const OptimizePassContext& context);
Result<OptimizePassResult> QuantizeInt4WeightOnly(onnx::ModelProto& model, const OptimizePassContext& context);

/// The MatMul weights the int4 pass takes: a constant float [K, N] initializer of at least this many values,
/// with K at least one block of 16.
inline constexpr std::int64_t kInt4MinWeights = 4096;

}  // namespace ortkit
