#include "fix_hint.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/fix/fix_passes.h"

namespace ortkit::cli {

std::string FixHint(const std::vector<Diagnosis>& diagnoses, const std::string& model_path) {
  std::vector<std::string> codes;
  for (const auto& d : diagnoses) {
    // Only what a pass repairs on its own: a move to another opset needs the release named.
    if (FindFixPassForCode(d.code) == nullptr || std::find(codes.begin(), codes.end(), d.code) != codes.end()) continue;
    codes.push_back(d.code);
  }
  if (codes.empty()) return {};
  return fmt::format(
      "`ortkit fix {} --out fixed.onnx` can repair {} (each fix proven by running it before anything is "
      "written; see docs/commands/fix.md)",
      model_path.empty() ? "MODEL" : model_path, fmt::join(codes, ", "));
}

}  // namespace ortkit::cli
