#include "ortkit/report/report_page.h"

#include <fstream>

#include <fmt/format.h>

#include "ortkit/check/onnx_checker.h"
#include "ortkit/core/markup_text.h"
#include "ortkit/model/model_file.h"
#include "ortkit/report/graph_svg.h"
#include "ortkit/report/page_assets.h"
#include "ortkit/report/script_json.h"

namespace ortkit {
namespace {

std::string Head(const ReportPage& page) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      // Nothing may be fetched: the page holds all it shows, and a hostile name can load nothing.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>ortkit {}: {}</title>\n<style>{}</style></head>\n<body>\n{}",
      EscapeHtml(page.command), EscapeHtml(page.model_path), PageStyle(), PageSvgDefinitions());
}

std::string Header(const ReportPage& page) {
  return fmt::format(
      "<header><h1>ortkit {}</h1><p class=\"model\">{}</p>\n<p id=\"verdict\" class=\"verdict {}\">{}</p>"
      "<p class=\"counts\">{} finding{}</p></header>\n",
      EscapeHtml(page.command), EscapeHtml(page.model_path), ToString(page.verdict_severity), EscapeHtml(page.verdict),
      page.diagnoses.size(), page.diagnoses.size() == 1 ? "" : "s");
}

std::string Field(const char* label, const std::string& text) {
  return text.empty() ? "" : fmt::format("<dt>{}</dt><dd>{}</dd>", label, EscapeHtml(text));
}

std::string FindingGraph(const Diagnosis& d, const onnx::ModelProto* model, const ReportPageOptions& options,
                         int& graphs_left) {
  const GraphFocus focus = FocusOf(d.location);
  if (model == nullptr || focus.empty()) return "";
  if (graphs_left <= 0)
    return fmt::format("<p class=\"note\">no graph: the first {} findings that name a node have one</p>",
                       options.max_finding_graphs);
  const auto n = FindNeighbourhood(*model, focus, options.neighbourhood);
  if (!n) return "<p class=\"note\">the model has no node or value of this name</p>";
  --graphs_left;
  std::string caption = fmt::format("{} node{} within {} step{}", n->nodes.size(), n->nodes.size() == 1 ? "" : "s",
                                    options.neighbourhood.hops, options.neighbourhood.hops == 1 ? "" : "s");
  if (n->truncated) caption += fmt::format(" (the nearest {}; more lie within reach)", n->nodes.size());
  if (!n->graph_path.empty()) caption += ", in the subgraph " + n->graph_path;
  return fmt::format("<figure class=\"neighbourhood\">{}<figcaption>{}</figcaption></figure>", NeighbourhoodSvg(*n),
                     EscapeHtml(caption));
}

std::string Findings(const ReportPage& page, const onnx::ModelProto* model, const ReportPageOptions& options) {
  std::string out = fmt::format("<section id=\"findings\"><h2>Findings</h2>\n");
  if (page.diagnoses.empty()) out += "<p>none</p>\n";
  int graphs_left = options.max_finding_graphs;
  for (std::size_t i = 0; i < page.diagnoses.size(); ++i) {
    const Diagnosis& d = page.diagnoses[i];
    out += fmt::format(
        "<article class=\"finding {}\" id=\"finding-{}\"><h3><span class=\"severity\">{}</span> <code>{}</code>{}</h3>"
        "<p class=\"message\">{}</p><dl>{}{}{}</dl>{}</article>\n",
        ToString(d.severity), i + 1, ToString(d.severity), EscapeHtml(d.code), d.heuristic ? " (heuristic)" : "",
        EscapeHtml(d.message), Field("where", d.location.Describe()), Field("cause", d.cause), Field("fix", d.fix),
        FindingGraph(d, model, options, graphs_left));
  }
  return out + "</section>\n";
}

std::string Tables(const ReportPage& page) {
  std::string out;
  for (const auto& table : page.tables) {
    out += fmt::format("<section class=\"figures\"><h2>{}</h2><table><thead><tr>", EscapeHtml(table.title));
    for (std::size_t c = 0; c < table.headers.size(); ++c) {
      const bool right = c < table.right.size() && table.right[c];
      out += fmt::format("<th{}>{}</th>", right ? " class=\"num\"" : "", EscapeHtml(table.headers[c]));
    }
    out += "</tr></thead><tbody>";
    for (const auto& row : table.rows) {
      out += "<tr>";
      for (std::size_t c = 0; c < row.size(); ++c) {
        const bool right = c < table.right.size() && table.right[c];
        out += fmt::format("<td{}>{}</td>", right ? " class=\"num\"" : "", EscapeHtml(row[c]));
      }
      out += "</tr>";
    }
    out += "</tbody></table></section>\n";
  }
  return out;
}

