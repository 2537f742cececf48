#pragma once
// The report page's own style sheet and script, inlined into every page (report_page.h): no file beside it,
// nothing fetched.

#include <string_view>

namespace ortkit {

/// The style sheet.
std::string_view PageStyle();

/// A hidden <svg> holding what every drawing refers to (the arrowhead, #ortkit-arrow).
std::string_view PageSvgDefinitions();

/// The script: builds the model outline from the page's JSON (#model-data) as scopes are expanded, draws a
/// chunk's nodes only when it is opened, and answers the search box. It writes text with textContent only,
/// never as markup.
std::string_view PageScript();

}  // namespace ortkit
