#include "ortkit/fix/fix_passes.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace ortkit {
namespace {

// The summaries are what `ortkit explain` and the troubleshooting guide say of each code a pass answers.
const std::array kPasses = {
    FixPass{"initializers-as-inputs",
            {"graph.initializer-as-input"},
            false,
            FixPurpose::kSameOutputs,
            "removes the initializers from the graph inputs (they stay initializers; --keep-overridable keeps them), "
            "proven by the outputs",
            FixInitializersAsInputs},
    FixPass{"static-batch",
            {"graph.static-batch", "graph.baked-batch-reshape"},
            false,
            FixPurpose::kOtherBatches,
            "names the fixed first dimension of the inputs and outputs (batch) and makes the Reshape constants "
            "that bake the traced batch copy it (0) or infer it (-1); proven by the outputs at the traced size and "
            "a batch sweep whose rows must equal the rows run alone, refused when the graph bakes the size "
            "elsewhere",
            FixStaticBatch},
    FixPass{"training-dropout",
            {"graph.training-dropout"},
            false,
            FixPurpose::kInferenceMode,
            "drops a constant-true training_mode (or sets is_test) so that Dropout passes its input through; proven "
            "by the same outputs twice",
            FixTrainingDropout},
    FixPass{"training-batchnorm",
            {"graph.training-batchnorm"},
            false,
            FixPurpose::kInferenceMode,
            "puts BatchNormalization in inference mode (stored running statistics) and drops its unused "
            "running-statistics outputs; refused when the graph reads them",
            FixTrainingBatchNorm},
    FixPass{"float64",
            {"graph.float64-mixed"},
            false,
            FixPurpose::kSameOutputs,
            "turns the float64 tensors, casts and declared values inside a float32 model into float32 when the "
            "model's inputs and outputs are not float64 and every value fits; refused when the outputs move "
            "beyond tolerance",
            FixFloat64},
    FixPass{"dim-names",
            {"shape.dim-name-inconsistent", "shape.output-dim-unrelated"},
            false,
            FixPurpose::kSameOutputs,
            "gives dimensions that the graph forces to be one size one name on every input and output, and names "
            "an output's dimension after the input's when shape inference from the inputs proves it is that axis",
            FixDimNames},
    FixPass{"dead-code",
            {"graph.unused-input"},
            true,
            FixPurpose::kSameOutputs,
            "removes unused inputs, nodes whose outputs reach no graph output, unused initializers, and reads "
            "equal initializers under one name; proven by the outputs",
            RemoveDeadCode},
};

}  // namespace

std::span<const FixPass> FixPasses() { return kPasses; }

const FixPass* FindFixPassForCode(std::string_view code) {
  for (const auto& pass : kPasses) {
    if (std::find(pass.codes.begin(), pass.codes.end(), code) != pass.codes.end()) return &pass;
  }
  return nullptr;
}

std::string FixHandling(std::string_view code) {
  // Moving to another opset is asked for with a flag: no finding alone says which release to aim at.
  static constexpr std::array kByConversion = {"graph.opset-too-new", "checker.opset-too-new", "target.opset",
                                               "target.operator", "target.ir-version"};
  if (std::find(kByConversion.begin(), kByConversion.end(), code) != kByConversion.end()) {
    return "`ortkit fix --target-ort X.Y` (or --opset N) moves the model to an opset that release loads, with "
           "convert's converter and adapters, proven by the outputs like every fix.";
  }
  const FixPass* pass = FindFixPassForCode(code);
  if (pass == nullptr) return {};
  return fmt::format("`ortkit fix` handles it (fix '{}'): it {}.", pass->name, pass->summary);
}

}  // namespace ortkit
