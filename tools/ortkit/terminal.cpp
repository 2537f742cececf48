#include "terminal.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit::cli {

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kText: return "text";
    case Format::kJson: return "json";
    case Format::kCsv: return "csv";
    case Format::kMarkdown: return "markdown";
  }
  return "text";
}

CLI::Option* AddFormatFlag(CLI::App* cmd, Format& format, std::initializer_list<Format> allowed,
                           const std::string& help) {
  std::vector<std::pair<std::string, Format>> names;
  std::vector<std::string> words;
  for (Format f : allowed) {
    names.emplace_back(FormatName(f), f);
    words.emplace_back(FormatName(f));
  }
  // The names alone: CheckedTransformer would also take the enum's numbers ("1"), so IsMember, which
  // runs first (transform() puts each in front), refuses them with the list as before.
  return cmd->add_option("--format", format, help)
      ->transform(CLI::CheckedTransformer(names).description(""))
      ->transform(CLI::IsMember(words))
      ->type_name("TEXT")
      ->default_str(std::string(FormatName(format)));
}

std::string JsonText(const nlohmann::json& json) {
  return json.dump(2, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

Style Style::ForStream(std::FILE* stream) {
  Style style;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  style.color = ::isatty(::fileno(stream)) && (no_color == nullptr || *no_color == '\0') &&
                !(term != nullptr && std::string(term) == "dumb");
  return style;
}

namespace {
std::string Wrap(bool on, const char* code, const std::string& s) {
  return on ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
}
}  // namespace

std::string Style::Bold(const std::string& s) const { return Wrap(color, "1", s); }
std::string Style::Dim(const std::string& s) const { return Wrap(color, "2", s); }
std::string Style::Red(const std::string& s) const { return Wrap(color, "31", s); }
std::string Style::Yellow(const std::string& s) const { return Wrap(color, "33", s); }
std::string Style::Green(const std::string& s) const { return Wrap(color, "32", s); }
std::string Style::Cyan(const std::string& s) const { return Wrap(color, "36", s); }

std::string Style::ForSeverity(Severity severity, const std::string& s) const {
  switch (severity) {
    case Severity::kError: return Red(s);
    case Severity::kWarning: return Yellow(s);
    case Severity::kInfo: return Cyan(s);
  }
  return s;
}

void PrintText(std::FILE* stream, std::string_view rendered) {
  const std::string safe = SafeForTerminal(rendered, Style::ForStream(stream).color);
  std::fwrite(safe.data(), 1, safe.size(), stream);
}

void PrintJson(const nlohmann::json& json) { PrintText(stdout, JsonText(json) + "\n"); }

std::size_t VisibleWidth(const std::string& s) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b) {
      while (i < s.size() && s[i] != 'm') ++i;
      continue;
    }
    if ((c & 0xC0) != 0x80) ++width;  // count UTF-8 lead bytes only
  }
  return width;
}

Table::Table(std::vector<std::string> headers, std::vector<bool> right_aligned)
    : headers_(std::move(headers)), right_(std::move(right_aligned)) {
  right_.resize(headers_.size(), false);
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render(const Style& style, const std::string& indent) const {
  // A cell is one line: a newline or tab in a name is written out, and widths count what is shown.
  std::vector<std::vector<std::string>> rows;
  rows.reserve(rows_.size());
  for (const auto& row : rows_) {
    auto& safe = rows.emplace_back();
    for (const auto& cell : row) safe.push_back(EscapeForTerminal(cell, style.color));
  }
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) widths[c] = VisibleWidth(headers_[c]);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], VisibleWidth(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = widths[c] - VisibleWidth(cells[c]);
      const bool last = c + 1 == cells.size();
      std::string cell = header ? style.Bold(cells[c]) : cells[c];
      if (right_[c])
        out += std::string(pad, ' ') + cell;
      else
        out += cell + (last ? "" : std::string(pad, ' '));
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_, true);
  for (const auto& row : rows) out += line(row, false);
  return out;
}

namespace {

/// A field of a diagnosis, its further lines indented under its first: a newline in a name or in a
/// runtime's message stays inside the diagnosis it belongs to.
std::string Indented(std::string_view text, std::size_t indent) {
  std::string out;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find('\n', start);
    if (start > 0) out += "\n" + std::string(indent, ' ');
    out += EscapeForTerminal(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace

std::string RenderDiagnosis(const Diagnosis& d, const Style& style) {
  constexpr std::size_t kFieldIndent = 16;  // "         cause: "
  std::string out =
      fmt::format("{}  {}  {}\n", style.ForSeverity(d.severity, fmt::format("{:<7}", ToString(d.severity))),
                  style.Bold(EscapeForTerminal(d.code)), Indented(d.message, 9));
  const std::string where = d.location.Describe();
  if (!where.empty()) out += fmt::format("         {} {}\n", style.Dim("at:   "), Indented(where, kFieldIndent));
  if (!d.cause.empty()) {
    out += fmt::format("         {} {}{}\n", style.Dim("cause:"), Indented(d.cause, kFieldIndent),
                       d.heuristic ? " (heuristic)" : "");
  }
  if (!d.fix.empty()) out += fmt::format("         {} {}\n", style.Dim("fix:  "), Indented(d.fix, kFieldIndent));
  return out;
}

}  // namespace ortkit::cli
