#include "ortkit/core/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ortkit/core/cgroup.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

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
  return Cpus(ParseLimitNumber(line.substr(0, space)), ParseLimitNumber(line.substr(space + 1)));
}

// cgroup v1: cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us.
std::optional<double> ReadCfsQuota(const fs::path& dir) {
  auto quota = ReadSmallFile(dir / "cpu.cfs_quota_us");
  auto period = ReadSmallFile(dir / "cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  return Cpus(ParseLimitNumber(*quota), ParseLimitNumber(*period));
}

}  // namespace

std::string CpuBudget::Describe() const {
  std::string count = fmt::format("{} core{}", cores, cores == 1 ? "" : "s");
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
  return SmallestCgroupLimit(proc_self_cgroup, root, "cpu", ReadCpuMax, ReadCfsQuota);
}

}  // namespace ortkit
