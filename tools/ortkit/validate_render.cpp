#include "validate_render.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/validate/purpose_judgement.h"

namespace ortkit::cli {
namespace {

std::string Sci(double v) { return fmt::format("{:.3g}", v); }

// Why an output failed, and where its worst element is.
std::string FailureNotes(const OutputComparison& o, const Style& style) {
  std::string notes = fmt::format("  {} {}\n", style.Red(o.name + ":"), o.problem);
  if (!o.worst_position.empty() || o.worst_index >= 0) {
    notes += fmt::format(
        "    worst at [{}]: expected {}, got {}\n", fmt::join(o.worst_position, ", "),
        o.strings ? fmt::format("\"{}\"", o.worst_expected_string) : fmt::format("{:.8g}", o.worst_expected),
        o.strings ? fmt::format("\"{}\"", o.worst_actual_string) : fmt::format("{:.8g}", o.worst_actual));
  }
  return notes;
}

std::string RenderComparison(const ComparisonReport& report, const Style& style, const std::string& indent = "    ") {
  Table table({"output", "shape", "max abs", "max rel", "mean abs", "mismatches", "atol", "rtol", "result"},
              {false, false, true, true, true, true, true, true, false});
  std::string notes;
  for (const auto& o : report.outputs) {
    table.AddRow({o.name, o.actual_desc, Sci(o.max_abs_error), Sci(o.max_rel_error), Sci(o.mean_abs_error),
                  fmt::format("{}/{}", o.mismatches, o.elements), Sci(o.EffectiveAtol()), Sci(o.tolerance.rtol),
                  o.passed ? style.Green(o.judged == OutputComparison::Judged::kRounding ? "pass by purpose" : "pass")
                           : style.Red("FAIL")});
    if (!o.passed) notes += FailureNotes(o, style);
    if (!o.judgement.empty()) notes += fmt::format("  {} {}\n", style.Dim(o.name + ":"), o.judgement);
  }
  for (const auto& name : report.missing_in_run)
    notes += fmt::format("  {} the model did not produce '{}'\n", style.Red("missing:"), name);
  for (const auto& name : report.not_in_reference)
    notes += fmt::format("  {} '{}' has no reference value (not compared)\n", style.Dim("note:"), name);
  std::string indented_notes;
  std::size_t start = 0;
  while (start < notes.size()) {
    const std::size_t end = notes.find('\n', start);
    indented_notes += indent.substr(2) + notes.substr(start, end - start + 1);
    start = end + 1;
  }
  // A model without tensor outputs (a ZipMap alone): nothing compared, said rather than an empty table.
  const std::string compared =
      report.outputs.empty() ? indent + style.Dim("no tensor output to compare") + "\n" : table.Render(style, indent);
  return compared + (notes.empty() ? "" : "\n" + indented_notes);
}

// The batch axis, and why the sweep covers the sizes it does: the model's own limits, found by running it.
std::string SweepHead(const SweepReport& report, const Style& style) {
  std::string head =
      report.batch_dim.empty()
          ? ""
          : fmt::format("  batch axis: {} (row i of a batched run must equal row i alone)\n", report.batch_dim);
  for (const auto& note : report.notes) head += style.Dim(fmt::format("  {}\n", note));
  for (const auto& f : report.size_findings) {
    const std::string line = fmt::format("  size limit: {}\n", f.Describe());
    if (head.find(f.Describe()) == std::string::npos) head += style.Dim(line);
  }
  return head;
}

std::string RenderSweep(const SweepReport& report, const Style& style) {
  std::vector<std::string> headers;
  std::vector<bool> right;
  for (const auto& axis : report.axes) {
    headers.push_back(axis.dim);
    right.push_back(true);
  }
  for (const char* h : {"result", "time ms", "batch check"}) {
    headers.push_back(h);
    right.push_back(std::string(h) == "time ms");
  }
  Table table(headers, right);
  std::string problems;
  for (const auto& cell : report.cells) {
    std::vector<std::string> row;
    for (const auto& axis : report.axes) row.push_back(std::to_string(cell.dims.at(axis.dim)));
    const bool ok = cell.state == SweepCell::State::kPassed;
    const bool skipped = cell.state == SweepCell::State::kSkipped;
    row.push_back(ok ? style.Green("pass") : skipped ? style.Dim("not run (memory)") : style.Red("FAIL"));
    row.push_back(fmt::format("{:.2f}", cell.run_ms));
    row.push_back(cell.batch_checked ? fmt::format("max err {}", Sci(cell.batch_max_abs_error)) : style.Dim("-"));
    table.AddRow(std::move(row));
    for (const auto& d : cell.diagnoses) problems += "\n" + RenderDiagnosis(d, style);
  }
  return SweepHead(report, style) + "\n" + table.Render(style) + problems;
}

std::string RenderLocalization(const Localization& localization, const Style& style) {
  if (!localization.report.ok())
    return fmt::format("\n{} {}\n", style.Red("localisation failed:"), localization.report.error().message);
  const LocalizeReport& report = *localization.report;
  std::string out =
      fmt::format("\n{} ({} vs {}: {} values compared{})\n", style.Bold("localisation"), report.label_a, report.label_b,
                  report.stats.values_compared, report.complete ? "" : ", incomplete: " + report.stopped_because);
  if (localization.diagnoses.empty()) out += "  every intermediate value agrees\n";
  for (const auto& d : localization.diagnoses) out += RenderDiagnosis(d, style);
  return out;
}

std::string RenderReference(const ReferenceReport& report, const std::string& path, const Style& style) {
  std::string text = fmt::format("\n{} {} ({} case{})\n", style.Bold("reference"), path, report.cases.size(),
                                 report.cases.size() == 1 ? "" : "s");
  text += style.Dim(
      "  tolerance: |actual - expected| <= atol + rtol * |expected|; defaults float32 1e-5/1e-3, "
      "float16 1e-3/1e-2, float64 1e-8/1e-6, integers exact\n");
  for (const auto& c : report.cases) {
    text += fmt::format("\n  {}\n", style.Bold(c.label));
    if (!c.ran) {
      text += RenderDiagnosis(TranslateRuntimeError(c.run_error, {}, true), style);
      continue;
    }
    text += RenderComparison(c.comparison, style);
  }
  return text;
}

// The nodes a non-CPU side left on the CPU: where to look when it is slow or its numbers differ.
std::string RenderFallbacks(const std::string& label, const SidePlacement& placement, const Style& style) {
  constexpr std::size_t kShown = 10;
  const auto& fallbacks = placement.cpu_fallbacks;
  if (fallbacks.empty()) return "";
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < std::min(kShown, fallbacks.size()); ++i)
    shown.push_back(fmt::format("'{}' ({})", fallbacks[i].node, fallbacks[i].op_type));
  const std::string more =
      fallbacks.size() > kShown ? fmt::format(" and {} more", fallbacks.size() - kShown) : std::string();
  return style.Yellow(fmt::format("  fell back to the CPU on {}: {}{}", label, fmt::join(shown, ", "), more)) + "\n";
}

std::string RenderPlacement(const CrossCheckReport& cross, const Style& style) {
  return fmt::format("  nodes      {}: {} | {}: {}\n", cross.label_a, DescribeSidePlacement(cross.placement_a),
                     cross.label_b, DescribeSidePlacement(cross.placement_b)) +
         RenderFallbacks(cross.label_a, cross.placement_a, style) +
         RenderFallbacks(cross.label_b, cross.placement_b, style);
}

std::string RenderCrossCheck(const ValidateReport& report, const Style& style) {
  if (report.cross_check_error) {
    return fmt::format("\n{} {}: the run failed\n", style.Bold("cross-check"), report.compare_mode) +
           RenderDiagnosis(report.CrossCheckRunDiagnosis(), style);
  }
  const CrossCheckReport& cross = *report.cross_check;
  std::string text =
      fmt::format("\n{} {} (reference side) vs {}\n", style.Bold("cross-check"), cross.label_a, cross.label_b);
  for (const auto& note : report.size_notes) text += style.Dim(fmt::format("  sizes found by running: {}\n", note));
  if (cross.quantization.quantized()) {
    text += fmt::format("  {}, judged by purpose: {}\n", cross.quantization.Describe(),
                        DescribeAgreements(cross.comparison));
  }
  return text + RenderPlacement(cross, style) + RenderComparison(cross.comparison, style);
}

}  // namespace

