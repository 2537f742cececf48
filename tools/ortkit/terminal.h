#pragma once
// Output for people: colour only on a terminal (and never with NO_COLOR), aligned tables.

#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/terminal_text.h"
#include "ortkit/diagnose/diagnosis.h"

namespace ortkit::cli {

enum class Format { kText, kJson, kCsv, kMarkdown };

/// "text", "json", "csv" or "markdown": the name --format takes.
std::string_view FormatName(Format format);

/// Registers --format on `cmd`, read into `format` by CLI11 itself (CLI::CheckedTransformer): only the
/// names of `allowed` are taken, anything else is refused with the list; the default shown is the value
/// `format` holds (the flags struct's).
CLI::Option* AddFormatFlag(CLI::App* cmd, Format& format, std::initializer_list<Format> allowed,
                           const std::string& help = "output format");

/// `json` as --format json prints it (two-space indent). Names in a model are arbitrary bytes: any
/// that are not UTF-8 become U+FFFD, where nlohmann::json::dump() would throw.
std::string JsonText(const nlohmann::json& json);

struct Style {
  bool color = false;
  static Style ForStream(std::FILE* stream);

  std::string Bold(const std::string& s) const;
  std::string Dim(const std::string& s) const;
  std::string Red(const std::string& s) const;
  std::string Yellow(const std::string& s) const;
  std::string Green(const std::string& s) const;
  std::string Cyan(const std::string& s) const;
  std::string ForSeverity(Severity severity, const std::string& s) const;
};

/// A text table with aligned columns. Cells may contain colour escapes; widths ignore them.
class Table {
 public:
  explicit Table(std::vector<std::string> headers, std::vector<bool> right_aligned = {});
  void AddRow(std::vector<std::string> cells);
  std::string Render(const Style& style, const std::string& indent = "  ") const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

/// Writes `rendered` to `stream` made safe for a terminal (colour kept when the stream is coloured).
void PrintText(std::FILE* stream, std::string_view rendered);

/// Writes `json` as --format json prints it to stdout, then a newline: exact JSON, through PrintText
/// (JSON escapes C0 itself, and PrintText writes the rest as \u escapes that decode the same).
void PrintJson(const nlohmann::json& json);

/// Visible width of `s`: UTF-8 code points, colour escapes excluded.
std::size_t VisibleWidth(const std::string& s);

/// One diagnosis for people: "error  graph.static-batch  message\n  at: ...\n  cause: ...\n  fix: ...".
std::string RenderDiagnosis(const Diagnosis& diagnosis, const Style& style);

}  // namespace ortkit::cli
