// ortkit fix MODEL --out FILE: the mechanical fixes for what check finds, proven before anything is written.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "equivalence_flags.h"
#include "equivalence_render.h"
#include "failure.h"
#include "model_session.h"
#include "ortkit/check/target_runtime.h"
#include "ortkit/convert/model_conversion.h"
#include "ortkit/core/files.h"
#include "ortkit/fix/model_fix.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

namespace fs = std::filesystem;

struct FixFlags {
  fs::path model;
  fs::path out;
  std::vector<std::string> only;
  bool dry_run = false;
  bool keep_overridable = false;
  bool external_data = false;
  bool fold_constants = false;
  int opset = 0;
  std::string target_ort;
  fs::path reference;
  std::vector<std::string> dims;
  std::uint64_t seed = 0;
  std::optional<double> atol;
  std::optional<double> rtol;
  Format format = Format::kText;
};

std::string ChangesText(const ModelFixReport& report, const Style& style) {
  std::string out;
  if (!report.changes.empty()) {
    out += fmt::format("\n  {} ({}):\n", report.dry_run ? "fixes planned" : "fixes applied",
                       fmt::join(report.passes_run, ", "));
    Table table({"code", "target", "change"});
    for (const auto& c : report.changes) table.AddRow({c.code.empty() ? "-" : c.code, c.target, c.change});
    out += table.Render(style, "    ");
  }
  if (!report.refusals.empty()) {
    out += "\n  left as they are:\n";
    Table table({"code", "target", "why"});
    for (const auto& r : report.refusals) table.AddRow({r.code, r.target, r.reason});
    out += table.Render(style, "    ");
  }
  if (!report.not_handled.empty()) {
    out += fmt::format("\n  not fixed mechanically: {} (`ortkit explain CODE` says how to fix each)\n",
                       fmt::join(report.not_handled, ", "));
  }
  return out;
}

std::string EvidenceText(const ModelFixReport& report, const Style& style) {
  std::string out;
  if (!report.evidence.empty()) {
    out += "\n  evidence:\n";
    for (const auto& e : report.evidence) {
      const std::string state = e.held ? style.Green("held  ") : e.required ? style.Red("FAILED") : style.Dim("note  ");
      out += fmt::format("    {} {}{}\n", state, e.claim, e.detail.empty() ? "" : style.Dim(" (" + e.detail + ")"));
    }
  }
  if (report.proof) {
    out += fmt::format("\n  fixed model against {}, on the same synthesised inputs:\n", report.baseline);
    out += RenderEquivalenceTable(*report.proof, style);
  }
  return out;
}

std::string RenderReport(const ModelFixReport& report, const Style& style) {
  std::string out =
      fmt::format("{} {}{}\n", style.Bold("ortkit fix"), report.model, report.out.empty() ? "" : " -> " + report.out);
  const bool read = !report.Failed() || !report.passes_run.empty();  // else the diagnoses say why not
  if (read) {
    out += fmt::format("\n  check found: {}\n",
                       report.codes_found.empty() ? "nothing" : fmt::format("{}", fmt::join(report.codes_found, ", ")));
  }
  out += ChangesText(report, style) + EvidenceText(report, style) + "\n";
  for (const auto& d : report.diagnoses) out += RenderDiagnosis(d, style) + "\n";
  if (report.written) {
    out += fmt::format("{}: wrote {}{}\n", style.Green("FIXED"), report.out,
                       report.external_data ? fmt::format(" and {}.data", report.out) : "");
  } else if (report.dry_run) {
    out += fmt::format("{}: nothing written\n", style.Bold("DRY RUN"));
  } else if (report.Failed() || !report.refusals.empty()) {
    out += fmt::format("{}: nothing written\n", style.Red("NOT FIXED"));
  } else {
    out += "nothing to fix: nothing written\n";
  }
  return out;
}

