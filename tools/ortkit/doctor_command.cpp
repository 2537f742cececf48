// ortkit doctor MODEL: check, load, validate, sweep and time a model, and say in one verdict whether it is fit to ship.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "input_flags.h"
#include "ortkit/doctor/doctor.h"
#include "terminal.h"

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
  std::string target_ort;
  bool allow_warnings = false;
  std::string format = "text";
};

std::string Sci(double v) { return fmt::format("{:.3g}", v); }

/// Text and Markdown differ in headings, emphasis and tables only; the content is the same.
class Writer {
 public:
  Writer(bool markdown, Style style) : markdown_(markdown), style_(style) {}

  void Heading(const std::string& title) {
    out_ += markdown_ ? "\n## " + title + "\n\n" : "\n" + style_.Bold(title) + "\n";
  }
  void Line(const std::string& text) { out_ += (markdown_ ? "" : "  ") + text + (markdown_ ? "  \n" : "\n"); }
  void Item(const std::string& label, const std::string& text) {
    out_ += markdown_ ? fmt::format("- **{}:** {}\n", label, text) : fmt::format("  {:<13}{}\n", label + ":", text);
  }
  void Table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
             std::vector<bool> right = {}) {
    if (markdown_) {
      out_ += "| " + fmt::format("{}", fmt::join(headers, " | ")) + " |\n|";
      for (std::size_t i = 0; i < headers.size(); ++i) out_ += i < right.size() && right[i] ? " ---: |" : " --- |";
      out_ += "\n";
      for (const auto& row : rows) out_ += "| " + fmt::format("{}", fmt::join(row, " | ")) + " |\n";
      return;
    }
    cli::Table table(headers, std::move(right));
    for (const auto& row : rows) table.AddRow(row);
    out_ += table.Render(style_);
  }
  void Finding(const Diagnosis& d) {
    if (!markdown_) {
      out_ += RenderDiagnosis(d, style_);
      return;
    }
    out_ += fmt::format("- **{}** `{}`: {}\n", ToString(d.severity), d.code, d.message);
    if (const auto where = d.location.Describe(); !where.empty()) out_ += fmt::format("  - at: {}\n", where);
    if (!d.cause.empty()) out_ += fmt::format("  - cause: {}\n", d.cause);
    if (!d.fix.empty()) out_ += fmt::format("  - fix: {}\n", d.fix);
  }
  void Raw(const std::string& text) { out_ += text; }
  const Style& style() const { return style_; }
  bool markdown() const { return markdown_; }
  const std::string& str() const { return out_; }

 private:
  bool markdown_;
  Style style_;
  std::string out_;
};

