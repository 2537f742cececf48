// ortkit validate MODEL: the model's numbers against the framework's, and at every shape it claims to accept.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "input_flags.h"
#include "model_session.h"
#include "ortkit/check/target_runtime.h"
#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/validate/cross_check.h"
#include "ortkit/validate/localize.h"
#include "ortkit/validate/reference.h"
#include "ortkit/validate/sweep.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

struct ValidateFlags {
  std::filesystem::path model;
  std::filesystem::path reference;
  std::vector<std::string> sweep;  ///< "batch=1,4,16" ... or "auto"
  std::optional<double> atol;
  std::optional<double> rtol;
  std::vector<std::string> per_output;  ///< "name:atol:rtol"
  InputFlags inputs;
  std::string provider = "cpu";
  bool no_batch_check = false;
  std::string target_ort;
  std::string compare;  ///< "opt-levels", "opt-levels=off,basic", "providers=cpu,cuda"
  bool localize = false;
  std::size_t localize_chunk = LocalizeOptions{}.chunk_size;
  std::string format = "text";
};

std::string Sci(double v) { return fmt::format("{:.3g}", v); }

Result<ToleranceRules> ParseTolerance(const ValidateFlags& flags) {
  ToleranceRules rules;
  rules.atol = flags.atol;
  rules.rtol = flags.rtol;
  for (const auto& item : flags.per_output) {
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
      rules.per_output[item.substr(0, middle)] = t;
    } catch (const std::exception&) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--per-output '{}': ATOL and RTOL must be numbers >= 0", item));
    }
  }
  ORTKIT_RETURN_IF_ERROR(rules.Validate());
  return rules;
}

std::string RenderComparison(const ComparisonReport& report, const Style& style, const std::string& indent = "    ") {
  Table table({"output", "shape", "max abs", "max rel", "mean abs", "mismatches", "atol", "rtol", "result"},
              {false, false, true, true, true, true, true, true, false});
  std::string notes;
  for (const auto& o : report.outputs) {
    table.AddRow({o.name, o.actual_desc, Sci(o.max_abs_error), Sci(o.max_rel_error), Sci(o.mean_abs_error),
                  fmt::format("{}/{}", o.mismatches, o.elements), Sci(o.EffectiveAtol()), Sci(o.tolerance.rtol),
                  o.passed ? style.Green("pass") : style.Red("FAIL")});
    if (!o.passed) {
      notes += fmt::format("  {} {}\n", style.Red(o.name + ":"), o.problem);
      if (!o.worst_position.empty() || o.worst_index >= 0) {
        notes += fmt::format(
            "    worst at [{}]: expected {}, got {}\n", fmt::join(o.worst_position, ", "),
            o.strings ? fmt::format("\"{}\"", o.worst_expected_string) : fmt::format("{:.8g}", o.worst_expected),
            o.strings ? fmt::format("\"{}\"", o.worst_actual_string) : fmt::format("{:.8g}", o.worst_actual));
      }
    }
  }
  for (const auto& name : report.missing_in_run)
    notes += fmt::format("  {} the model did not produce '{}'\n", style.Red("missing:"), name);
  for (const auto& name : report.not_in_reference)
    notes += fmt::format("  {} '{}' has no reference value (not compared)\n", style.Dim("note:"), name);
  std::string indented_notes;
  std::size_t start = 0;
  while (start < notes.size()) {
    const std::size_t end = notes.find('\n', start);
    indented_notes += indent.substr(2) + notes.substr(start, end - start + 1);
    start = end + 1;
  }
  return table.Render(style, indent) + (notes.empty() ? "" : "\n" + indented_notes);
}

std::string RenderSweep(const SweepReport& report, const Style& style) {
  std::vector<std::string> headers;
  std::vector<bool> right;
  for (const auto& axis : report.axes) {
    headers.push_back(axis.dim);
    right.push_back(true);
  }
  for (const char* h : {"result", "time ms", "batch check"}) {
    headers.push_back(h);
    right.push_back(std::string(h) == "time ms");
  }
  Table table(headers, right);
  std::string problems;
  for (const auto& cell : report.cells) {
    std::vector<std::string> row;
    for (const auto& axis : report.axes) row.push_back(std::to_string(cell.dims.at(axis.dim)));
    const bool ok = cell.state == SweepCell::State::kPassed;
    row.push_back(ok ? style.Green("pass") : style.Red("FAIL"));
    row.push_back(fmt::format("{:.2f}", cell.run_ms));
    row.push_back(cell.batch_checked ? fmt::format("max err {}", Sci(cell.batch_max_abs_error)) : style.Dim("-"));
    table.AddRow(std::move(row));
    for (const auto& d : cell.diagnoses) problems += "\n" + RenderDiagnosis(d, style);
  }
  std::string head =
      report.batch_dim.empty()
          ? ""
          : fmt::format("  batch axis: {} (row i of a batched run must equal row i alone)\n", report.batch_dim);
  // Why the sweep covers the sizes it does: the model's own limits, found by running it.
  for (const auto& note : report.notes) head += style.Dim(fmt::format("  {}\n", note));
  for (const auto& f : report.size_findings) {
    const std::string line = fmt::format("  size limit: {}\n", f.Describe());
    if (head.find(f.Describe()) == std::string::npos) head += style.Dim(line);
  }
  return head + "\n" + table.Render(style) + problems;
}

