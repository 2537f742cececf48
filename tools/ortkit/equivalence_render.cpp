#include "equivalence_render.h"

#include <fmt/format.h>

namespace ortkit::cli {

std::string RenderEquivalenceTable(const EquivalenceReport& proof, const Style& style) {
  Table table({"shape", "output", "max abs error", "mismatches", "result"}, {false, false, true, true, false});
  for (const auto& trial : proof.trials) {
    if (!trial.report) {
      table.AddRow({trial.label, "-", "-", "-", style.Dim("skipped")});
      continue;
    }
    for (const auto& o : trial.report->comparison.outputs) {
      table.AddRow({trial.label, o.name, fmt::format("{:.3g}", o.max_abs_error), std::to_string(o.mismatches),
                    o.passed ? style.Green("pass") : style.Red("DIFFERS")});
    }
  }
  std::string out = table.Render(style, "    ");
  for (const auto& trial : proof.trials) {
    if (!trial.skipped.empty()) out += style.Dim(fmt::format("    {}: {}\n", trial.label, trial.skipped));
  }
  return out;
}

}  // namespace ortkit::cli
