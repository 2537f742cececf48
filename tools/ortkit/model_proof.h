#pragma once
// The proof by the numbers that convert and fix share: its options from their flags, the check that
// the output is not the model itself, and its table (each shape tried, each output's error).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ortkit/convert/conversion_proof.h"
#include "terminal.h"

namespace ortkit::cli {

/// The proof's inputs (--dim, --seed; dimensions that are sums of others from an export folder's
/// export.json beside `model`) and tolerances (--atol, --rtol). A usage error names the flag.
Result<ConversionProofOptions> ProofOptionsFrom(const std::filesystem::path& model,
                                                const std::vector<std::string>& dims, std::uint64_t seed,
                                                std::optional<double> atol, std::optional<double> rtol);

/// kInvalidArgument when `out` is `model` itself: "--out 'F' is the model being WHAT; write the WHAT model
/// elsewhere" (`what`: "converted", "fixed").
Status CheckOutIsNotModel(const std::filesystem::path& model, const std::filesystem::path& out,
                          const std::string& what);

/// One row per output per shape ("skipped" for a shape the original does not run at), indented for a
/// report, then why each skipped shape was skipped.
std::string RenderProofTable(const ConversionProof& proof, const Style& style);

}  // namespace ortkit::cli
