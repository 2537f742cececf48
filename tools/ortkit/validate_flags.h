#pragma once
// The flags of `ortkit validate` and the ValidateOptions they make.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "input_flags.h"
#include "ortkit/core/result.h"
#include "ortkit/validate/validate.h"
#include "terminal.h"

namespace ortkit::cli {

struct ValidateFlags {
  std::filesystem::path model;
  std::filesystem::path reference;
  std::vector<std::string> sweep;  ///< "batch=1,4,16" ... or "auto"
  std::string sweep_memory;        ///< "8GiB"; empty: from the machine
  std::optional<double> atol;
  std::optional<double> rtol;
  std::vector<std::string> per_output;  ///< "name:atol:rtol"
  InputFlags inputs;
  std::string provider = "cpu";
  bool no_batch_check = false;
  std::string target_ort;
  std::string compare;  ///< "opt-levels", "opt-levels=off,basic", "providers=cpu,cuda"
  bool localize = false;
  std::size_t localize_chunk = ValidateOptions{}.localize_chunk;
  Format format = Format::kText;
  std::filesystem::path report_page;  ///< --report: the HTML page too
};

/// Registers the flags of `cmd` (validate's) into `flags`, the defaults read from it.
void RegisterValidateFlags(CLI::App* cmd, ValidateFlags& flags);

/// The options the flags give, but for the inputs (parsed once the model is open). Errors name the flag.
Result<ValidateOptions> ValidateOptionsFrom(const ValidateFlags& flags);

/// --per-output names outputs of the model: a misspelt name would leave the tolerance it sets unused.
Status CheckPerOutputNames(const ToleranceRules& rules, const std::vector<TensorSpec>& outputs);

}  // namespace ortkit::cli
