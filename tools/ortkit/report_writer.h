#pragma once
// A report written as text for a terminal or as Markdown (doctor's --format markdown): the two differ in
// headings, emphasis and tables only, so a report is written once through this.

#include <string>
#include <vector>

#include "ortkit/diagnose/diagnosis.h"
#include "terminal.h"

namespace ortkit::cli {

class ReportWriter {
 public:
  ReportWriter(bool markdown, Style style) : markdown_(markdown), style_(style) {}

  /// A section's title: "## TITLE" in Markdown, bold text after a blank line otherwise.
  void Heading(const std::string& title);
  /// One line of text (indented as text, a hard line break in Markdown).
  void Line(const std::string& text);
  /// "label: text", aligned as text, a list item in Markdown.
  void Item(const std::string& label, const std::string& text);
  /// A table; `right` says which columns are right-aligned.
  void Table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
             std::vector<bool> right = {});
  /// A finding as RenderDiagnosis writes it, or as a list item with its location, cause and fix.
  void Finding(const Diagnosis& d);
  /// `text` as it is.
  void Raw(const std::string& text) { out_ += text; }

  const Style& style() const { return style_; }
  bool markdown() const { return markdown_; }
  const std::string& str() const { return out_; }

 private:
  bool markdown_;
  Style style_;
  std::string out_;
};

}  // namespace ortkit::cli
