#include "ortkit/diagnose/rules.h"

namespace ortkit {

std::vector<Diagnosis> LintModel(const onnx::ModelProto& model, const LintOptions& options) { return {}; }

}  // namespace ortkit
