// Graph fusions for the target provider: ONNX Runtime's extended level (Attention, SkipLayerNormalization,
// EmbedLayerNormalization, Gelu/BiasGelu/FastGelu, LayerNormalization, MatMul+Scale, Conv+activation...)
// applied by a session of that provider and saved offline. Never the layout level: its NCHWc nodes and
// reordered weights only run on the CPU that wrote them.
#include <fstream>

#include <fmt/format.h>

#include "ortkit/model/external_data.h"
#include "ortkit/model/model_file.h"
#include "ortkit/optimize/graph_rewrite.h"
#include "ortkit/optimize/passes.h"

namespace ortkit {
namespace {

// Ops whose count went up (made by a fusion) and down (absorbed by one).
void DiffOps(const std::map<std::string, int>& before, const std::map<std::string, int>& after,
             OptimizePassResult& result) {
  for (const auto& [op, count] : after) {
    auto it = before.find(op);
    const int was = it == before.end() ? 0 : it->second;
    if (count > was) result.produced[op] = count - was;
  }
  for (const auto& [op, count] : before) {
    auto it = after.find(op);
    const int now = it == after.end() ? 0 : it->second;
    if (now < count) result.rewritten[op] = count - now;
  }
}

}  // namespace

Result<OptimizePassResult> SaveRuntimeGraph(onnx::ModelProto& model, const OptimizePassContext& context,
                                            OptimizationLevel level) {
  if (context.runtime == nullptr) return MakeError(ErrorKind::kInternal, "no runtime given");
  const auto before = CountOps(context.unchanged_model != nullptr ? context.unchanged_model->graph() : model.graph());
  std::filesystem::path source = context.unchanged_model != nullptr ? context.unchanged_source : "";
  if (source.empty()) {
    source = context.scratch / "fuse-input.onnx";
    ORTKIT_RETURN_IF_ERROR(WriteModel(model, source, /*external_data=*/false));
  }
  SessionConfig config;
  config.provider = context.provider;
  config.intra_op_threads = 1;
  config.optimization_level = level;
  config.optimized_model_path = context.scratch / "runtime-graph.onnx";
  {
    auto session = Session::Create(*context.runtime, source, config);
    if (!session.ok()) return MakeError(session.error().kind, session.error().message);
  }
  ModelLoad fused = LoadModelFile(config.optimized_model_path);
  std::error_code ignored;
  std::filesystem::remove(config.optimized_model_path, ignored);
  if (context.unchanged_model == nullptr) std::filesystem::remove(source, ignored);
  if (!fused.model) {
    return MakeError(ErrorKind::kRuntime, fmt::format("ONNX Runtime's saved graph cannot be read back: {}",
                                                      fused.diagnoses.empty() ? "" : fused.diagnoses.front().message));
  }
  model = std::move(*fused.model->proto);
  DropUnusedImports(model);
  OptimizePassResult result;
  DiffOps(before, CountOps(model.graph()), result);
  result.notes.push_back(fmt::format("ONNX Runtime {}'s {} level for {}, saved offline", Runtime::Version(),
                                     level == OptimizationLevel::kBasic ? "basic" : "extended", context.provider));
  return result;
}

Result<OptimizePassResult> FuseForProvider(onnx::ModelProto& model, const OptimizePassContext& context) {
  return SaveRuntimeGraph(model, context, OptimizationLevel::kExtended);
}

}  // namespace ortkit
