// The flags of `ortkit validate`: registered with their defaults, checked and turned into ValidateOptions.
#include "validate_flags.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "number_flags.h"
#include "ortkit/core/numbers.h"
#include "report_page_flag.h"

namespace ortkit::cli {
namespace {

Result<Tolerance> ParsePerOutput(const std::string& item, std::string& name) {
  const auto last = item.rfind(':');
  const auto middle = last == std::string::npos || last == 0 ? std::string::npos : item.rfind(':', last - 1);
  if (middle == std::string::npos || middle == 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--per-output '{}': expected NAME:ATOL:RTOL, e.g. logits:1e-4:1e-3", item));
  }
  try {
    std::size_t atol_end = 0;
    std::size_t rtol_end = 0;
    const std::string atol = item.substr(middle + 1, last - middle - 1);
    const std::string rtol = item.substr(last + 1);
    Tolerance t{std::stod(atol, &atol_end), std::stod(rtol, &rtol_end)};
    if (atol_end != atol.size() || rtol_end != rtol.size()) throw std::invalid_argument("trailing text");
    name = item.substr(0, middle);
    return t;
  } catch (const std::exception&) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--per-output '{}': ATOL and RTOL must be numbers >= 0", item));
  }
}

Result<ToleranceRules> ParseTolerance(const ValidateFlags& flags) {
  ToleranceRules rules;
  rules.atol = flags.atol;
  rules.rtol = flags.rtol;
  for (const auto& item : flags.per_output) {
    std::string name;
    ORTKIT_ASSIGN_OR_RETURN(const Tolerance t, ParsePerOutput(item, name));
    rules.per_output[name] = t;
  }
  ORTKIT_RETURN_IF_ERROR(rules.Validate());
  return rules;
}

// --sweep NAME=V1,V2 ... or auto; without --reference the sweep runs in auto mode.
Status ParseSweep(const ValidateFlags& flags, ValidateOptions& options) {
  bool sweep_auto = false;
  for (const auto& item : flags.sweep) {
    if (item == "auto") {
      sweep_auto = true;
      continue;
    }
    auto axis = ParseSweepAxis(item);
    if (!axis.ok()) return MakeError(axis.error().kind, "--sweep " + axis.error().message);
    options.sweep_axes.push_back(std::move(axis).value());
  }
  if (sweep_auto && !options.sweep_axes.empty())
    return MakeError(ErrorKind::kInvalidArgument, "--sweep auto cannot be combined with explicit axes");
  options.sweep = sweep_auto || !options.sweep_axes.empty() || flags.reference.empty();
  if (!flags.sweep_memory.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(options.sweep_memory_bytes,
                            ParseByteSize(flags.sweep_memory, "--sweep-memory", {64 << 20, 1e15}));
  }
  return OkStatus();
}

}  // namespace

Status CheckPerOutputNames(const ToleranceRules& rules, const std::vector<TensorSpec>& outputs) {
  for (const auto& [name, tolerance] : rules.per_output) {
    const bool known =
        std::any_of(outputs.begin(), outputs.end(), [&wanted = name](const TensorSpec& o) { return o.name == wanted; });
    if (known) continue;
    std::vector<std::string> names;
    names.reserve(outputs.size());
    for (const auto& o : outputs) names.push_back(o.name);
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--per-output {}:{}:{}: the model has no output named '{}'; its outputs are: {}", name,
                                 tolerance.atol, tolerance.rtol, name, fmt::join(names, ", ")));
  }
  return OkStatus();
}

Result<ValidateOptions> ValidateOptionsFrom(const ValidateFlags& flags) {
  ValidateOptions options;
  ORTKIT_ASSIGN_OR_RETURN(options.tolerance, ParseTolerance(flags));
  ORTKIT_RETURN_IF_ERROR(ParseSweep(flags, options));
  options.model = flags.model;
  options.session.provider = flags.provider;
  options.reference = flags.reference;
  // Without a framework reference, the two runtimes' own configurations check each other.
  options.compare = !flags.compare.empty() ? flags.compare : flags.reference.empty() ? "opt-levels" : "";
  options.localize = flags.localize;
  options.localize_chunk = flags.localize_chunk;
  options.batch_check = !flags.no_batch_check;
  options.target_ort = flags.target_ort;
  return options;
}

void RegisterValidateFlags(CLI::App* cmd, ValidateFlags& flags) {
  cmd->add_option("model", flags.model, "the .onnx file")->required();
  cmd->add_option(
      "--reference", flags.reference,
      "expected outputs: an ONNX test-case folder (model.onnx + test_data_set_N), one test_data_set_N folder, "
      "an .npz, or a folder of NAME.npy, holding inputs and outputs named after the model's");
  cmd->add_option("--atol", flags.atol, "absolute tolerance for every output (default by element type)");
  cmd->add_option("--rtol", flags.rtol, "relative tolerance for every output (default by element type)");
  cmd->add_option("--per-output", flags.per_output, "NAME:ATOL:RTOL for one output (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option(
         "--sweep", flags.sweep,
         "dynamic-shape sweep: NAME=V1,V2,... per symbolic dimension (e.g. --sweep batch=1,4,16 seq_len=1,64), "
         "or auto; without --reference the sweep runs in auto mode")
      ->expected(1, -1);
  cmd->add_flag("--no-batch-check", flags.no_batch_check, "skip the batch-consistency check of the sweep");
  cmd->add_option(
      "--sweep-memory", flags.sweep_memory,
      "the most memory any run of the sweep may reach, e.g. 8GiB (default: three quarters of what this process may "
      "use); larger runs are predicted from the measured ones and not started");
  cmd->add_option("--target-ort", flags.target_ort,
                  "also check that ONNX Runtime X.Y (1.10 to 1.29) loads the model and has its operators")
      ->check(TargetOrtValidator());
  cmd->add_option(
      "--compare", flags.compare,
      "cross-check two runtime configurations on the same inputs: opt-levels (all optimisations off vs on), "
      "opt-levels=L1,L2 (off|basic|extended|layout|all), providers=cpu,cuda; without --reference, opt-levels "
      "runs by default");
  cmd->add_flag(
      "--localize", flags.localize,
      "when outputs disagree, find the first intermediate value that diverges (exposing intermediates in chunks)");
  cmd->add_option("--localize-chunk", flags.localize_chunk, "intermediate values exposed per session while localising")
      ->check(WholeNumberIn(1, 1'000'000))
      ->capture_default_str();
  flags.inputs.Register(cmd);
  cmd->add_option("--provider", flags.provider, "execution provider")->capture_default_str();
  AddFormatFlag(cmd, flags.format, {Format::kText, Format::kJson});
  AddReportPageFlag(cmd, flags.report_page);
}

}  // namespace ortkit::cli
