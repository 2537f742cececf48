#pragma once
// The cores this process may keep busy: what thread counts are sized to. In a container the
// machine's core count says little; the affinity mask (taskset, a cpuset) and the cgroup's CPU
// limit (docker --cpus, a Kubernetes CPU limit) say what the process actually gets.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ortkit {

struct CpuBudget {
  int cores = 1;                ///< what to size thread counts to: at least 1
  int affinity = 1;             ///< CPUs in the affinity mask
  std::optional<double> limit;  ///< the cgroup's CPU limit in CPUs; none: unlimited or unknown

  /// "4 cores", or "2 cores (the cgroup's CPU limit of 1.5 CPUs; 16 in the affinity mask)".
  std::string Describe() const;
};

/// The budget for `affinity` CPUs under `limit`: the limit rounded up (a thread per started CPU),
/// never more than the affinity mask and never less than 1.
CpuBudget BudgetOf(int affinity, std::optional<double> limit);

/// The calling thread's affinity mask and this process's cgroup CPU limit.
CpuBudget UsableCpus();

/// The CPU limit of the cgroup that `proc_self_cgroup` (the text of /proc/self/cgroup) names,
/// read under `root` (the cgroup file system, /sys/fs/cgroup): cgroup v2's cpu.max or v1's
/// cpu.cfs_quota_us / cpu.cfs_period_us, the smallest along the path up to the root. None when
/// no level sets one or nothing can be read.
std::optional<double> CgroupCpuLimit(std::string_view proc_self_cgroup, const std::filesystem::path& root);

}  // namespace ortkit
