#include "equivalence_flags.h"

#include <system_error>

#include <fmt/format.h>

#include "input_flags.h"
#include "ortkit/model/export_record.h"

namespace ortkit::cli {

Result<EquivalenceOptions> EquivalenceOptionsFrom(const std::filesystem::path& model,
                                                  const std::vector<std::string>& dims, std::uint64_t seed,
                                                  std::optional<double> atol, std::optional<double> rtol) {
  EquivalenceOptions proof;
  InputFlags input_flags;
  input_flags.dims = dims;
  input_flags.seed = seed;
  ORTKIT_ASSIGN_OR_RETURN(proof.inputs, ParsePlan(input_flags));
  // An export folder's record says which dimensions are sums of others (a decoder's mask spans its cache).
  if (auto record = ReadExportRecord(model.parent_path() / "export.json"); record.ok())
    proof.inputs.dim_sums = record->dim_sums;
  proof.tolerance.atol = atol;
  proof.tolerance.rtol = rtol;
  ORTKIT_RETURN_IF_ERROR(proof.tolerance.Validate());
  return proof;
}

}  // namespace ortkit::cli
