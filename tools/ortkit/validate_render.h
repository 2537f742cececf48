#pragma once
// `ortkit validate`'s text report: each step's section as the command prints it.

#include <string>

#include "ortkit/validate/validate.h"
#include "terminal.h"

namespace ortkit::cli {

/// The sections of the steps that ran (target runtime, reference, cross-check, localisations, sweep), in
/// that order, each starting with a blank line; without the title and the verdict.
std::string RenderValidateSteps(const ValidateReport& report, const Style& style);

/// One side of a cross-check: "CUDAExecutionProvider 118, CPUExecutionProvider 2 (3 memory copies)", or
/// why the placement is unknown.
std::string DescribeSidePlacement(const SidePlacement& placement);

}  // namespace ortkit::cli
