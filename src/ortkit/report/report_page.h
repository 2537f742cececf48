#pragma once
// One self-contained HTML page for a command's report (`--report FILE.html`): the verdict, each finding with
// its code, message, cause and fix and, where it names a node, value or input, the graph around it drawn in
// inline SVG with that node highlighted; the command's text report whole; and the whole model grouped by
// name scope, collapsed, with a search box. Styles and script are inline and the page's content security
// policy forbids every fetch: it opens offline and from an attachment. It shows the facts the text report
// shows, never other ones.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/report/model_outline.h"
#include "ortkit/report/neighbourhood.h"
#include "ortkit/report/node_overlay.h"

namespace ortkit {

/// A table of the command's figures, as its text report prints it.
struct PageTable {
  std::string title;
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;  ///< which columns hold numbers (right-aligned)
};

/// The dynamic-shape sweep as a grid: one cell per combination of the swept sizes, rows over every axis but
/// the last, columns over the last.
struct PageGrid {
  std::string title;
  std::string row_axes;     ///< "batch", "batch × seq_len"
  std::string column_axis;  ///< "" with one axis: one row
  std::vector<std::string> row_labels;
  std::vector<std::string> column_labels;
  struct Cell {
    std::string state;   ///< "pass", "fail", "nan", "skipped"
    std::string text;    ///< what the cell shows ("3.1 ms", "FAIL")
    std::string detail;  ///< why it failed or was skipped, listed under the grid and linked from the cell
  };
  std::vector<Cell> cells;         ///< row-major; rows × columns of them
  std::vector<std::string> notes;  ///< sizes the model refuses (size limits), each a sentence
};

/// What a command reports, for the page.
struct ReportPage {
  std::string command;                          ///< "doctor", "check"
  std::string model_path;                       ///< the model examined; its graph is drawn
  std::string verdict;                          ///< as the text report says it: "broken", "FAIL"
  Severity verdict_severity = Severity::kInfo;  ///< its colour: info is good news
  std::vector<Diagnosis> diagnoses;             ///< most severe first
  std::string text_report;                      ///< the command's text report, without colour
  std::optional<NodeOverlay> overlay;           ///< a value per node, drawn over the graph
  std::vector<PageTable> tables;                ///< figures beside it (the profile's operator types)
  std::optional<PageGrid> grid;                 ///< the sweep
};

struct ReportPageOptions {
  NeighbourhoodOptions neighbourhood;
  int max_finding_graphs = 50;  ///< findings beyond this many get no graph (the page stays bounded)
  OutlineOptions outline;
};

/// The page for `page`, drawing `model` (shape-inferred, so that edges carry types); null: no graphs, and
/// `model_note` says why. The same arguments give the same bytes.
std::string RenderReportPage(const ReportPage& page, const onnx::ModelProto* model, const std::string& model_note = "",
                             const ReportPageOptions& options = {});

/// Reads page.model_path, runs shape inference on it (check/onnx_checker.h; a model the ONNX library cannot
/// judge keeps the types it declares) and writes RenderReportPage to `out`. A model that cannot be read gives
/// the page without graphs, saying why. Errors: kIo when `out` cannot be written. The caller checks `out`
/// with CheckOutputFile before its work starts, so that a bad path fails before a long run.
Status WriteReportPage(const ReportPage& page, const std::filesystem::path& out, const ReportPageOptions& options = {});

}  // namespace ortkit
