// `ortkit bench --compare BASE.json NEW.json`: two saved reports (BenchReport) compared point by
// point (CompareRuns), exit 1 when the new one is slower, and the comparison's report.
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bench_command.h"
#include "bench_render.h"
#include "commands.h"
#include "failure.h"
#include "ortkit/bench/report.h"
#include "ortkit/bench/run_comparison.h"

namespace ortkit::cli {
namespace {

Result<BenchReport> ReadSavedReport(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return MakeError(ErrorKind::kIo, fmt::format("--compare {}: cannot read the file", path.string()));
  nlohmann::json json;
  try {
    in >> json;
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--compare {}: not JSON: {}", path.string(), e.what()));
  }
  auto report = BenchReport::FromJson(json);
  if (!report.ok()) {
    return MakeError(report.error().kind, fmt::format("--compare {}: {}", path.string(), report.error().message));
  }
  return report;
}

std::string CompareJson(const BenchFlags& flags, const CompareOptions& options, const RunComparison& report) {
  nlohmann::json json = {{"base", flags.compare[0].string()},
                         {"candidate", flags.compare[1].string()},
                         {"min_change", options.min_change},
                         {"verdict", ToString(report.verdict)},
                         {"unmatched", report.unmatched}};
  json["points"] = nlohmann::json::array();
  for (const auto& p : report.points) {
    nlohmann::json point = {{"label", p.label}, {"verdict", ToString(p.verdict)}};
    for (const auto& f : p.figures) {
      point["figures"].push_back({{"figure", f.figure},
                                  {"base", f.base},
                                  {"candidate", f.candidate},
                                  {"ratio", f.ratio},
                                  {"noise_low", f.low},
                                  {"noise_high", f.high},
                                  {"gates", f.gates},
                                  {"verdict", ToString(f.verdict)}});
    }
    json["points"].push_back(std::move(point));
  }
  return JsonText(json) + "\n";
}

std::string CompareCsv(const RunComparison& report) {
  std::string out = "shape,figure,base,new,ratio,noise_low,noise_high,verdict\n";
  for (const auto& p : report.points) {
    for (const auto& f : p.figures) {
      out += fmt::format("{},{},{:.6f},{:.6f},{:.4f},{:.4f},{:.4f},{}\n", CsvField(p.label), f.figure, f.base,
                         f.candidate, f.ratio, f.low, f.high, ToString(f.verdict));
    }
  }
  return out;
}

const std::vector<std::string>& CompareHeaders() {
  static const std::vector<std::string> headers = {"shape", "figure",           "base",   "new",
                                                   "ratio", "noise band (95%)", "verdict"};
  return headers;
}

std::vector<std::string> CompareCells(const PointComparison& p, const FigureComparison& f) {
  const bool throughput = f.figure == "throughput";
  auto value = [&](double v) { return throughput ? FixedDecimals(v, 1) + "/s" : Milliseconds(v) + " ms"; };
  return {p.label,
          f.figure + (f.gates ? "" : " (info)"),
          value(f.base),
          value(f.candidate),
          fmt::format("{:.3f}", f.ratio),
          fmt::format("{:.3f} .. {:.3f}", f.low, f.high),
          ToString(f.verdict)};
}

std::string CompareMarkdown(const RunComparison& report) {
  std::string out =
      "| " + fmt::format("{}", fmt::join(CompareHeaders(), " | ")) + " |\n|---|---|---:|---:|---:|---|---|\n";
  for (const auto& p : report.points) {
    for (const auto& f : p.figures) out += "| " + fmt::format("{}", fmt::join(CompareCells(p, f), " | ")) + " |\n";
  }
  out += fmt::format("\n**ChangeVerdict: {}**\n", ToString(report.verdict));
  return out;
}

std::string CompareText(const BenchFlags& flags, const RunComparison& report, const Style& style) {
  auto colour = [&](ChangeVerdict v, const std::string& s) {
    return v == ChangeVerdict::kSlower ? style.Red(s) : v == ChangeVerdict::kFaster ? style.Green(s) : s;
  };
  Table table(CompareHeaders(), {false, false, true, true, true, false, false});
  for (const auto& p : report.points) {
    for (const auto& f : p.figures) {
      auto row = CompareCells(p, f);
      row.back() = colour(f.verdict, row.back());
      table.AddRow(row);
    }
  }
  std::string out = fmt::format("{} {} -> {}\n\n", style.Bold("ortkit bench --compare"), flags.compare[0].string(),
                                flags.compare[1].string());
  out += table.Render(style);
  out +=
      style.Dim(fmt::format("  ratio = new / base; the p50 latency and throughput decide; changes under {}% are noise",
                            flags.min_change)) +
      "\n";
  for (const auto& u : report.unmatched) out += style.Yellow(fmt::format("  {} is in only one of the runs", u)) + "\n";
  out += "\nverdict: " + colour(report.verdict, style.Bold(ToString(report.verdict))) + "\n";
  return out;
}

}  // namespace

int RunCompare(const BenchFlags& flags) {
  const Format format = flags.format;
  // Reports that cannot be read or compared are the call's to fix (exit 2), as ever.
  auto base = ReadSavedReport(flags.compare[0]);
  if (!base.ok()) return Fail("bench", AsUsageError(base.error()), format);
  auto candidate = ReadSavedReport(flags.compare[1]);
  if (!candidate.ok()) return Fail("bench", AsUsageError(candidate.error()), format);
  CompareOptions options;
  options.min_change = flags.min_change / 100;
  auto report = CompareRuns(ComparablePoints(*base), ComparablePoints(*candidate), options);
  if (!report.ok()) return Fail("bench", AsUsageError(report.error()), format);
  const int exit_code = report->verdict == ChangeVerdict::kSlower ? kExitFindings : kExitOk;
  std::string out;
  switch (format) {
    case Format::kJson: out = CompareJson(flags, options, *report); break;
    case Format::kCsv: out = CompareCsv(*report); break;
    case Format::kMarkdown: out = CompareMarkdown(*report); break;
    case Format::kText: out = CompareText(flags, *report, Style::ForStream(stdout)); break;
  }
  PrintText(stdout, out);
  return exit_code;
}

}  // namespace ortkit::cli