std::string Grid(const PageGrid& grid) {
  const std::size_t columns = std::max<std::size_t>(1, grid.column_labels.size());
  std::string out = fmt::format("<section id=\"sweep\"><h2>{}</h2><table class=\"grid\"><thead><tr><th>{}{}</th>",
                                EscapeHtml(grid.title), EscapeHtml(grid.row_axes),
                                grid.column_axis.empty() ? "" : " \\ " + EscapeHtml(grid.column_axis));
  for (const auto& label : grid.column_labels) out += fmt::format("<th>{}</th>", EscapeHtml(label));
  out += "</tr></thead><tbody>";
  std::string details;
  for (std::size_t r = 0; r < grid.row_labels.size(); ++r) {
    out += fmt::format("<tr><th>{}</th>", EscapeHtml(grid.row_labels[r]));
    for (std::size_t c = 0; c < columns; ++c) {
      const std::size_t i = r * columns + c;
      if (i >= grid.cells.size()) {
        out += "<td></td>";
        continue;
      }
      const auto& cell = grid.cells[i];
      const std::string id = fmt::format("cell-{}-{}", r, c);
      if (cell.detail.empty()) {
        out += fmt::format("<td class=\"{}\">{}</td>", EscapeHtml(cell.state), EscapeHtml(cell.text));
        continue;
      }
      out += fmt::format("<td class=\"{}\"><a href=\"#{}\" title=\"{}\">{}</a></td>", EscapeHtml(cell.state), id,
                         EscapeHtml(Shorten(cell.detail, 300)), EscapeHtml(cell.text));
      std::string where = grid.row_axes + " = " + grid.row_labels[r];
      if (!grid.column_axis.empty() && c < grid.column_labels.size())
        where += ", " + grid.column_axis + " = " + grid.column_labels[c];
      details += fmt::format("<li id=\"{}\"><b>{}</b>: {}</li>", id, EscapeHtml(where),
                             EscapeHtml(Shorten(cell.detail, 4000)));
    }
    out += "</tr>";
  }
  out += "</tbody></table>";
  if (!details.empty()) out += "<ol class=\"cell-details\">" + details + "</ol>";
  for (const auto& note : grid.notes) out += fmt::format("<p class=\"note\">{}</p>", EscapeHtml(note));
  return out + "</section>\n";
}

std::string ModelSection(const onnx::ModelProto* model, const std::string& note, const ReportPageOptions& options) {
  std::string out = "<section id=\"model\"><h2>Model</h2>\n";
  if (model == nullptr) return out + fmt::format("<p class=\"note\">{}</p></section>\n", EscapeHtml(note));
  const nlohmann::json outline = ModelOutline(model->graph(), options.outline);
  out += fmt::format(
      "<p>{} nodes, grouped by name scope; expand a scope to draw its nodes{}.</p>\n"
      "<input type=\"search\" id=\"search\" placeholder=\"find a node by name or operator\" autocomplete=\"off\">"
      "<ol id=\"search-results\"></ol>\n<div id=\"outline\"></div>\n"
      "<script type=\"application/json\" id=\"model-data\">{}</script>\n</section>\n",
      model->graph().node_size(),
      outline["listed"] < outline["total"] ? fmt::format(" (the first {} listed)", outline["listed"].get<int>()) : "",
      JsonForScript(outline));
  return out;
}

}  // namespace

std::string RenderReportPage(const ReportPage& page, const onnx::ModelProto* model, const std::string& model_note,
                             const ReportPageOptions& options) {
  std::string html = Head(page) + Header(page) + Findings(page, model, options);
  if (page.overlay && model != nullptr) {
    html += OverlaySection(model->graph(), *page.overlay);
    html += fmt::format("<script type=\"application/json\" id=\"overlay-data\">{}</script>\n",
                        JsonForScript(OverlayForScript(model->graph(), *page.overlay, options.outline.max_nodes)));
  }
  if (page.grid) html += Grid(*page.grid);
  html += Tables(page);
  html += fmt::format(
      "<section id=\"text-report\"><details><summary>The text report</summary><pre>{}</pre></details>"
      "</section>\n",
      EscapeHtml(page.text_report));
  html += ModelSection(model, model_note, options);
  html += fmt::format("<script>{}</script>\n</body></html>\n", PageScript());
  return html;
}

Status WriteReportPage(const ReportPage& page, const std::filesystem::path& out, const ReportPageOptions& options) {
  ModelLoad load = LoadModelFile(page.model_path);
  std::string note;
  if (load.model) {
    (void)RunShapeInference(*load.model->proto);  // its findings are the check's; here only the types matter
  } else {
    note = "the model could not be read" + (load.failure ? ": " + load.failure->message : std::string());
  }
  const std::string html = RenderReportPage(page, load.model ? load.model->proto.get() : nullptr, note, options);
  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  if (!file || !file.write(html.data(), static_cast<std::streamsize>(html.size())) || !file.flush())
    return MakeError(ErrorKind::kIo, fmt::format("{}: cannot write the report", out.string()));
  return OkStatus();
}

}  // namespace ortkit
