#pragma once
// ortkit inspect's text output.

#include <cstddef>
#include <string>

#include "ortkit/model/summary.h"
#include "terminal.h"

namespace ortkit::cli {

/// The summary as `ortkit inspect` prints it for people: the model's fields, metadata, inputs and
/// outputs, initializers, external data, operators (the `top` most used), subgraphs (the first
/// `top`), functions and notes. Long doc strings and metadata values are cut to one line.
std::string RenderInspectText(const ModelSummary& summary, std::size_t top, const Style& style);

}  // namespace ortkit::cli
