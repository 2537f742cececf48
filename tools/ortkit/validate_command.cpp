// ortkit validate MODEL: the model's numbers against the framework's, and at every shape it claims to accept.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "failure.h"
#include "input_flags.h"
#include "model_session.h"
#include "ortkit/report/report_page.h"
#include "ortkit/validate/validate.h"
#include "report_page_flag.h"
#include "terminal.h"
#include "validate_flags.h"
#include "validate_render.h"

namespace ortkit::cli {
namespace {

// A step that could not be carried out: the flags or files are at fault, so exit 2 whatever the error's
// kind (as ever: a cross-check side that the runtime cannot set up is the call's, not the model's).
int FailStep(const ValidateFailure& failure, const ValidateOptions& options, Format format) {
  using Step = ValidateFailure::Step;
  Error error = AsUsageError(failure.error);
  std::vector<Diagnosis> diagnoses;
  if (failure.step == Step::kReference) {
    diagnoses.push_back(UnusableReference(options.reference, failure.error));
    error.message = "unusable reference";
  } else if (failure.step == Step::kCompareMode) {
    error.message = "--compare " + error.message;
  } else if (failure.step == Step::kCrossCheck) {
    error.message = "--compare " + options.compare + ": " + error.message;
  }
  return Fail("validate", error, format, diagnoses);
}

// --dim/--shape do not parse. The steps that run before the inputs are used say their errors first (an
// unusable reference, an unknown --compare mode), as they did when the inputs were parsed where used.
ValidateFailure FirstFailure(const Error& inputs_error, const OpenedModel& opened, const ValidateOptions& options) {
  using Step = ValidateFailure::Step;
  if (!options.reference.empty()) {
    if (auto cases = ReadReference(options.reference, opened.inputs, opened.outputs); !cases.ok())
      return {Step::kReference, cases.error()};
  }
  if (!options.compare.empty()) {
    if (auto plan = ParseCrossCheckMode(options.compare, options.session); !plan.ok())
      return {Step::kCompareMode, plan.error()};
  }
  return {Step::kInputs, inputs_error};
}

// The error along the graph that the last localisation measured, the first diverging node marked.
std::optional<NodeOverlay> ErrorOverlay(const ValidateReport& report) {
  for (auto it = report.localizations.rbegin(); it != report.localizations.rend(); ++it) {
    if (!it->report.ok() || it->report->compared.empty()) continue;
    const LocalizeReport& walk = *it->report;
    NodeOverlay overlay;
    overlay.title = fmt::format("Error along the graph: {} against {}", walk.label_b, walk.label_a);
    overlay.fold = NodeOverlay::Fold::kMax;
    overlay.log_scale = true;
    for (const auto& c : walk.compared) overlay.values.push_back({c.node, c.max_abs_error});
    if (walk.divergence) {
      overlay.marked = walk.divergence->node;
      overlay.marked_label = walk.divergence->nan_origin ? "the first NaN" : "the first diverging node";
    }
    return overlay;
  }
  return std::nullopt;
}

// The HTML page beside the text: the verdict, the findings of each step, the error along the graph.
Status WriteValidatePage(const ValidateFlags& flags, const ValidateReport& report, const std::string& text) {
  if (flags.report_page.empty()) return OkStatus();
  ReportPage page;
  page.command = "validate";
  page.model_path = flags.model.string();
  page.verdict = report.Passed() ? "PASS" : "FAIL";
  page.verdict_severity = report.Passed() ? Severity::kInfo : Severity::kError;
  if (report.target) page.diagnoses = report.target->diagnoses;
  for (const auto& l : report.localizations)
    page.diagnoses.insert(page.diagnoses.end(), l.diagnoses.begin(), l.diagnoses.end());
  std::stable_sort(page.diagnoses.begin(), page.diagnoses.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.severity > b.severity; });
  page.text_report = text;
  page.overlay = ErrorOverlay(report);
  if (report.sweep && !report.sweep->cells.empty()) page.grid = SweepGrid(*report.sweep);
  return WriteReportPageIfAsked(flags.report_page, page);
}

int Run(const ValidateFlags& flags) {
  const Format format = flags.format;
  auto options = ValidateOptionsFrom(flags);
  if (!options.ok()) return Fail("validate", options.error(), format);
  if (auto writable = CheckReportPagePath(flags.report_page, flags.model); !writable.ok())
    return Fail("validate", writable.error(), format);
  int exit_code = kExitOk;
  auto opened = OpenModel(flags.model, options->session, format, "validate", &exit_code);
  if (!opened.ok()) return exit_code;
  if (auto named = CheckPerOutputNames(options->tolerance, opened->outputs); !named.ok())
    return Fail("validate", named.error(), format);
  auto sources = ParseSources(flags.inputs);
  // Only the cross-check and the sweep use the inputs: without them bad --dim flags go unread, as ever.
  if (!sources.ok() && (options->sweep || !options->compare.empty()))
    return FailStep(FirstFailure(sources.error(), *opened, *options), *options, format);
  if (sources.ok()) options->inputs = std::move(sources).value();

  const ValidateReport report = Validate(*opened->runtime, *opened->session, *opened->model->proto, *options);
  if (report.failure) return FailStep(*report.failure, *options, format);
  const bool passed = report.Passed();
  const std::string plain = fmt::format("ortkit validate {} (provider {})\n{}\n{}\n", flags.model.string(),
                                        flags.provider, RenderValidateSteps(report, Style{}), passed ? "PASS" : "FAIL");
  if (auto written = WriteValidatePage(flags, report, plain); !written.ok())
    return Fail("validate", written.error(), format);
  if (format == Format::kJson) {
    nlohmann::json json = report.ToJson();
    json["model"] = flags.model.string();
    json["provider"] = flags.provider;
    json["verdict"] = passed ? "pass" : "fail";
    PrintJson(json);
  } else {
    const Style style = Style::ForStream(stdout);
    std::string text =
        fmt::format("{} {} (provider {})\n", style.Bold("ortkit validate"), flags.model.string(), flags.provider);
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
  RegisterValidateFlags(cmd, *flags);
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
