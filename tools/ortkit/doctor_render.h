#pragma once
// `ortkit doctor`'s report for people: text on a terminal, or Markdown (--format markdown).

#include <string>

#include "ortkit/doctor/doctor.h"
#include "terminal.h"

namespace ortkit::cli {

/// The verdict, the findings most severe first, the chain step by step, each provider's sweep grid and
/// the baseline latency. Markdown differs from text in headings, emphasis and tables only.
std::string RenderDoctorReport(const DoctorReport& report, bool markdown, const Style& style);

}  // namespace ortkit::cli
