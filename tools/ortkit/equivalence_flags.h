#pragma once
// The proof by the numbers that convert and fix share (CheckEquivalence): its options from their flags,
// and the check that the output is not the model itself. Its table is equivalence_render.h's.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/validate/model_equivalence.h"

namespace ortkit::cli {

/// The proof's inputs (--dim, --seed; dimensions that are sums of others from an export folder's
/// export.json beside `model`) and tolerances (--atol, --rtol). A usage error names the flag.
Result<EquivalenceOptions> EquivalenceOptionsFrom(const std::filesystem::path& model,
                                                  const std::vector<std::string>& dims, std::uint64_t seed,
                                                  std::optional<double> atol, std::optional<double> rtol);

}  // namespace ortkit::cli
