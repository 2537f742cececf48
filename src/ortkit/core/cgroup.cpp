#include "ortkit/core/cgroup.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace ortkit {
namespace {

namespace fs = std::filesystem;

void KeepSmaller(std::optional<double>* smallest, std::optional<double> limit) {
  if (limit && (!*smallest || *limit < **smallest)) *smallest = limit;
}

// The smallest limit on the way from `base` down to `base`/`path`.
std::optional<double> SmallestAlong(const fs::path& base, std::string_view path, const CgroupLimitReader& read) {
  std::optional<double> smallest;
  fs::path dir = base;
  KeepSmaller(&smallest, read(dir));
  for (const fs::path& part : fs::path(path).relative_path()) {
    if (part.empty() || part == "." || part == "..") continue;
    dir /= part;
    KeepSmaller(&smallest, read(dir));
  }
  return smallest;
}

}  // namespace

std::optional<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> ParseLimitNumber(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> SmallestCgroupLimit(std::string_view proc_self_cgroup, const fs::path& root,
                                          std::string_view v1_controller, const CgroupLimitReader& read_v2,
                                          const CgroupLimitReader& read_v1) {
  std::optional<double> smallest;
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    // hierarchy-ID:controller-list:cgroup-path
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
    const std::string_view path = std::string_view(line).substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      KeepSmaller(&smallest, SmallestAlong(root, path, read_v2));  // the v2 unified hierarchy
      continue;
    }
    std::vector<std::string_view> names;
    for (std::size_t at = 0; at <= controllers.size();) {
      const std::size_t comma = std::min(controllers.find(',', at), controllers.size());
      names.push_back(controllers.substr(at, comma - at));
      at = comma + 1;
    }
    if (std::find(names.begin(), names.end(), v1_controller) == names.end()) continue;
    // v1 mounts a controller with others (cpu,cpuacct, with a cpu link) or alone.
    for (const fs::path& mount : {root / std::string(controllers), root / std::string(v1_controller)}) {
      std::error_code ec;
      if (!fs::is_directory(mount, ec)) continue;
      KeepSmaller(&smallest, SmallestAlong(mount, path, read_v1));
      break;
    }
  }
  return smallest;
}

}  // namespace ortkit
