// ortkit reduce MODEL --fails CONDITION --out MIN.onnx: the smallest model that still fails the same
// way, with its inputs and a Python script that shows the failure, for a bug report.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bench_command.h"
#include "commands.h"
#include "failure.h"
#include "input_flags.h"
#include "model_session.h"
#include "number_flags.h"
#include "ortkit/core/files.h"
#include "ortkit/reduce/reduce.h"
#include "ortkit/reduce/reproducer.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kNodesListed = 20;

struct ReduceFlags {
  fs::path model;
  fs::path out;
  std::string fails = "auto";
  std::string message;
  std::optional<double> atol;
  std::optional<double> rtol;
  double time_budget_s = std::chrono::duration<double>(ReduceOptions{}.time_budget).count();
  double command_timeout_s = std::chrono::duration<double>(ReduceOptions{}.command_timeout).count();
  std::string provider = SessionConfig{}.provider;
  InputFlags inputs;
  Format format = Format::kText;
};

/// The reduction's options from the flags, checked (ReduceOptions::Validate); a usage error names the flag.
Result<ReduceOptions> OptionsFrom(const ReduceFlags& flags) {
  ReduceOptions options;
  ORTKIT_ASSIGN_OR_RETURN(options.condition, ParseFailureCondition(flags.fails));
  options.message = flags.message;
  options.tolerance.atol = flags.atol;
  options.tolerance.rtol = flags.rtol;
  options.time_budget = std::chrono::milliseconds(static_cast<std::int64_t>(flags.time_budget_s * 1000));
  options.command_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(flags.command_timeout_s * 1000));
  options.session.provider = flags.provider;
  options.seed = flags.inputs.seed;
  ORTKIT_RETURN_IF_ERROR(options.Validate());
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(flags.out, "--out", {flags.model}));
  return options;
}

std::string NodeList(const ReduceReport& report) {
  std::vector<std::string> names;
  for (const auto& n : report.nodes) names.push_back(n.op_type + " '" + n.name + "'");
  return fmt::format("{}", fmt::join(names, ", "));
}

void PrintReport(const ReduceReport& report, const ReproducerFiles& files, const ReduceOptions& options,
                 const Style& style) {
  std::string out = fmt::format("{} {} -> {}\n\n", style.Bold("ortkit reduce"), report.model, files.model.string());
  out += fmt::format("  condition   {}{}\n", report.condition.ToString(),
                     report.code.empty() ? "" : fmt::format(" ({})", report.code));
  if (!report.node.empty()) out += fmt::format("  node        '{}' (named by the runtime, kept)\n", report.node);
  if (report.condition.kind == FailureKind::kCommand) {
    out += fmt::format("  fed values  {}\n", report.fed_computed
                                                 ? "computed by the original in ONNX Runtime (optimisations off)"
                                                 : "synthesised (the original does not run in ONNX Runtime)");
  }
  out += fmt::format("  matched     {}\n", report.message);
  out += fmt::format("  nodes       {} -> {}\n", report.original_nodes, report.nodes.size());
  if (report.nodes.size() <= kNodesListed) out += fmt::format("  kept        {}\n", NodeList(report));
  out += fmt::format("  candidates  {} in {:.1f} s (budget {:.3g} s)\n", report.candidates, report.seconds,
                     std::chrono::duration<double>(options.time_budget).count());
  if (report.budget_ran_out) {
    out += style.Yellow("  the time budget ran out: this is the smallest failing model found so far\n");
  }
  out += fmt::format("\n{}: wrote {}, {} (test_data_set_0 and {} .npy file{}), {}\n", style.Green("REDUCED"),
                     files.model.string(), files.inputs.string(), files.npy.size(), files.npy.size() == 1 ? "" : "s",
                     files.script.string());
  out += fmt::format("  reproduce with: {}\n", files.command);
  PrintText(stdout, out);
}