// "CUDAExecutionProvider 118, CPUExecutionProvider 2 (3 memory copies)", or why it is unknown.
std::string DescribeSidePlacement(const SidePlacement& placement) {
  if (!placement.known()) return placement.note;
  std::vector<std::string> providers;
  for (const auto& p : placement.providers) providers.push_back(fmt::format("{} {}", p.name, p.nodes));
  std::string text = providers.empty() ? "no node ran" : fmt::format("{}", fmt::join(providers, ", "));
  if (placement.memory_copies > 0)
    text += fmt::format(" ({} memory cop{})", placement.memory_copies, placement.memory_copies == 1 ? "y" : "ies");
  return text;
}

std::string RenderValidateSteps(const ValidateReport& report, const Style& style) {
  std::string text;
  if (report.target) {
    text += fmt::format("\n{} ONNX Runtime {}: {}\n", style.Bold("target runtime"), report.target->release,
                        report.target->Passed() ? style.Green("loads the model") : style.Red("FAILED"));
    for (const auto& d : report.target->diagnoses) text += RenderDiagnosis(d, style);
  }
  for (const auto& name : report.not_compared) {
    text +=
        style.Dim(fmt::format("  note: output '{}' is a sequence, map or optional: computed in every run, its "
                              "values not compared (ortkit compares tensor outputs only)\n",
                              name));
  }
  if (report.reference) text += RenderReference(*report.reference, report.reference_path.string(), style);
  if (report.cross_check || report.cross_check_error) text += RenderCrossCheck(report, style);
  for (const auto& localization : report.localizations) text += RenderLocalization(localization, style);
  if (report.sweep) {
    text +=
        fmt::format("\n{} ({} cells, one session)\n", style.Bold("dynamic-shape sweep"), report.sweep->cells.size());
    if (report.sweep->axes.empty()) text += "  every input dimension is fixed (by the file or the flags): one run\n";
    text += RenderSweep(*report.sweep, style);
  }
  return text;
}

