// ortkit optimize MODEL --out FILE: the fastest rewrite of a model that keeps its accuracy, each candidate
// proven by its numbers and measured against the original on this machine before anything is written.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "equivalence_flags.h"
#include "failure.h"
#include "input_flags.h"
#include "model_session.h"
#include "number_flags.h"
#include "optimize_render.h"
#include "ortkit/core/files.h"
#include "ortkit/model/export_record.h"
#include "ortkit/optimize/optimize.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

namespace fs = std::filesystem;

struct OptimizeFlags {
  OptimizeOptions options;
  std::vector<std::string> passes;
  std::string max_drop;
  std::string calibration_method = ToString(CalibrationOptions{}.method);
  InputFlags inputs;
  Format format = Format::kText;
};

/// The options from the flags; a usage error names the flag.
Result<OptimizeOptions> OptionsFrom(const OptimizeFlags& flags) {
  OptimizeOptions options = flags.options;
  options.candidates = flags.passes;
  ORTKIT_RETURN_IF_ERROR(ValidateCandidates(options.candidates, options.provider));
  if (!flags.max_drop.empty()) {
    ORTKIT_ASSIGN_OR_RETURN(options.gate, AccuracyGate::Parse(flags.max_drop));
  }
  ORTKIT_ASSIGN_OR_RETURN(options.inputs, ParseSources(flags.inputs));
  ORTKIT_ASSIGN_OR_RETURN(options.calibration_options.method, ParseCalibrationMethod(flags.calibration_method));
  if (!(options.calibration_options.percentile > 50 && options.calibration_options.percentile <= 100)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--calibration-percentile {}: expected a share above 50 and at most 100",
                                 options.calibration_options.percentile));
  }
  // An export folder's record says which dimensions are sums of others (a decoder's mask spans its cache).
  if (auto record = ReadExportRecord(options.model.parent_path() / "export.json"); record.ok())
    options.inputs.plan.dim_sums = record->dim_sums;
  if (!options.dry_run && options.out.empty())
    return MakeError(ErrorKind::kInvalidArgument, "--out FILE is required (or --dry-run)");
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(options.out, "--out", {options.model}));
  if (options.measure.rounds < 1) return MakeError(ErrorKind::kInvalidArgument, "--rounds must be at least 1");
  return options;
}

int Run(const OptimizeFlags& flags) {
  const Format format = flags.format;
  auto options = OptionsFrom(flags);
  if (!options.ok()) return Fail("optimize", options.error(), format);
  auto runtime = Runtime::Create();
  if (!runtime.ok()) return Fail("optimize", runtime.error(), format);
  auto report = OptimizeModelFile(**runtime, *options);
  if (!report.ok()) return Fail("optimize", report.error(), format);
  const std::string text = format == Format::kJson ? "" : RenderOptimizeReport(*report, Style::ForStream(stdout));
  if (report->failure) return FailWithReport("optimize", *report->failure, format, nlohmann::json(*report), text);
  if (format == Format::kJson) {
    PrintJson(nlohmann::json(*report));
  } else {
    PrintText(stdout, text);
  }
  return report->Failed() ? kExitFindings : kExitOk;
}

// The passes this build has, from their table, so that --help lists no other.
std::string PassNames() {
  std::vector<std::string_view> names;
  for (const auto& p : OptimizePasses()) names.push_back(p.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

void RegisterOptimize(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<OptimizeFlags>();
  OptimizeOptions& o = flags->options;
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "Rewrite a model for speed (fusions, int8, int4), prove each candidate by its numbers, measure it "
      "against the original on this machine, and write the fastest one that keeps its accuracy");
  cmd->add_option("model", o.model, "the .onnx file")->required();
  cmd->add_option("--out", o.out, "where to write the optimised model (required unless --dry-run)");
  cmd->add_option("--passes", flags->passes,
                  fmt::format("candidates to try, comma-separated; chain passes with '+' (fuse+int8-dynamic). "
                              "Passes: {} (default: those likely to help the model)",
                              PassNames()))
      ->delimiter(',');
  cmd->add_option("--int4-block", o.int4_block, "int4: the weights along K that share a scale and zero point")
      ->check(CLI::IsMember({16, 32, 64, 128}))
      ->capture_default_str();
  cmd->add_flag("--dry-run", o.dry_run, "prove and measure every candidate; write nothing");
  cmd->add_option("--provider", o.provider, "execution provider the model is optimised for and measured on")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "intra-op threads of every session (default: the usable cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--reference", o.reference,
                  "the framework's inputs (a test-case folder, test_data_set_N, .npz or .npy folder): the proof runs "
                  "on them");
  cmd->add_option("--max-drop", flags->max_drop,
                  "the most each accuracy metric may drop from perfect agreement: cosine (per-row cosine), top1 "
                  "(top-1 agreement), error (share of the output's range), e.g. cosine=0.001,top1=0.01 (default: "
                  "cosine=0.01,top1=0.01,error=0.01)");
  cmd->add_option("--calibration", o.calibration,
                  "samples for static quantisation (the int8-static candidate): .npz files, test_data_set_N folders, "
                  "folders of NAME.npy, or folders holding them; every input from each sample (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--calibration-method", flags->calibration_method,
                  "how the activation ranges are chosen: minmax, percentile, entropy")
      ->capture_default_str();
  cmd->add_option("--calibration-percentile", o.calibration_options.percentile,
                  "percentile: the share of values kept inside the range, in percent")
      ->check(RealNumberIn(50, 100, "%"))
      ->capture_default_str();
  cmd->add_option("--rounds", o.measure.rounds, "interleaved measuring rounds")
      ->check(WholeNumberIn(1, 1000))
      ->capture_default_str();
  cmd->add_option("--runs", o.measure.runs_per_round,
                  "timed runs of each model per round (0: about one second's worth, 3 to 50)")
      ->check(CLI::Range(0, 100000));
  cmd->add_flag("--external-data", o.external_data,
                "write tensors of 1 KiB or more to OUT.data beside the model (always when the weights pass 1.5 GiB)");
  flags->inputs.Register(cmd);
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
