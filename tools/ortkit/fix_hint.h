#pragma once
// The next step after a report whose findings `ortkit fix` repairs: one line that names them.

#include <string>
#include <vector>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit::cli {

/// "`ortkit fix MODEL --out fixed.onnx` can repair graph.static-batch, graph.float64-mixed (each fix proven
/// before anything is written)", or "" when no finding is one fix handles.
std::string FixHint(const std::vector<Diagnosis>& diagnoses, const std::string& model_path);

}  // namespace ortkit::cli
