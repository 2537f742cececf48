#include "ortkit/repair/fix_passes.h"

#include <algorithm>
#include <array>

namespace ortkit {
namespace {

const std::array kPasses = {
    FixPass{"initializers-as-inputs",
            {"graph.initializer-as-input"},
            false,
            FixPurpose::kSameOutputs,
            FixInitializersAsInputs},
    FixPass{"static-batch",
            {"graph.static-batch", "graph.baked-batch-reshape"},
            false,
            FixPurpose::kOtherBatches,
            FixStaticBatch},
    FixPass{"training-dropout", {"graph.training-dropout"}, false, FixPurpose::kInferenceMode, FixTrainingDropout},
    FixPass{
        "training-batchnorm", {"graph.training-batchnorm"}, false, FixPurpose::kInferenceMode, FixTrainingBatchNorm},
    FixPass{"float64", {"graph.float64-mixed"}, false, FixPurpose::kSameOutputs, FixFloat64},
    FixPass{"dim-names", {"shape.dim-name-inconsistent"}, false, FixPurpose::kSameOutputs, FixDimNames},
    FixPass{"dead-code", {"graph.unused-input"}, true, FixPurpose::kSameOutputs, RemoveDeadCode},
};

}  // namespace

std::span<const FixPass> FixPasses() { return kPasses; }

const FixPass* FindFixPassForCode(std::string_view code) {
  for (const auto& pass : kPasses) {
    if (std::find(pass.codes.begin(), pass.codes.end(), code) != pass.codes.end()) return &pass;
  }
  return nullptr;
}

}  // namespace ortkit