std::string RenderLocalize(const LocalizeReport& report, const std::vector<Diagnosis>& diagnoses, const Style& style) {
  std::string out =
      fmt::format("\n{} ({} vs {}: {} values compared{})\n", style.Bold("localisation"), report.label_a, report.label_b,
                  report.stats.values_compared, report.complete ? "" : ", incomplete: " + report.stopped_because);
  if (diagnoses.empty()) out += "  every intermediate value agrees\n";
  for (const auto& d : diagnoses) out += RenderDiagnosis(d, style);
  return out;
}

int Run(const ValidateFlags& flags) {
  Format format;
  ParseFormat(flags.format, &format);
  auto tolerance = ParseTolerance(flags);
  if (!tolerance.ok()) {
    ReportFailure("validate", {}, tolerance.error().message, format);
    return kExitUsage;
  }
  std::vector<SweepAxis> axes;
  bool sweep_auto = false;
  for (const auto& item : flags.sweep) {
    if (item == "auto") {
      sweep_auto = true;
      continue;
    }
    auto axis = ParseSweepAxis(item);
    if (!axis.ok()) {
      ReportFailure("validate", {}, "--sweep " + axis.error().message, format);
      return kExitUsage;
    }
    axes.push_back(std::move(axis).value());
  }
  if (sweep_auto && !axes.empty()) {
    ReportFailure("validate", {}, "--sweep auto cannot be combined with explicit axes", format);
    return kExitUsage;
  }
  const bool do_sweep = sweep_auto || !axes.empty() || flags.reference.empty();
  // Without a framework reference, the two runtimes' own configurations check each other.
  const std::string compare_mode = !flags.compare.empty() ? flags.compare : flags.reference.empty() ? "opt-levels" : "";

  int exit_code = kExitOk;
  SessionConfig config;
  config.provider = flags.provider;
  auto opened = OpenModel(flags.model, config, format, "validate", &exit_code);
  if (!opened.ok()) return exit_code;
  Session& session = *opened->session;
  const std::vector<TensorSpec>* input_specs = &opened->inputs;
  const std::vector<TensorSpec>* output_specs = &opened->outputs;

  nlohmann::json json = {{"model", flags.model.string()}, {"provider", flags.provider}};
  const Style style = Style::ForStream(stdout);
  std::string text =
      fmt::format("{} {} (provider {})\n", style.Bold("ortkit validate"), flags.model.string(), flags.provider);
  bool passed = true;
  if (const OrtRelease* target = FindOrtRelease(flags.target_ort); target != nullptr && opened->model != nullptr) {
    const std::vector<Diagnosis> found = CheckTargetRuntime(*opened->model->proto, *target);
    const bool loads =
        std::none_of(found.begin(), found.end(), [](const Diagnosis& d) { return d.severity == Severity::kError; });
    text += fmt::format("\n{} ONNX Runtime {}: {}\n", style.Bold("target runtime"), target->version,
                        loads ? style.Green("loads the model") : style.Red("FAILED"));
    for (const auto& d : found) text += RenderDiagnosis(d, style);
    json["target"] = {{"release", target->version}, {"passed", loads}, {"diagnoses", found}};
    passed = passed && loads;
  }
  // Where --localize's outcome goes, whichever check found the mismatch.
  auto report_localized = [&](const Result<LocalizeReport>& localized) {
    if (!localized.ok()) {
      text += fmt::format("\n{} {}\n", style.Red("localisation failed:"), localized.error().message);
      json["localize"] = {{"error", localized.error().message}};
    } else {
      const auto diagnoses =
          LocalizeDiagnoses(*localized, opened->model != nullptr ? opened->model->proto.get() : nullptr);
      json["localize"] = localized->ToJson();
      json["localize"]["diagnoses"] = diagnoses;
      text += RenderLocalize(*localized, diagnoses, style);
    }
  };

  if (!flags.reference.empty()) {
    auto cases = ReadReference(flags.reference, *input_specs, *output_specs);
    if (!cases.ok()) {
      Location where;
      where.file = flags.reference.string();
      ReportFailure("validate", {Diagnose("validate.reference-input", cases.error().message, where)},
                    "unusable reference", format);
      return kExitUsage;
    }
    const ValidationReport report = ValidateAgainst(session, *cases, *tolerance);
    passed = passed && report.Passed();
    json["reference"] = report.ToJson();
    json["reference"]["path"] = flags.reference.string();
    text += fmt::format("\n{} {} ({} case{})\n", style.Bold("reference"), flags.reference.string(), report.cases.size(),
                        report.cases.size() == 1 ? "" : "s");
    text += style.Dim(
        "  tolerance: |actual - expected| <= atol + rtol * |expected|; defaults float32 1e-5/1e-3, "
        "float16 1e-3/1e-2, float64 1e-8/1e-6, integers exact\n");
    for (const auto& c : report.cases) {
      text += fmt::format("\n  {}\n", style.Bold(c.label));
      if (!c.ran) {
        text += RenderDiagnosis(TranslateRuntimeError(c.run_error, {}, true), style);
        continue;
      }
      text += RenderComparison(c.comparison, style);
    }
  }

  if (!compare_mode.empty()) {
    auto plan = ParseCrossCheckMode(compare_mode, config);
    if (!plan.ok()) {
      ReportFailure("validate", {}, "--compare " + plan.error().message, format);
      return kExitUsage;
    }
    InputFlags input_flags = flags.inputs;
    auto size_notes = SettleSizes(session, *input_specs, opened->model->proto.get(), input_flags);
    auto prepared = size_notes.ok() ? PrepareInputs(*input_specs, opened->model->proto.get(), input_flags)
                                    : Result<PreparedInputs>(size_notes.error());
    if (!prepared.ok()) {
      ReportFailure("validate", {}, prepared.error().message, format);
      return kExitUsage;
    }
    const ModelSource source{flags.model, {}};
    auto report = CrossCheck(*opened->runtime, source, *plan, prepared->tensors, *tolerance);
    if (!report.ok() &&
        (report.error().kind == ErrorKind::kUnavailable || report.error().kind == ErrorKind::kInvalidArgument)) {
      ReportFailure("validate", {}, "--compare " + compare_mode + ": " + report.error().message, format);
      return kExitUsage;
    }
    if (!report.ok()) {
      // The run itself failed at these inputs: a finding, and the other checks still run.
      const Diagnosis d = TranslateRuntimeError(report.error().message, {}, /*during_run=*/true);
      passed = false;
      json["compare"] = {{"mode", compare_mode}, {"passed", false}, {"diagnoses", std::vector<Diagnosis>{d}}};
      text +=
          fmt::format("\n{} {}: the run failed\n", style.Bold("cross-check"), compare_mode) + RenderDiagnosis(d, style);
    }
    if (report.ok()) passed = passed && report->Passed();
    if (report.ok()) {
      json["compare"] = report->ToJson();
      json["compare"]["size_notes"] = *size_notes;
      text +=
          fmt::format("\n{} {} (reference side) vs {}\n", style.Bold("cross-check"), report->label_a, report->label_b);
      for (const auto& note : *size_notes) text += style.Dim(fmt::format("  sizes found by running: {}\n", note));
      text += RenderComparison(report->comparison, style);
      if (flags.localize && !report->Passed()) {
        LocalizeOptions options;
        options.tolerance = *tolerance;
        options.chunk_size = flags.localize_chunk;
        report_localized(Localize(*opened->runtime, source, *plan, prepared->tensors, options));
      }
    }
  }

  if (flags.localize && !flags.reference.empty() && json.contains("reference") &&
      !json["reference"]["passed"].get<bool>()) {
    LocalizeOptions options;
    options.tolerance = *tolerance;
    options.chunk_size = flags.localize_chunk;
    // The reference folder may hold intermediate values too (NAME.npy / NAME.pb, named after the values).
    report_localized(
        LocalizeAgainstReference(*opened->runtime, ModelSource{flags.model, {}}, config, flags.reference, {}, options));
  }

  if (do_sweep) {
    SweepOptions options;
    options.axes = axes;
    options.tolerance = *tolerance;
    options.batch_consistency = !flags.no_batch_check;
    auto plan = ParsePlan(flags.inputs);
    if (!plan.ok()) {
      ReportFailure("validate", {}, plan.error().message, format);
      return kExitUsage;
    }
    options.base = *plan;
    auto status = ValidatePlan(options.base, NameUnnamedAxes(*input_specs));
    if (!status.ok()) {
      ReportFailure("validate", {}, status.error().message, format);
      return kExitUsage;
    }
    auto report = RunSweep(session, *opened->model->proto, options);
    if (!report.ok()) {
      ReportFailure("validate", {}, report.error().message, format);
      return kExitUsage;
    }
    passed = passed && report->Passed();
    json["sweep"] = report->ToJson();
    text += fmt::format("\n{} ({} cells, one session)\n", style.Bold("dynamic-shape sweep"), report->cells.size());
    if (report->axes.empty()) text += "  every input dimension is fixed (by the file or the flags): one run\n";
    text += RenderSweep(*report, style);
  }

  json["verdict"] = passed ? "pass" : "fail";
  if (format == Format::kJson) {
    std::cout << JsonText(json) << "\n";
  } else {
    text += fmt::format("\n{}\n", passed ? style.Green("PASS") : style.Red("FAIL"));
    std::fputs(text.c_str(), stdout);
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
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  flags->inputs.Register(cmd);
  cmd->add_option("--provider", flags->provider, "execution provider")->capture_default_str();
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