PageGrid SweepGrid(const SweepReport& sweep) {
  PageGrid grid;
  grid.title = "The dynamic-shape sweep";
  const auto& axes = sweep.axes;
  std::size_t rows = 1;
  for (std::size_t a = 0; a + 1 < axes.size(); ++a) rows *= axes[a].values.size();
  if (axes.size() <= 1) {
    grid.row_axes = axes.empty() ? "shape" : axes.front().dim;
    grid.column_labels = {"result"};
    if (!axes.empty())
      for (auto v : axes.front().values) grid.row_labels.push_back(std::to_string(v));
    if (axes.empty()) grid.row_labels = {"the inputs' sizes"};
  } else {
    std::vector<std::string> names;
    for (std::size_t a = 0; a + 1 < axes.size(); ++a) names.push_back(axes[a].dim);
    grid.row_axes = fmt::format("{}", fmt::join(names, " × "));
    grid.column_axis = axes.back().dim;
    for (auto v : axes.back().values) grid.column_labels.push_back(std::to_string(v));
    for (std::size_t r = 0; r < rows; ++r) {  // row-major: the first axis varies slowest
      std::vector<std::string> parts;
      std::size_t rest = r;
      for (std::size_t a = axes.size() - 1; a-- > 0;) {
        parts.insert(parts.begin(), std::to_string(axes[a].values[rest % axes[a].values.size()]));
        rest /= axes[a].values.size();
      }
      grid.row_labels.push_back(fmt::format("{}", fmt::join(parts, " × ")));
    }
  }
  for (const auto& cell : sweep.cells) {
    PageGrid::Cell out;
    if (cell.state == SweepCell::State::kSkipped) {
      out = {"skipped", "skipped", cell.skipped};
    } else if (cell.state == SweepCell::State::kFailed) {
      const bool nan = std::any_of(cell.diagnoses.begin(), cell.diagnoses.end(),
                                   [](const Diagnosis& d) { return d.code.find("nan") != std::string::npos; });
      out = {nan ? "nan" : "fail", nan ? "NaN" : "FAIL",
             cell.diagnoses.empty() ? "failed" : cell.diagnoses.front().code + ": " + cell.diagnoses.front().message};
    } else {
      out = {"pass", fmt::format("{:.3g} ms", cell.run_ms), ""};
    }
    grid.cells.push_back(std::move(out));
  }
  for (const auto& f : sweep.size_findings) grid.notes.push_back(f.Describe());
  return grid;
}

}  // namespace ortkit::cli
