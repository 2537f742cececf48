#include "report_page_flag.h"

#include "ortkit/core/files.h"

namespace ortkit::cli {

void AddReportPageFlag(CLI::App* cmd, std::filesystem::path& path) {
  cmd->add_option("--report", path,
                  "also write the report as one self-contained HTML page (FILE.html): each finding with the graph "
                  "around the node it names, and the whole model by name scope; it opens offline");
}

Status CheckReportPagePath(const std::filesystem::path& path, const std::filesystem::path& model) {
  if (path.empty()) return OkStatus();
  return CheckOutputFile(path, "--report", {model});
}

Status WriteReportPageIfAsked(const std::filesystem::path& path, const ReportPage& page) {
  if (path.empty()) return OkStatus();
  return WriteReportPage(page, path);
}

}  // namespace ortkit::cli
