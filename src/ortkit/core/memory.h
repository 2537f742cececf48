#pragma once
// The memory this process may use: what memory-sized defaults are derived from. In a container
// the machine's memory says little; the cgroup's limit (docker --memory, a Kubernetes memory
// limit) is what the kernel holds it to.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ortkit {

struct MemoryBudget {
  std::uint64_t bytes = 0;                    ///< what to size by: the smaller of the two below
  std::uint64_t machine = 0;                  ///< the machine's (MemTotal)
  std::optional<std::uint64_t> cgroup_limit;  ///< none: unlimited or unknown

  /// "23.4 GiB", or "2.0 GiB (the cgroup's memory limit; 23.4 GiB in the machine)".
  std::string Describe() const;
};

/// The budget for a machine of `machine` bytes under `cgroup_limit`.
MemoryBudget BudgetOfMemory(std::uint64_t machine, std::optional<std::uint64_t> cgroup_limit);

/// This machine's memory and this process's cgroup memory limit.
MemoryBudget UsableMemory();

/// This process's resident memory: now (VmRSS) and its peak (VmHWM) since it started or since the last
/// ResetPeakMemory(). Zeros where /proc cannot be read.
struct ResidentMemory {
  std::uint64_t now = 0;
  std::uint64_t peak = 0;
};
ResidentMemory ReadResidentMemory();

/// Starts a new peak at what is resident now (writes 5 to /proc/self/clear_refs), so that the peak
/// of one piece of work can be read after it. False where the kernel refuses: the peak then runs on.
bool ResetPeakMemory();

/// The memory limit of the cgroup that `proc_self_cgroup` (the text of /proc/self/cgroup) names,
/// read under `root` (/sys/fs/cgroup): cgroup v2's memory.max or v1's memory.limit_in_bytes, the
/// smallest along the path up to the root. None when no level sets one ("max", or v1's
/// page-rounded INT64_MAX) or nothing can be read.
std::optional<std::uint64_t> CgroupMemoryLimit(std::string_view proc_self_cgroup, const std::filesystem::path& root);

/// The MemTotal of `proc_meminfo` (the text of /proc/meminfo), in bytes; none when absent.
std::optional<std::uint64_t> MemTotalOf(std::string_view proc_meminfo);

}  // namespace ortkit
