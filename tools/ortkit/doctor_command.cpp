// ortkit doctor MODEL: check, load, validate, sweep and time a model, and say in one verdict whether it is fit to ship.
#include <cctype>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "doctor_render.h"
#include "failure.h"
#include "input_flags.h"
#include "model_session.h"
#include "number_flags.h"
#include "ortkit/core/numbers.h"
#include "ortkit/doctor/doctor.h"
#include "report_page_flag.h"
#include "terminal.h"
#include "validate_render.h"

namespace ortkit::cli {
namespace {

struct DoctorFlags {
  std::filesystem::path model;
  std::filesystem::path reference;
  std::vector<std::string> providers = {"cpu"};
  InputFlags inputs;  ///< --dim, --shape and --seed (doctor synthesises every input: no --input)
  std::optional<double> atol;
  std::optional<double> rtol;
  int runs = DoctorOptions{}.benchmark_runs;
  bool no_sweep = false;
  std::string sweep_memory;  ///< "8GiB"; empty: from the machine
  std::string target_ort;
  bool allow_warnings = false;
  Format format = Format::kText;
  std::filesystem::path report_page;  ///< --report: the HTML page too
};

Severity VerdictSeverity(const DoctorReport& report) {
  if (report.failure || report.verdict == DoctorVerdict::kBroken) return Severity::kError;
  return report.verdict == DoctorVerdict::kWarnings ? Severity::kWarning : Severity::kInfo;
}

// The HTML page beside the text: the same verdict, findings and text report.
Status WriteDoctorPage(const DoctorFlags& flags, const DoctorReport& report) {
  ReportPage page;
  page.command = "doctor";
  page.model_path = report.model_path;
  std::string verdict = ToString(report.verdict);  // in capitals, as the text's verdict line writes it
  for (char& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  page.verdict = report.failure ? "not examined: " + report.failure->message : verdict;
  page.verdict_severity = VerdictSeverity(report);
  page.diagnoses = report.diagnoses;
  page.text_report = RenderDoctorReport(report, /*markdown=*/false, Style{});
  for (const auto& provider : report.providers) {  // the first provider's sweep: the grid of the default run
    if (!provider.sweep || provider.sweep->cells.empty()) continue;
    page.grid = SweepGrid(*provider.sweep);
    if (report.providers.size() > 1) page.grid->title += " (" + provider.provider + ")";
    break;
  }
  return WriteReportPageIfAsked(flags.report_page, page);
}

int Run(const DoctorFlags& flags) {
  const Format format = flags.format;
  auto plan = ParsePlan(flags.inputs);
  if (!plan.ok()) return Fail("doctor", plan.error(), format);
  if (auto writable = CheckReportPagePath(flags.report_page, flags.model); !writable.ok())
    return Fail("doctor", writable.error(), format);
  DoctorOptions options;
  options.model = flags.model;
  options.reference = flags.reference;
  options.providers = flags.providers;
  options.tolerance.atol = flags.atol;
  options.tolerance.rtol = flags.rtol;
  options.inputs = *plan;
  options.sweep = !flags.no_sweep;
  if (!flags.sweep_memory.empty()) {
    auto bytes = ParseByteSize(flags.sweep_memory, "--sweep-memory", {64 << 20, 1e15});
    if (!bytes.ok()) return Fail("doctor", bytes.error(), format);
    options.sweep_memory_bytes = *bytes;
  }
  options.target_ort = flags.target_ort;
  options.benchmark_runs = flags.runs;
  auto runtime = Runtime::Create();
  if (!runtime.ok()) return Fail("doctor", runtime.error(), format);
  auto report = RunDoctor(**runtime, options);
  if (!report.ok()) return Fail("doctor", report.error(), format);
  // A provider this machine cannot run: its fault, not the model's, which was not examined (no report), said
  // as run and validate say it, with what the environment says.
  if (report->failure && !report->unavailable_provider.empty())
    return Fail("doctor", *report->failure, format, report->diagnoses);
  const Style style = format == Format::kMarkdown ? Style{} : Style::ForStream(stdout);
  const std::string text =
      format == Format::kJson ? "" : RenderDoctorReport(*report, format == Format::kMarkdown, style);
  if (auto written = WriteDoctorPage(flags, *report); !written.ok()) return Fail("doctor", written.error(), format);
  if (report->failure) return FailWithReport("doctor", *report->failure, format, report->ToJson(), text);
  if (format == Format::kJson) {
    PrintJson(report->ToJson());
  } else {
    PrintText(stdout, text);
  }
  if (report->verdict == DoctorVerdict::kHealthy) return kExitOk;
  return report->verdict == DoctorVerdict::kWarnings && flags.allow_warnings ? kExitOk : kExitFindings;
}

}  // namespace

void RegisterDoctor(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DoctorFlags>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "The whole chain in one verdict: check, load, validate (or cross-check), shape sweep and a baseline latency");
  cmd->add_option("model", flags->model,
                  "the .onnx file, or a folder written by `ortkit export` (model.onnx, test_data_set_N, export.json)")
      ->required();
  cmd->add_option(
      "--reference", flags->reference,
      "expected outputs: an export or test-case folder, a test_data_set_N folder, an .npz or a folder of NAME.npy "
      "(default: the references of an `ortkit export` folder; without any, optimisation levels cross-check each "
      "other)");
  cmd->add_option("--provider", flags->providers, "execution provider(s) to load and run on, e.g. --provider cpu cuda")
      ->expected(1, -1)
      ->capture_default_str();
  flags->inputs.RegisterSizes(cmd,
                              "sizes of dimensions for the cross-check, sweep base and latency: batch=1,seq_len=16; "
                              "unnamed ones are INPUT:AXIS, e.g. x:2=48 (repeatable)",
                              "full shape of one input, e.g. --shape x=1x3x48x192 (repeatable)");
  cmd->add_option("--atol", flags->atol, "absolute tolerance for every output (default by element type)");
  cmd->add_option("--rtol", flags->rtol, "relative tolerance for every output (default by element type)");
  cmd->add_option("--runs", flags->runs, "timed runs of the baseline latency (0: skip it)")
      ->check(WholeNumberIn(0, 1'000'000))
      ->capture_default_str();
  cmd->add_flag("--no-sweep", flags->no_sweep, "skip the dynamic-shape sweep");
  cmd->add_option(
      "--sweep-memory", flags->sweep_memory,
      "the most memory any run of the sweep may reach, e.g. 8GiB (default: three quarters of what this process may "
      "use); larger runs are predicted from the measured ones and not started");
  cmd->add_option("--target-ort", flags->target_ort,
                  "also check that ONNX Runtime X.Y (1.10 to 1.29) loads the model and has its operators")
      ->check(TargetOrtValidator());
  cmd->add_flag("--allow-warnings", flags->allow_warnings,
                "exit 0 when the verdict is 'warnings' (default: only 'healthy' exits 0)");
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson, Format::kMarkdown});
  AddReportPageFlag(cmd, flags->report_page);
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
