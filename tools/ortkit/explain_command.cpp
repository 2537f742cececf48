// ortkit explain [CODE...]: what a diagnosis code means, its usual cause and fix.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "model_session.h"
#include "ortkit/diagnose/catalogue.h"
#include "ortkit/fix/fix_passes.h"
#include "terminal.h"

namespace ortkit::cli {
namespace {

struct ExplainFlags {
  std::vector<std::string> codes;
  Format format = Format::kText;
};

/// Whether `ortkit fix` repairs the file for this code, for every code.
std::string FixLine(const CodeInfo& info) {
  std::string handled = FixHandling(info.code);
  return handled.empty() ? "`ortkit fix` does not change the file for it: apply the fix above." : handled;
}

std::string Markdown(const CodeInfo& info) {
  return fmt::format("### `{}`\n\n**{}** — {}.\n\n- **Cause:** {}\n- **Fix:** {}\n- **ortkit fix:** {}\n\n", info.code,
                     ToString(info.severity), info.title, info.cause, info.fix, FixLine(info));
}

int Run(const ExplainFlags& flags) {
  std::vector<const CodeInfo*> selected;
  if (flags.codes.empty()) {
    for (const auto& info : AllCodes()) selected.push_back(&info);
  } else {
    for (const auto& code : flags.codes) {
      const CodeInfo* info = FindCode(code);
      if (info == nullptr) {
        return FailUsage("explain",
                         fmt::format("unknown diagnosis code '{}' (run `ortkit explain` for the list)", code),
                         flags.format);
      }
      selected.push_back(info);
    }
  }
  if (flags.format == Format::kJson) {
    nlohmann::json json = nlohmann::json::array();
    for (const auto* info : selected) {
      json.push_back({{"code", info->code},
                      {"severity", ToString(info->severity)},
                      {"title", info->title},
                      {"cause", info->cause},
                      {"fix", info->fix},
                      {"ortkit_fix", FixHandling(info->code)}});
    }
    PrintJson(json);
    return kExitOk;
  }
  if (flags.format == Format::kMarkdown) {
    for (const auto* info : selected) PrintText(stdout, Markdown(*info));
    return kExitOk;
  }
  const Style style = Style::ForStream(stdout);
  if (flags.codes.empty()) {
    Table table({"code", "severity", "meaning"});
    for (const auto* info : selected) {
      table.AddRow({std::string(info->code), style.ForSeverity(info->severity, ToString(info->severity)),
                    std::string(info->title)});
    }
    PrintText(stdout, table.Render(style, ""));
    return kExitOk;
  }
  for (const auto* info : selected) {
    PrintText(stdout, fmt::format("{}  {}\n  {}\n\n  {} {}\n  {} {}\n", style.Bold(std::string(info->code)),
                                  style.ForSeverity(info->severity, ToString(info->severity)), info->title,
                                  style.Dim("cause:"), info->cause, style.Dim("fix:  "), info->fix));
    const std::string handled = FixHandling(info->code);
    PrintText(stdout, handled.empty() ? "\n" : fmt::format("  {} {}\n\n", style.Dim("auto: "), handled));
  }
  return kExitOk;
}

}  // namespace

void RegisterExplain(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Explain diagnosis codes: meaning, usual cause and fix (all codes when none is given)");
  cmd->add_option("codes", flags->codes, "diagnosis codes, e.g. graph.static-batch");
  AddFormatFlag(cmd, flags->format, {Format::kText, Format::kJson, Format::kMarkdown});
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
