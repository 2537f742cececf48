#pragma once
// `ortkit validate`'s text report: each step's section as the command prints it.

#include <string>

#include "ortkit/report/report_page.h"
#include "ortkit/validate/validate.h"
#include "terminal.h"

namespace ortkit::cli {

/// The sections of the steps that ran (target runtime, reference, cross-check, localisations, sweep), in
/// that order, each starting with a blank line; without the title and the verdict.
std::string RenderValidateSteps(const ValidateReport& report, const Style& style);

/// One side of a cross-check: "CUDAExecutionProvider 118, CPUExecutionProvider 2 (3 memory copies)", or
/// why the placement is unknown.
std::string DescribeSidePlacement(const SidePlacement& placement);

/// The sweep as the HTML page's grid: rows over every axis but the last, columns over the last (one axis: a
/// row per size); each cell passed (its run's time), failed (NaN when a finding says so) or skipped, with
/// why; the sizes the model refuses as notes.
PageGrid SweepGrid(const SweepReport& sweep);

}  // namespace ortkit::cli
