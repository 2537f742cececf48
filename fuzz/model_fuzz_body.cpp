#include "model_fuzz_body.h"

#include <nlohmann/json.hpp>

#include "ortkit/check/lint.h"
#include "ortkit/check/onnx_checker.h"
#include "ortkit/fix/fix_passes.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/model_file.h"
#include "ortkit/optimize/passes.h"
#include "ortkit/reduce/graph_slice.h"

#if __has_include("ortkit/model/summary.h")
#include "ortkit/model/summary.h"
#define ORTKIT_FUZZ_HAS_SUMMARY 1
#endif

namespace ortkit::fuzz {
namespace {

// The CLI prints every result as JSON with --format json (cli::JsonText, which replaces bytes that
// are not UTF-8 the same way), so the conversion of every result is part of what is fuzzed.
void RenderJson(const nlohmann::json& json) {
  (void)json.dump(2, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void RunModelFuzzBody(std::string_view bytes) {
  ModelLoad load = ParseModelBytes(bytes, "fuzz.onnx");
  RenderJson(load.diagnoses);
  if (!load.model) return;
  // External data resolves against a folder that does not exist, so relative locations never
  // reach real files and every run of the same input behaves the same.
  load.model->path = "/nonexistent-ortkit-fuzz/fuzz.onnx";
  ModelFile& model = *load.model;

  std::vector<Diagnosis> problems;
  (void)ListExternalTensors(*model.proto, &problems);
  RenderJson(problems);
  RenderJson(CheckExternalData(model));

#ifdef ORTKIT_FUZZ_HAS_SUMMARY
  RenderJson(Summarize(model));
#endif

  // `ortkit fix`'s passes, each on its own copy of the model as read (pure edits of the protobuf), and
  // reduce's cut of the second half of the graph.
  for (const auto& pass : FixPasses()) {
    onnx::ModelProto copy = *model.proto;
    const FixPassResult result = pass.apply(copy, FixPassOptions{});
    for (const auto& change : result.changes) RenderJson({change.code, change.target, change.change});
  }
  // `ortkit optimize`'s rewrites that are edits of the protobuf alone (the fusion pass runs ONNX Runtime),
  // for a CPU with VNNI and one without.
  for (const auto& pass : OptimizePasses()) {
    if (pass.reads_file || pass.needs_calibration) continue;
    for (const bool vnni : {true, false}) {
      onnx::ModelProto copy = *model.proto;
      OptimizePassContext context;
      context.cpu.architecture = "x86_64";
      context.cpu.avx512_vnni = vnni;
      auto result = pass.apply(copy, context);
      if (result.ok()) RenderJson({result->rewritten, result->produced, result->notes, result->left});
    }
  }
  const GraphSlicer slicer(*model.proto);
  if (slicer.size() > 0) (void)slicer.BoundaryOf(GraphSlicer::Range(slicer.size() / 2, slicer.size() - 1));

  // The order of `ortkit check`: the checker, the rules on the model as exported, then shape
  // inference, which rewrites the model in place.
  RenderJson(RunChecker(*model.proto).diagnoses);
  RenderJson(LintModel(*model.proto, LintOptions{}));
  RenderJson(RunShapeInference(*model.proto).diagnoses);
}

}  // namespace ortkit::fuzz
