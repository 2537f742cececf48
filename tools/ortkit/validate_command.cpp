// ortkit validate MODEL: the model's numbers against the framework's, and at every shape it claims to accept.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "input_flags.h"
#include "model_session.h"
#include "number_flags.h"
#include "ortkit/check/target_runtime.h"
#include "ortkit/core/numbers.h"
#include "ortkit/validate/validate.h"
#include "terminal.h"
#include "validate_render.h"

namespace ortkit::cli {
namespace {

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
  std::string format = "text";
};

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

// --per-output names outputs of the model: a misspelt name would leave the tolerance it sets unused.
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

// The options the flags give, but for the inputs (parsed once the model is open).
Result<ValidateOptions> ParseOptions(const ValidateFlags& flags) {
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
  return options;
}

// A step that could not be carried out: the flags or files are at fault.
int ReportStepFailure(const ValidateFailure& failure, const ValidateOptions& options, Format format) {
  using Step = ValidateFailure::Step;
  const std::string& message = failure.error.message;
  if (failure.step == Step::kReference) {
    ReportFailure("validate", {UnusableReference(options.reference, failure.error)}, "unusable reference", format);
  } else if (failure.step == Step::kCompareMode) {
    ReportFailure("validate", {}, "--compare " + message, format);
  } else if (failure.step == Step::kCrossCheck) {
    ReportFailure("validate", {}, "--compare " + options.compare + ": " + message, format);
  } else {
    ReportFailure("validate", {}, message, format);
  }
  return kExitUsage;
}

// --dim/--shape do not parse. The steps that run before the inputs are used say their errors first (an
// unusable reference, an unknown --compare mode), as they did when the inputs were parsed where used.
int ReportInputFlagsError(const Error& error, const OpenedModel& opened, const ValidateOptions& options,
                          Format format) {
  using Step = ValidateFailure::Step;
  if (!options.reference.empty()) {
    if (auto cases = ReadReference(options.reference, opened.inputs, opened.outputs); !cases.ok())
      return ReportStepFailure({Step::kReference, cases.error()}, options, format);
  }
  if (!options.compare.empty()) {
    if (auto plan = ParseCrossCheckMode(options.compare, options.session); !plan.ok())
      return ReportStepFailure({Step::kCompareMode, plan.error()}, options, format);
  }
  ReportFailure("validate", {}, error.message, format);
  return kExitUsage;
}

// --target-ort: whether that release loads the model and has its operators; adds its section and JSON.
bool CheckTarget(const OrtRelease& target, const onnx::ModelProto& model, const Style& style, std::string& text,
                 nlohmann::json& json) {
  const std::vector<Diagnosis> found = CheckTargetRuntime(model, target);
  const bool loads =
      std::none_of(found.begin(), found.end(), [](const Diagnosis& d) { return d.severity == Severity::kError; });
  text += fmt::format("\n{} ONNX Runtime {}: {}\n", style.Bold("target runtime"), target.version,
                      loads ? style.Green("loads the model") : style.Red("FAILED"));
  for (const auto& d : found) text += RenderDiagnosis(d, style);
  json["target"] = {{"release", target.version}, {"passed", loads}, {"diagnoses", found}};
  return loads;
}

int Run(const ValidateFlags& flags) {
  Format format;
  ParseFormat(flags.format, &format);
  auto options = ParseOptions(flags);
  if (!options.ok()) {
    ReportFailure("validate", {}, options.error().message, format);
    return kExitUsage;
  }
  int exit_code = kExitOk;
  auto opened = OpenModel(flags.model, options->session, format, "validate", &exit_code);
  if (!opened.ok()) return exit_code;
  if (auto named = CheckPerOutputNames(options->tolerance, opened->outputs); !named.ok()) {
    ReportFailure("validate", {}, named.error().message, format);
    return kExitUsage;
  }
  auto sources = ParseSources(flags.inputs);
  // Only the cross-check and the sweep use the inputs: without them bad --dim flags go unread, as ever.
  if (!sources.ok() && (options->sweep || !options->compare.empty()))
    return ReportInputFlagsError(sources.error(), *opened, *options, format);
  if (sources.ok()) options->inputs = std::move(sources).value();

  nlohmann::json json = nlohmann::json::object();
  const Style style = Style::ForStream(stdout);
  std::string text =
      fmt::format("{} {} (provider {})\n", style.Bold("ortkit validate"), flags.model.string(), flags.provider);
  bool passed = true;
  if (const OrtRelease* target = FindOrtRelease(flags.target_ort); target != nullptr)
    passed = CheckTarget(*target, *opened->model->proto, style, text, json);
  const ValidateReport report = Validate(*opened->runtime, *opened->session, *opened->model->proto, *options);
  if (report.failure) return ReportStepFailure(*report.failure, *options, format);
  passed = passed && report.Passed();
  json.update(report.ToJson());
  json["model"] = flags.model.string();
  json["provider"] = flags.provider;
  json["verdict"] = passed ? "pass" : "fail";
  if (format == Format::kJson) {
    PrintJson(json);
  } else {
    text += RenderValidateSteps(report, style);
    text += fmt::format("\n{}\n", passed ? style.Green("PASS") : style.Red("FAIL"));
    PrintText(stdout, text);
  }
  return passed ? kExitOk : kExitFindings;
}

}  // namespace

void RegisterValidate(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Compare the model's outputs with references and sweep its dynamic shapes");
  cmd->add_option("model", flags->model, "the .onnx file")->required();
  cmd->add_option(
      "--reference", flags->reference,
      "expected outputs: an ONNX test-case folder (model.onnx + test_data_set_N), one test_data_set_N folder, "
      "an .npz, or a folder of NAME.npy, holding inputs and outputs named after the model's");
  cmd->add_option("--atol", flags->atol, "absolute tolerance for every output (default by element type)");
  cmd->add_option("--rtol", flags->rtol, "relative tolerance for every output (default by element type)");
  cmd->add_option("--per-output", flags->per_output, "NAME:ATOL:RTOL for one output (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option(
         "--sweep", flags->sweep,
         "dynamic-shape sweep: NAME=V1,V2,... per symbolic dimension (e.g. --sweep batch=1,4,16 seq_len=1,64), "
         "or auto; without --reference the sweep runs in auto mode")
      ->expected(1, -1);
  cmd->add_flag("--no-batch-check", flags->no_batch_check, "skip the batch-consistency check of the sweep");
  cmd->add_option(
      "--sweep-memory", flags->sweep_memory,
      "the most memory any run of the sweep may reach, e.g. 8GiB (default: three quarters of what this process may "
      "use); larger runs are predicted from the measured ones and not started");
  cmd->add_option("--target-ort", flags->target_ort,
                  "also check that ONNX Runtime X.Y (1.10 to 1.29) loads the model and has its operators")
      ->check(TargetOrtValidator());
  cmd->add_option(
      "--compare", flags->compare,
      "cross-check two runtime configurations on the same inputs: opt-levels (all optimisations off vs on), "
      "opt-levels=L1,L2 (off|basic|extended|layout|all), providers=cpu,cuda; without --reference, opt-levels "
      "runs by default");
  cmd->add_flag(
      "--localize", flags->localize,
      "when outputs disagree, find the first intermediate value that diverges (exposing intermediates in chunks)");
  cmd->add_option("--localize-chunk", flags->localize_chunk, "intermediate values exposed per session while localising")
      ->check(WholeNumberIn(1, 1'000'000))
      ->capture_default_str();
  flags->inputs.Register(cmd);
  cmd->add_option("--provider", flags->provider, "execution provider")->capture_default_str();
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