/// The original does not fail as asked: say so, write nothing.
int PrintNotFailing(const ReduceReport& report, Format format) {
  if (format == Format::kJson) {
    PrintJson(report.ToJson());
  } else {
    PrintNote("reduce", report.not_failing + "\nnothing written");
  }
  return kExitFindings;
}

Result<ReduceReport> RunReduction(const ReduceFlags& flags, const ReduceOptions& options) {
  ORTKIT_ASSIGN_OR_RETURN(onnx::ModelProto model, LoadModelForReduce(flags.model));
  ORTKIT_ASSIGN_OR_RETURN(InputSources sources, ParseSources(flags.inputs));
  ORTKIT_ASSIGN_OR_RETURN(auto inputs, PrepareReduceInputs(model, sources));
  ORTKIT_ASSIGN_OR_RETURN(auto runtime, Runtime::Create());
  ProgressBar progress;
  ReduceOptions with_progress = options;
  const double budget_s = std::chrono::duration<double>(options.time_budget).count();
  with_progress.on_progress = [&](const ReduceProgress& p) {
    progress.Show(fmt::format("{}: {} candidates, smallest {} nodes", p.phase, p.candidates, p.smallest),
                  std::min(1.0, p.seconds / budget_s));
  };
  auto report = Reduce(*runtime, model, inputs, with_progress);
  progress.Clear();
  if (report.ok()) report->model = flags.model.string();
  return report;
}

int Run(const ReduceFlags& flags) {
  const Format format = flags.format;
  auto options = OptionsFrom(flags);
  if (!options.ok()) return Fail("reduce", options.error(), format);
  auto report = RunReduction(flags, *options);
  if (!report.ok()) return Fail("reduce", report.error(), format);
  if (!report->original_fails) return PrintNotFailing(*report, format);
  auto files = WriteReproducer(*report, flags.out);
  if (!files.ok()) return Fail("reduce", files.error(), format);
  if (format == Format::kJson) {
    nlohmann::json j = report->ToJson();
    j["written"] = files->ToJson();
    j["command"] = files->command;
    PrintJson(j);
  } else {
    PrintReport(*report, *files, *options, Style::ForStream(stdout));
  }
  return kExitOk;
}

}  // namespace

void RegisterReduce(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ReduceFlags>();
  CLI::App* cmd = app.add_subcommand(
      "reduce",
      "Delta-debug a model down to the smallest one that still fails the same way, with its inputs and a Python "
      "reproducer, for a bug report against ONNX Runtime");
  cmd->add_option("model", flags->model, "the .onnx file")->required();
  cmd->add_option("--out", flags->out, "where to write the reduced model (MIN.onnx)")->required();
  cmd->add_option("--fails", flags->fails,
                  "the failure to keep: auto, load, run, nan, diverge=opt-levels[=A,B], diverge=providers=A,B, or "
                  "cmd:COMMAND (fails when COMMAND exits non-zero or crashes; {model} and {inputs} are filled in)")
      ->capture_default_str();
  cmd->add_option("--message", flags->message,
                  "load, run: text the runtime's message must contain; cmd: text the command's output must contain");
  cmd->add_option("--command-timeout", flags->command_timeout_s,
                  "cmd: seconds each run of the command may take; a run that times out does not count as failing")
      ->check(RealNumberIn(0.001, 86400, "s"))
      ->capture_default_str();
  cmd->add_option("--atol", flags->atol, "diverge: absolute tolerance (default: per element type, as validate)");
  cmd->add_option("--rtol", flags->rtol, "diverge: relative tolerance (default: per element type, as validate)");
  cmd->add_option("--time-budget", flags->time_budget_s,
                  "seconds the search may take; then the smallest failing model so far is kept")
      ->check(RealNumberIn(0.001, 7 * 86400, "s"))
      ->capture_default_str();
  cmd->add_option("--provider", flags->provider, "execution provider of load, run and nan (cpu, cuda, ...)")
      ->capture_default_str();
  flags->inputs.Register(cmd);
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
