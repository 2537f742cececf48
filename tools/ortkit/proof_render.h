#pragma once
// The table of a proof by the numbers (convert, fix): each shape tried, each output's error.

#include <string>

#include "ortkit/convert/conversion_proof.h"
#include "terminal.h"

namespace ortkit::cli {

/// One row per output per shape ("skipped" for a shape the original does not run at), indented for a
/// report, then why each skipped shape was skipped.
std::string RenderProofTable(const ConversionProof& proof, const Style& style);

}  // namespace ortkit::cli