std::string VerdictLine(const DoctorReport& report, const Style& style) {
  int errors = 0, warnings = 0, notes = 0;
  for (const auto& d : report.diagnoses) {
    (d.severity == Severity::kError ? errors : d.severity == Severity::kWarning ? warnings : notes)++;
  }
  const auto plural = [](int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
  switch (report.verdict) {
    case DoctorVerdict::kHealthy:
      return style.Green("HEALTHY") + (notes > 0 ? fmt::format(" ({})", plural(notes, "note")) : " (no findings)");
    case DoctorVerdict::kWarnings:
      return style.Yellow("WARNINGS") +
             fmt::format(" ({}; nothing broken, but read them before shipping)", plural(warnings, "warning"));
    case DoctorVerdict::kBroken:
      return style.Red("BROKEN") + fmt::format(" ({}, {})", plural(errors, "error"), plural(warnings, "warning"));
  }
  return "";
}

std::string CheckSummary(const CheckReport& check) {
  std::vector<std::string> parts;
  for (const auto& layer : check.layers) parts.push_back(fmt::format("{} {}", layer.name, ToString(layer.state)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

void WriteChain(Writer& w, const DoctorReport& report) {
  const Style& s = w.style();
  w.Heading("chain");
  if (report.export_record) {
    w.Item("export", fmt::format("{} ({}){}", report.export_record->Describe(), report.export_record->path.string(),
                                 report.export_record->error ? s.Red(", the export FAILED") : ""));
  }
  if (report.check) w.Item("check", CheckSummary(*report.check));
  for (const auto& p : report.providers) {
    w.Item("load", fmt::format("{}: {}", p.provider, p.loaded ? s.Green("loaded") : s.Red("not loaded")));
    for (const auto& note : p.notes) w.Item("note", fmt::format("{}: {}", p.provider, note));
    if (p.validation) {
      std::vector<std::string> cases;
      for (const auto& c : p.validation->cases) {
        cases.push_back(
            fmt::format("{} {}", c.label, c.ran && c.comparison.Passed() ? s.Green("pass") : s.Red("FAIL")));
      }
      w.Item("validation",
             fmt::format("{} against {}{}: {}", p.provider, report.reference_path,
                         report.reference_from_export ? " (the export's references)" : "", fmt::join(cases, ", ")));
    } else if (p.cross_check) {
      w.Item("cross-check",
             fmt::format("{}: {} vs {} on synthesised inputs (no reference): {}", p.provider, p.cross_check->label_a,
                         p.cross_check->label_b, p.cross_check->Passed() ? s.Green("agree") : s.Red("DIFFER")));
    }
    if (p.sweep) {
      int passed = 0;
      for (const auto& c : p.sweep->cells) passed += c.state == SweepCell::State::kPassed;
      std::vector<std::string> axes;
      for (const auto& a : p.sweep->axes) axes.push_back(fmt::format("{}={}", a.dim, fmt::join(a.values, ",")));
      w.Item(
          "sweep",
          p.sweep->axes.empty()
              ? fmt::format("{}: every input dimension is fixed, nothing to sweep", p.provider)
              : fmt::format("{}: {}/{} cells pass over {}{}", p.provider, passed, p.sweep->cells.size(),
                            fmt::join(axes, " "),
                            p.sweep->batch_dim.empty() ? "" : ", batch consistency on '" + p.sweep->batch_dim + "'"));
    }
    if (p.latency) {
      w.Item("latency", fmt::format("{}: p50 {} ms, p90 {} ms ({} runs at {})", p.provider, Sci(p.latency->p50_ms),
                                    Sci(p.latency->p90_ms), p.latency->runs, p.latency->shape));
    }
  }
}

void WriteSweep(Writer& w, const ProviderReport& p) {
  if (!p.sweep || p.sweep->axes.empty()) return;
  const Style& s = w.style();
  w.Heading(fmt::format("sweep grid ({})", p.provider));
  if (!p.sweep->batch_dim.empty()) {
    w.Line(fmt::format("batch axis '{}': row i of a batched run must equal row i run alone", p.sweep->batch_dim));
    if (!w.markdown()) w.Raw("\n");
  }
  std::vector<std::string> headers;
  std::vector<bool> right;
  for (const auto& axis : p.sweep->axes) {
    headers.push_back(axis.dim);
    right.push_back(true);
  }
  for (const char* h : {"result", "time ms", "batch check"}) {
    headers.emplace_back(h);
    right.push_back(std::string(h) == "time ms");
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& cell : p.sweep->cells) {
    std::vector<std::string> row;
    for (const auto& axis : p.sweep->axes) row.push_back(std::to_string(cell.dims.at(axis.dim)));
    const bool ok = cell.state == SweepCell::State::kPassed;
    row.push_back(ok ? s.Green("pass")
                     : s.Red("FAIL") + (cell.diagnoses.empty() ? "" : " " + cell.diagnoses.front().code));
    row.push_back(fmt::format("{:.2f}", cell.run_ms));
    row.push_back(cell.batch_checked ? fmt::format("max err {}", Sci(cell.batch_max_abs_error)) : "-");
    rows.push_back(std::move(row));
  }
  w.Table(headers, rows, right);
}

void WriteLatency(Writer& w, const DoctorReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : report.providers) {
    if (!p.latency) continue;
    const auto& l = *p.latency;
    rows.push_back({p.provider, l.shape, std::to_string(l.runs), Sci(l.first_ms), Sci(l.p50_ms), Sci(l.p90_ms),
                    Sci(l.mean_ms), Sci(l.min_ms), Sci(l.max_ms)});
  }
  if (rows.empty()) return;
  w.Heading("latency (ms; a first run and 2 warm-up runs, then the timed runs)");
  w.Table({"provider", "inputs", "runs", "first", "p50", "p90", "mean", "min", "max"}, rows,
          {false, false, true, true, true, true, true, true, true});
  if (!w.markdown()) {
    w.Raw(w.style().Dim(
        "  a baseline, not a benchmark: `ortkit bench` measures throughput, threads and percentiles properly\n"));
  }
}

std::string Render(const DoctorReport& report, bool markdown, const Style& style) {
  Writer w(markdown, style);
  const std::string subject = report.model_path.empty()
                                  ? (report.export_record ? report.export_record->path.parent_path().string() : "")
                                  : report.model_path;
  w.Raw(markdown ? fmt::format("# ortkit doctor: `{}`\n\n", subject)
                 : fmt::format("{} {}\n\n", style.Bold("ortkit doctor"), subject));
  w.Raw(markdown ? fmt::format("**Verdict: {}**\n", VerdictLine(report, Style{}))
                 : fmt::format("  verdict: {}\n", VerdictLine(report, style)));
  if (!report.diagnoses.empty()) {
    w.Heading(fmt::format("findings, most severe first ({})", report.diagnoses.size()));
    for (const auto& d : report.diagnoses) {
      w.Finding(d);
      if (!markdown) w.Raw("\n");
    }
  }
  WriteChain(w, report);
  for (const auto& p : report.providers) WriteSweep(w, p);
  WriteLatency(w, report);
  return w.str();
}

int Run(const DoctorFlags& flags) {
  Format format = Format::kText;
  ParseFormat(flags.format, &format);
  auto plan = ParsePlan(flags.inputs);
  if (!plan.ok()) {
    std::fprintf(stderr, "ortkit doctor: %s\n", plan.error().message.c_str());
    return kExitUsage;
  }
  DoctorOptions options;
  options.model = flags.model;
  options.reference = flags.reference;
  options.providers = flags.providers;
  options.tolerance.atol = flags.atol;
  options.tolerance.rtol = flags.rtol;
  options.inputs = *plan;
  options.sweep = !flags.no_sweep;
  options.target_ort = flags.target_ort;
  options.benchmark_runs = flags.runs;
  auto runtime = Runtime::Create();
  if (!runtime.ok()) {
    std::fprintf(stderr, "ortkit doctor: %s\n", runtime.error().message.c_str());
    return kExitInternal;
  }
  auto report = RunDoctor(**runtime, options);
  if (!report.ok()) {
    std::fprintf(stderr, "ortkit doctor: %s\n", report.error().message.c_str());
    return kExitUsage;
  }
  if (format == Format::kJson) {
    std::cout << JsonText(report->ToJson()) << "\n";
  } else {
    const Style style = format == Format::kMarkdown ? Style{} : Style::ForStream(stdout);
    std::fputs(Render(*report, format == Format::kMarkdown, style).c_str(), stdout);
  }
  if (report->io_error) return kExitUsage;
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
  cmd->add_option("--dim", flags->inputs.dims,
                  "sizes of dimensions for the cross-check, sweep base and latency: batch=1,seq_len=16; unnamed "
                  "ones are INPUT:AXIS, e.g. x:2=48 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--shape", flags->inputs.shapes, "full shape of one input, e.g. --shape x=1x3x48x192 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed", flags->inputs.seed, "seed for synthesised inputs")->capture_default_str();
  cmd->add_option("--atol", flags->atol, "absolute tolerance for every output (default by element type)");
  cmd->add_option("--rtol", flags->rtol, "relative tolerance for every output (default by element type)");
  cmd->add_option("--runs", flags->runs, "timed runs of the baseline latency (0: skip it)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--no-sweep", flags->no_sweep, "skip the dynamic-shape sweep");
  cmd->add_option("--target-ort", flags->target_ort,
                  "also check that ONNX Runtime X.Y (1.10 to 1.29) loads the model and has its operators")
      ->check(TargetOrtValidator());
  cmd->add_flag("--allow-warnings", flags->allow_warnings,
                "exit 0 when the verdict is 'warnings' (default: only 'healthy' exits 0)");
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"text", "json", "markdown"}))
      ->capture_default_str();
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace ortkit::cli
