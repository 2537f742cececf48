// ortkit env: the ONNX Runtime installs, Python environment and GPU stack a model meets.
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "failure.h"
#include "ortkit/env/environment.h"
#include "ortkit/runtime/runtime.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

struct EnvFlags {
  EnvironmentOptions options;
  bool no_python = false;
  Format format = Format::kText;
};

std::string Section(const std::string& title, const Style& style) { return "\n" + style.Bold(title) + "\n"; }

std::string CudaTable(const CudaLibraries& cuda, const Style& style) {
  std::string out = fmt::format("  {} needs CUDA {} and cuDNN {} ({})\n", cuda.requirement.build,
                                cuda.requirement.cuda_major, cuda.requirement.cudnn_major, cuda.requirement.source);
  Table table({"library", "found", "version", "where"});
  for (std::size_t i = 0; i < cuda.probes.size(); ++i) {
    const auto& p = cuda.probes[i];
    table.AddRow(
        {p.soname, p.found() ? style.Green("yes") : style.Red("no"), cuda.versions[i], p.found() ? p.path : p.error});
  }
  return out + table.Render(style, "    ");
}

std::string PythonText(const EnvironmentReport& report, const Style& style) {
  if (!report.python) return "  not examined: " + report.python_note + "\n";
  const auto& p = *report.python;
  std::string out =
      fmt::format("  interpreter   {} (Python {})\n  environment   {}\n", p.executable, p.version, p.prefix);
  if (p.distributions.empty()) {
    out += "  distributions none ship onnxruntime\n";
  } else {
    Table table({"distribution", "version", "owns onnxruntime/", "location"});
    for (const auto& d : p.distributions) {
      const std::string owns = !d.owns_package_files ? "?" : *d.owns_package_files ? "yes" : "no";
      table.AddRow({d.name, d.version, owns, d.location});
    }
    out += table.Render(style);
  }
  if (p.import.ok) {
    out += fmt::format("  import        onnxruntime {} ({}){}\n  providers     {}\n", p.import.version, p.import.file,
                       p.import.cuda_version.empty() ? "" : ", built for CUDA " + p.import.cuda_version,
                       fmt::join(p.import.providers, ", "));
  } else {
    out += fmt::format("  import        {}\n", style.Red("fails: ") + p.import.error);
  }
  if (p.cuda_session) {
    out +=
        fmt::format("  CUDA session  runs on {}\n",
                    p.cuda_session->providers.empty() ? p.cuda_session->error
                                                      : fmt::format("{}", fmt::join(p.cuda_session->providers, ", ")));
  }
  if (report.python_cuda) out += CudaTable(*report.python_cuda, style);
  return out;
}

void PrintReport(const EnvironmentReport& report, const Style& style) {
  const OwnRuntime& own = report.own;
  std::string out = style.Bold("ortkit env") + "\n";
  out += Section("ortkit's ONNX Runtime", style);
  out += fmt::format("  version       {}\n  library       {}\n  providers     {}\n", own.version,
                     own.library.empty() ? "(the loader does not say)" : own.library, fmt::join(own.providers, ", "));
  if (own.cuda) out += CudaTable(*own.cuda, style);
  if (own.cuda_session) {
    const ProviderProbe& probe = *own.cuda_session;
    out += fmt::format("  CUDA session  {}\n",
                       probe.Ran() && probe.UsedProvider() ? style.Green(probe.Describe()) : probe.Describe());
  }
  out += Section("Python", style) + PythonText(report, style);
  out += Section("GPU", style);
  const DriverInfo& d = report.driver;
  out += fmt::format("  driver        {}\n", d.version.empty() ? "none loaded" : d.version);
  if (d.cuda_version > 0)
    out += fmt::format("  driver CUDA   up to {}.{}\n", d.cuda_version / 1000, d.cuda_version % 1000 / 10);
  out += fmt::format("  devices       {}\n", d.devices >= 0 ? std::to_string(d.devices) : "unknown: " + d.error);
  out += "\n";
  for (const auto& diagnosis : report.diagnoses) out += RenderDiagnosis(diagnosis, style) + "\n";
  const auto worst = WorstSeverity(report.diagnoses);
  out += worst == Severity::kError ? style.Red("PROBLEMS") + ": the errors above stop models from running as asked\n"
         : worst == Severity::kWarning ? style.Yellow("WARNINGS") + "\n"
                                       : style.Green("OK") + "\n";
  PrintText(stdout, out);
}

int Run(EnvFlags& flags) {
  const Format format = flags.format;
  auto runtime = Runtime::Create();
  if (!runtime.ok()) return Fail("env", runtime.error(), format);
  flags.options.skip_python = flags.no_python;
  const EnvironmentReport report = InspectEnvironment(**runtime, flags.options);
  if (format == Format::kJson) {
    PrintJson(nlohmann::json(report));
  } else {
    PrintReport(report, Style::ForStream(stdout));
  }
  return WorstSeverity(report.diagnoses) == Severity::kError ? kExitFindings : kExitOk;
}

}  // namespace

void RegisterEnv(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<EnvFlags>();
  CLI::App* cmd = app.add_subcommand(
      "env", "The ONNX Runtime installs, Python environment and GPU stack: conflicts, missing CUDA libraries");
  cmd->add_option("--python", flags->options.python, "the Python interpreter whose environment to examine")
      ->capture_default_str()
      ->each([flags](const std::string&) { flags->options.python_given = true; });
  cmd->add_flag("--no-python", flags->no_python, "do not examine a Python environment");
  cmd->add_option("--provider", flags->options.provider,
                  "the execution provider you mean to run on (cuda: its absence is an error)")
      ->check(CLI::IsMember(KnownProviderNames()))
      ->capture_default_str();
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson});
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
