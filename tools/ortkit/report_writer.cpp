#include "report_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ortkit::cli {

void ReportWriter::Heading(const std::string& title) {
  out_ += markdown_ ? "\n## " + title + "\n\n" : "\n" + style_.Bold(title) + "\n";
}

void ReportWriter::Line(const std::string& text) {
  out_ += (markdown_ ? "" : "  ") + text + (markdown_ ? "  \n" : "\n");
}

void ReportWriter::Item(const std::string& label, const std::string& text) {
  out_ += markdown_ ? fmt::format("- **{}:** {}\n", label, text) : fmt::format("  {:<13}{}\n", label + ":", text);
}

void ReportWriter::Table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                         std::vector<bool> right) {
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

void ReportWriter::Finding(const Diagnosis& d) {
  if (!markdown_) {
    out_ += RenderDiagnosis(d, style_);
    return;
  }
  out_ += fmt::format("- **{}** `{}`: {}\n", ToString(d.severity), d.code, d.message);
  if (const auto where = d.location.Describe(); !where.empty()) out_ += fmt::format("  - at: {}\n", where);
  if (!d.cause.empty()) out_ += fmt::format("  - cause: {}\n", d.cause);
  if (!d.fix.empty()) out_ += fmt::format("  - fix: {}\n", d.fix);
}

}  // namespace ortkit::cli
