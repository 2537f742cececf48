// ortkit check MODEL: layered structural and load checks.
#include <cstdio>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "failure.h"
#include "fix_hint.h"
#include "number_flags.h"
#include "ortkit/check/check.h"
#include "ortkit/check/target_runtime.h"
#include "ortkit/runtime/runtime.h"
#include "report_page_flag.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

struct CheckFlags {
  CheckOptions options;
  Format format = Format::kText;
  bool no_runtime = false;
  std::filesystem::path report_page;  ///< --report: the HTML page too
};

std::string LayerTitle(const std::string& name) {
  if (name == "file") return "1. file";
  if (name == "external-data") return "2. external data";
  if (name == "checker") return "3. ONNX checker";
  if (name == "shape-inference") return "4. shape inference";
  if (name == "rules") return "5. export rules";
  if (name == "runtime") return "6. ONNX Runtime load";
  if (name == "target") return "7. target runtime";
  return name;
}

std::string RenderReport(const CheckReport& report, const Style& style) {
  std::string out =
      fmt::format("{} {} (provider {})\n\n", style.Bold("ortkit check"), report.model_path, report.provider);
  for (const auto& layer : report.layers) {
    std::string state;
    switch (layer.state) {
      case LayerReport::State::kPassed:
        state = layer.diagnoses.empty()
                    ? style.Green("ok")
                    : style.Green("ok") + style.Dim(fmt::format(" ({} note{})", layer.diagnoses.size(),
                                                                layer.diagnoses.size() == 1 ? "" : "s"));
        break;
      case LayerReport::State::kFailed:
        state = style.Red("FAILED") + (layer.note.empty() ? "" : style.Dim(": " + layer.note));
        break;
      case LayerReport::State::kSkipped: state = style.Dim("skipped: " + layer.skipped_reason); break;
    }
    out += fmt::format("{:<22}{}\n", LayerTitle(layer.name), state);
  }
  const auto all = report.AllDiagnoses();
  if (!all.empty()) {
    out += "\n";
    for (const auto& d : all) out += RenderDiagnosis(d, style) + "\n";
  } else {
    out += "\n";
  }
  const int errors = report.CountOf(Severity::kError), warnings = report.CountOf(Severity::kWarning);
  const std::string verdict = report.Passed() ? style.Green("PASS") : style.Red("FAIL");
  out += fmt::format("{}: {} error{}, {} warning{}{}\n", verdict, errors, errors == 1 ? "" : "s", warnings,
                     warnings == 1 ? "" : "s", report.strict ? " (--strict: warnings fail)" : "");
  if (report.failure && report.failure->kind == ErrorKind::kUnavailable) {
    out +=
        style.Dim(fmt::format("the {} provider cannot run on this machine: the load layer was not checked (exit "
                              "2); `ortkit env --provider {}` says why, --no-runtime checks the rest alone\n",
                              report.provider, report.provider));
  }
  if (const auto hint = FixHint(all, report.model_path); !hint.empty()) out += style.Dim("next: " + hint) + "\n";
  return out;
}

// The HTML page beside the text: the same verdict, findings and text report.
Status WriteCheckPage(const CheckFlags& flags, const CheckReport& report) {
  ReportPage page;
  page.command = "check";
  page.model_path = report.model_path;
  page.verdict = report.failure ? "not examined: " + report.failure->message : report.Passed() ? "PASS" : "FAIL";
  page.verdict_severity = !report.Passed() || report.failure       ? Severity::kError
                          : report.CountOf(Severity::kWarning) > 0 ? Severity::kWarning
                                                                   : Severity::kInfo;
  page.diagnoses = report.AllDiagnoses();
  page.text_report = RenderReport(report, Style{});
  return WriteReportPageIfAsked(flags.report_page, page);
}

int Run(CheckFlags& flags) {
  const Format format = flags.format;
  if (auto writable = CheckReportPagePath(flags.report_page, flags.options.model_path); !writable.ok())
    return Fail("check", writable.error(), format);
  std::unique_ptr<Runtime> runtime;
  if (!flags.no_runtime) {
    auto created = Runtime::Create();
    if (!created.ok()) return Fail("check", created.error(), format);
    runtime = std::move(created).value();
    if (auto known = CheckProviderName(flags.options.provider); !known.ok())
      return Fail("check", known.error(), format);
  }
  flags.options.load_runtime = !flags.no_runtime;
  const CheckReport report = RunCheck(runtime.get(), flags.options);
  if (auto written = WriteCheckPage(flags, report); !written.ok()) return Fail("check", written.error(), format);
  // An unreadable file or an unavailable provider is the call's or this machine's fault, not the model's:
  // a usage error, as in run and validate, with the layers' report all the same.
  if (report.failure) {
    nlohmann::json json = report;
    json["diagnoses"] = report.AllDiagnoses();  // the layers' findings, as every failure lists them
    return FailWithReport("check", *report.failure, format, json,
                          format == Format::kJson ? "" : RenderReport(report, Style::ForStream(stdout)));
  }
  if (format == Format::kJson) {
    nlohmann::json json = report;
    PrintJson(json);
  } else {
    PrintText(stdout, RenderReport(report, Style::ForStream(stdout)));
  }
  return report.Passed() ? kExitOk : kExitFindings;
}

}  // namespace

CLI::Validator TargetOrtValidator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (FindOrtRelease(value) != nullptr) return "";
        return fmt::format("ONNX Runtime '{}' is not in ortkit's table; it knows {}", value, KnownOrtReleases());
      },
      "X.Y");
}

CLI::Validator SeedValidator() {
  return WholeNumberIn(0, std::numeric_limits<std::int64_t>::max()).description("UINT");
}

void RegisterCheck(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand("check",
                                     "Layered checks of a model file: file, external data, ONNX checker, "
                                     "shape inference, export rules, ONNX Runtime load");
  cmd->add_option("model", flags->options.model_path, "the .onnx file")->required();
  cmd->add_option("--provider", flags->options.provider, "execution provider to load on (cpu, cuda, ...)")
      ->capture_default_str();
  cmd->add_flag("--strict", flags->options.strict, "warnings fail the check too");
  cmd->add_flag("--no-runtime", flags->no_runtime, "skip the ONNX Runtime load layer");
  cmd->add_option("--target-ort", flags->options.target_ort,
                  "also check that ONNX Runtime X.Y (1.10 to 1.29) loads the model and has its operators")
      ->check(TargetOrtValidator());
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  AddReportPageFlag(cmd, flags->report_page);
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