/// The fix's options from the flags; a usage error names the flag.
Result<ModelFixOptions> FixOptionsFrom(const FixFlags& flags) {
  ModelFixOptions options;
  options.model = flags.model;
  options.out = flags.out;
  options.dry_run = flags.dry_run;
  options.external_data = flags.external_data;
  options.fold_constants = flags.fold_constants;
  options.passes.keep_overridable = flags.keep_overridable;
  options.only = flags.only;
  options.reference = flags.reference;
  ORTKIT_RETURN_IF_ERROR(ValidateFixSelection(options.only));
  if (flags.opset != 0 || !flags.target_ort.empty()) {
    options.target = flags.target_ort.empty() ? nullptr : FindOrtRelease(flags.target_ort);
    ORTKIT_ASSIGN_OR_RETURN(options.conversion, ResolveConversionTarget(flags.opset, 0, options.target));
  }
  if (!flags.dry_run && flags.out.empty())
    return MakeError(ErrorKind::kInvalidArgument, "--out FILE is required (or --dry-run)");
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(flags.out, "--out", {flags.model}));
  ORTKIT_ASSIGN_OR_RETURN(options.proof,
                          EquivalenceOptionsFrom(flags.model, flags.dims, flags.seed, flags.atol, flags.rtol));
  return options;
}

int Run(const FixFlags& flags) {
  const Format format = flags.format;
  auto options = FixOptionsFrom(flags);
  if (!options.ok()) return Fail("fix", options.error(), format);
  auto runtime = Runtime::Create();
  if (!runtime.ok()) return Fail("fix", runtime.error(), format);
  auto report = FixModelFile(**runtime, *options);
  if (!report.ok()) return Fail("fix", report.error(), format);
  const std::string text = format == Format::kJson ? "" : RenderReport(*report, Style::ForStream(stdout));
  if (report->failure) return FailWithReport("fix", *report->failure, format, nlohmann::json(*report), text);
  if (format == Format::kJson) {
    PrintJson(nlohmann::json(*report));
  } else {
    PrintText(stdout, text);
  }
  // A fix refused by its proof with nothing else to write leaves the model's defect in place.
  const bool refused = std::any_of(report->diagnoses.begin(), report->diagnoses.end(),
                                   [](const Diagnosis& d) { return d.code == "fix.refused"; });
  return report->Failed() || (refused && !report->written && !report->dry_run) ? kExitFindings : kExitOk;
}

}  // namespace

void RegisterFix(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<FixFlags>();
  CLI::App* cmd = app.add_subcommand(
      "fix",
      "Apply the mechanical fixes for what check finds (static batch, training mode, initializers as inputs, float64, "
      "dead code, dimension names); written only when the fixed model is proven by running it");
  cmd->add_option("model", flags->model, "the .onnx file")->required();
  cmd->add_option("--out", flags->out, "where to write the fixed model (required unless --dry-run)");
  cmd->add_option("--only", flags->only, "apply only these fixes, by name or by diagnosis code (comma-separated)")
      ->delimiter(',');
  cmd->add_flag("--dry-run", flags->dry_run, "show the plan: what each fix would change; prove and write nothing");
  cmd->add_flag("--keep-overridable", flags->keep_overridable,
                "keep initializers that are listed as graph inputs (callers may feed them to override weights)");
  cmd->add_flag("--external-data", flags->external_data,
                "write tensors of 1 KiB or more to OUT.data beside the model (always when the weights pass 1.5 GiB)");
  cmd->add_flag("--fold-constants", flags->fold_constants,
                "also fold constant subgraphs and drop redundant nodes with ONNX Runtime's basic-level optimisations, "
                "saved offline");
  cmd->add_option("--opset", flags->opset, "also convert to this ai.onnx opset (as ortkit convert)")
      ->check(CLI::Range(7, 99));
  cmd->add_option("--target-ort", flags->target_ort,
                  "also convert for ONNX Runtime X.Y (its newest opset unless --opset says otherwise) and check that "
                  "it loads the result")
      ->check(TargetOrtValidator());
  cmd->add_option("--reference", flags->reference,
                  "the framework's outputs (a test-case folder, test_data_set_N, .npz or .npy folder): the fixed "
                  "model must match them too");
  cmd->add_option("--dim", flags->dims, "size of a symbolic dimension for the shapes compared (batch=1)");
  cmd->add_option("--seed", flags->seed, "seed of the synthesised inputs")
      ->capture_default_str()
      ->check(SeedValidator());
  cmd->add_option("--atol", flags->atol, "absolute tolerance (default: per element type, as validate)");
  cmd->add_option("--rtol", flags->rtol, "relative tolerance (default: per element type, as validate)");
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
