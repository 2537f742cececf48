#pragma once
// The report of `ortkit optimize` for people: the inputs and shapes the proof used, one row per candidate
// (candidate | passes | accuracy | p50 | speed-up | size), what each pass rewrote, and the verdict.

#include <string>

#include "ortkit/optimize/optimize.h"
#include "terminal.h"

namespace ortkit::cli {

std::string RenderOptimizeReport(const OptimizeReport& report, const Style& style);

}  // namespace ortkit::cli
