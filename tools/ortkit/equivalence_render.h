#pragma once
// The table of a proof by the numbers (CheckEquivalence), as convert and fix print it.

#include <string>

#include "ortkit/validate/model_equivalence.h"
#include "terminal.h"

namespace ortkit::cli {

/// One row per output per shape ("skipped" for a shape the original does not run at), indented for a
/// report, then why each skipped shape was skipped.
std::string RenderEquivalenceTable(const EquivalenceReport& proof, const Style& style);

}  // namespace ortkit::cli
