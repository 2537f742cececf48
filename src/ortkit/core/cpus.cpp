#include "ortkit/core/cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace ortkit {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> ParseNumber(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A quota over a period, in CPUs; none for "no limit" or a value that makes no sense.
std::optional<double> Cpus(std::optional<double> quota, std::optional<double> period) {
  if (!quota || !period || !std::isfinite(*quota) || !std::isfinite(*period) || *quota <= 0 || *period <= 0) {
    return std::nullopt;
  }
  return *quota / *period;
}

// cgroup v2: cpu.max holds "QUOTA PERIOD" or "max PERIOD".
std::optional<double> ReadCpuMax(const fs::path& dir) {
  auto text = ReadSmallFile(dir / "cpu.max");
  if (!text) return std::nullopt;
  const std::string_view line(*text);
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return Cpus(ParseNumber(line.substr(0, space)), ParseNumber(line.substr(space + 1)));
}

// cgroup v1: cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us.
std::optional<double> ReadCfsQuota(const fs::path& dir) {
  auto quota = ReadSmallFile(dir / "cpu.cfs_quota_us");
  auto period = ReadSmallFile(dir / "cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  return Cpus(ParseNumber(*quota), ParseNumber(*period));
}

void KeepSmaller(std::optional<double>* smallest, std::optional<double> limit) {
  if (limit && (!*smallest || *limit < **smallest)) *smallest = limit;
}

// The smallest limit on the way from `base` down to `base`/`path`. Levels that do not exist are
// skipped: a container without its own cgroup namespace sees the host's path but only its own cgroup.
template <typename Read>
std::optional<double> SmallestAlong(const fs::path& base, std::string_view path, Read read) {
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

std::string CpuBudget::Describe() const {
  const std::string count = fmt::format("{} core{}", cores, cores == 1 ? "" : "s");
  if (!limit || *limit >= affinity) return count;
  return fmt::format("{} (the cgroup's CPU limit of {:g} CPUs; {} in the affinity mask)", count, *limit, affinity);
}

CpuBudget BudgetOf(int affinity, std::optional<double> limit) {
  CpuBudget budget;
  budget.affinity = std::max(1, affinity);
  budget.limit = limit;
  budget.cores = budget.affinity;
  // 1e-6: a limit a rounding error above a whole number (2.000001) is still that many CPUs.
  if (limit && *limit < budget.affinity) budget.cores = std::max(1, static_cast<int>(std::ceil(*limit - 1e-6)));
  return budget;
}

CpuBudget UsableCpus() {
  int affinity = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) affinity = CPU_COUNT(&set);
  const auto self = ReadSmallFile("/proc/self/cgroup");
  return BudgetOf(affinity, self ? CgroupCpuLimit(*self, "/sys/fs/cgroup") : std::nullopt);
}

std::optional<double> CgroupCpuLimit(std::string_view proc_self_cgroup, const fs::path& root) {
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
      KeepSmaller(&smallest, SmallestAlong(root, path, ReadCpuMax));  // the v2 unified hierarchy
      continue;
    }
    std::vector<std::string_view> names;
    for (std::size_t at = 0; at <= controllers.size();) {
      const std::size_t comma = std::min(controllers.find(',', at), controllers.size());
      names.push_back(controllers.substr(at, comma - at));
      at = comma + 1;
    }
    if (std::find(names.begin(), names.end(), "cpu") == names.end()) continue;
    // v1 mounts the cpu controller at cpu,cpuacct (with a cpu link) or at cpu alone.
    for (const fs::path& mount : {root / std::string(controllers), root / "cpu"}) {
      std::error_code ec;
      if (!fs::is_directory(mount, ec)) continue;
      KeepSmaller(&smallest, SmallestAlong(mount, path, ReadCfsQuota));
      break;
    }
  }
  return smallest;
}

}  // namespace ortkit
