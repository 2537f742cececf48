#pragma once
// ortkit inspect's text output.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ortkit/model/summary.h"
#include "terminal.h"

namespace ortkit::cli {

/// The summary as `ortkit inspect` prints it for people: the model's fields, metadata, inputs and
/// outputs, initializers, external data, operators (the `top` most used), subgraphs (the first
/// `top`), functions and notes. Long doc strings and metadata values are cut to one line.
std::string RenderInspectText(const ModelSummary& summary, std::size_t top, const Style& style);

// The parts, for the files that render the sections -------------------------------------------

/// The weights' sections (inspect_weights_render.cpp): initializers by element type and the largest,
/// sparse initializers, external data files.
std::string RenderWeightSections(const ModelSummary& summary, const Style& style);

/// The graph's sections (inspect_graph_render.cpp): the operators (the `top` most used), the subgraphs
/// (the first `top`) and the functions.
std::string RenderGraphSections(const ModelSummary& summary, std::size_t top, const Style& style);

/// A section's heading: a blank line, the title in bold and its detail.
std::string Heading(const Style& style, const std::string& title, const std::string& detail = "");

/// "1 node", "3 nodes".
std::string Plural(std::uint64_t n, const char* one, const char* many);

/// "[1,3,224,224]".
std::string ShapeText(const std::vector<std::int64_t>& shape);

}  // namespace ortkit::cli
