#pragma once
// --report FILE.html, shared by the commands that write the HTML report page (ortkit/report/report_page.h).

#include <filesystem>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ortkit/core/result.h"
#include "ortkit/report/report_page.h"

namespace ortkit::cli {

/// Registers --report on `cmd`, read into `path` (empty: no page).
void AddReportPageFlag(CLI::App* cmd, std::filesystem::path& path);

/// Whether the page may be written to `path` (CheckOutputFile, the model being `model`): checked before the
/// command's work starts, so that a bad path fails at once. OK when `path` is empty.
Status CheckReportPagePath(const std::filesystem::path& path, const std::filesystem::path& model);

/// Writes `page` to `path` when it is set.
Status WriteReportPageIfAsked(const std::filesystem::path& path, const ReportPage& page);

}  // namespace ortkit::cli
