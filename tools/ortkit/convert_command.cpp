// ortkit convert MODEL --opset N --out FILE: another opset, proven by the numbers before it is written.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "equivalence_flags.h"
#include "equivalence_render.h"
#include "failure.h"
#include "model_session.h"
#include "ortkit/check/target_runtime.h"
#include "ortkit/convert/model_conversion.h"
#include "ortkit/core/files.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

namespace fs = std::filesystem;

struct ConvertFlags {
  fs::path model;
  fs::path out;
  int opset = 0;
  int ir_version = 0;
  std::string target_ort;
  std::vector<std::string> dims;
  std::uint64_t seed = 0;
  std::optional<double> atol;
  std::optional<double> rtol;
  bool no_validate = false;
  Format format = Format::kText;
};

std::string RenderReport(const ModelConversionReport& report, const Style& style) {
  const auto& c = report.conversion;
  std::string out = fmt::format("{} {} -> {}\n\n", style.Bold("ortkit convert"), report.model, report.out);
  out += fmt::format("  opset {} -> {}, IR version {} -> {}\n", c.from_opset, c.to_opset, c.from_ir, c.to_ir);
  if (!c.rewrites.empty()) {
    out += fmt::format("\n  {} node{} rewritten by ortkit's adapters:\n", c.rewrites.size(),
                       c.rewrites.size() == 1 ? "" : "s");
    Table table({"node", "op", "change"});
    for (const auto& r : c.rewrites) table.AddRow({r.node, r.op_type, r.change});
    out += table.Render(style, "    ");
  }
  if (report.proof) {
    out +=
        "\n  original and converted on the same synthesised inputs:\n" + RenderEquivalenceTable(*report.proof, style);
  }
  out += "\n";
  for (const auto& d : report.diagnoses) out += RenderDiagnosis(d, style) + "\n";
  if (report.written) {
    out += fmt::format("{}: wrote {}{}\n", style.Green("CONVERTED"), report.out,
                       report.external_data ? fmt::format(" and {}.data", report.out) : "");
  } else {
    out += fmt::format("{}: nothing written\n", style.Red("NOT CONVERTED"));
  }
  return out;
}

/// The conversion's options from the flags; a usage error names the flag.
Result<ModelConversionOptions> ConversionOptionsFrom(const ConvertFlags& flags) {
  ModelConversionOptions options;
  options.model = flags.model;
  options.out = flags.out;
  options.target = flags.target_ort.empty() ? nullptr : FindOrtRelease(flags.target_ort);
  ORTKIT_ASSIGN_OR_RETURN(options.conversion, ResolveConversionTarget(flags.opset, flags.ir_version, options.target));
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(flags.out, "--out", {flags.model}));
  ORTKIT_ASSIGN_OR_RETURN(options.proof,
                          EquivalenceOptionsFrom(flags.model, flags.dims, flags.seed, flags.atol, flags.rtol));
  options.prove = !flags.no_validate;
  return options;
}

int Run(const ConvertFlags& flags) {
  const Format format = flags.format;
  auto options = ConversionOptionsFrom(flags);
  if (!options.ok()) return Fail("convert", options.error(), format);
  auto report = ConvertModelFile(*options);
  if (!report.ok()) return Fail("convert", report.error(), format);
  const std::string text = format == Format::kJson ? "" : RenderReport(*report, Style::ForStream(stdout));
  if (report->failure) return FailWithReport("convert", *report->failure, format, nlohmann::json(*report), text);
  if (format == Format::kJson) {
    PrintJson(nlohmann::json(*report));
  } else {
    PrintText(stdout, text);
  }
  return report->written ? kExitOk : kExitFindings;
}

}  // namespace

void RegisterConvert(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ConvertFlags>();
  CLI::App* cmd =
      app.add_subcommand("convert",
                         "Convert a model to another opset with ONNX's version converter and ortkit's adapters; "
                         "written only when its outputs match the original's");
  cmd->add_option("model", flags->model, "the .onnx file")->required();
  cmd->add_option("--out", flags->out, "where to write the converted model")->required();
  cmd->add_option("--opset", flags->opset, "target ai.onnx opset")->check(CLI::Range(7, 99));
  cmd->add_option("--ir-version", flags->ir_version,
                  "IR version to write (default: the one the first ONNX release with the opset wrote)")
      ->check(CLI::Range(3, 99));
  cmd->add_option("--target-ort", flags->target_ort,
                  "convert for ONNX Runtime X.Y: its newest opset unless --opset says otherwise, then check "
                  "that it loads the result")
      ->check(TargetOrtValidator());
  cmd->add_option("--dim", flags->dims, "size of a symbolic dimension for the first shape compared (batch=1)");
  cmd->add_option("--seed", flags->seed, "seed of the synthesised inputs")
      ->capture_default_str()
      ->check(SeedValidator());
  cmd->add_option("--atol", flags->atol, "absolute tolerance (default: per element type, as validate)");
  cmd->add_option("--rtol", flags->rtol, "relative tolerance (default: per element type, as validate)");
  cmd->add_flag("--no-validate", flags->no_validate,
                "write without comparing the two models' outputs (when the original does not run here)");
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
