#include "ortkit/core/memory.h"

#include <sys/sysinfo.h>

#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "ortkit/core/cgroup.h"
#include "ortkit/core/units.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

// v1 says "no limit" with INT64_MAX rounded down to a page; anything from 2^62 up means none.
constexpr double kNoLimit = 4611686018427387904.0;

std::optional<double> Limit(std::optional<double> bytes) {
  if (!bytes || *bytes <= 0 || *bytes >= kNoLimit) return std::nullopt;
  return bytes;
}

// cgroup v2: memory.max holds a number of bytes or "max".
std::optional<double> ReadMemoryMax(const fs::path& dir) {
  auto text = ReadSmallFile(dir / "memory.max");
  return text ? Limit(ParseLimitNumber(*text)) : std::nullopt;
}

std::optional<double> ReadLimitInBytes(const fs::path& dir) {
  auto text = ReadSmallFile(dir / "memory.limit_in_bytes");
  return text ? Limit(ParseLimitNumber(*text)) : std::nullopt;
}

}  // namespace

std::string MemoryBudget::Describe() const {
  if (!cgroup_limit || *cgroup_limit >= machine) return HumanBytes(bytes);
  return fmt::format("{} (the cgroup's memory limit; {} in the machine)", HumanBytes(bytes), HumanBytes(machine));
}

MemoryBudget BudgetOfMemory(std::uint64_t machine, std::optional<std::uint64_t> cgroup_limit) {
  MemoryBudget budget;
  budget.machine = machine;
  budget.cgroup_limit = cgroup_limit;
  budget.bytes = cgroup_limit && (*cgroup_limit < machine || machine == 0) ? *cgroup_limit : machine;
  return budget;
}

std::optional<std::uint64_t> CgroupMemoryLimit(std::string_view proc_self_cgroup, const fs::path& root) {
  auto limit = SmallestCgroupLimit(proc_self_cgroup, root, "memory", ReadMemoryMax, ReadLimitInBytes);
  if (!limit) return std::nullopt;
  return static_cast<std::uint64_t>(*limit);
}

std::optional<std::uint64_t> MemTotalOf(std::string_view proc_meminfo) {
  constexpr std::string_view kKey = "MemTotal:";
  const std::size_t at = proc_meminfo.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = proc_meminfo.substr(at + kKey.size());
  rest = rest.substr(0, rest.find('\n'));
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.ends_with(" kB")) rest.remove_suffix(3);
  auto kib = ParseLimitNumber(rest);
  if (!kib || *kib <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(*kib) * 1024;
}

MemoryBudget UsableMemory() {
  std::uint64_t machine = 0;
  if (auto meminfo = ReadSmallFile("/proc/meminfo")) machine = MemTotalOf(*meminfo).value_or(0);
  if (machine == 0) {
    struct sysinfo info {};
    if (sysinfo(&info) == 0) machine = static_cast<std::uint64_t>(info.totalram) * info.mem_unit;
  }
  const auto self = ReadSmallFile("/proc/self/cgroup");
  return BudgetOfMemory(machine, self ? CgroupMemoryLimit(*self, "/sys/fs/cgroup") : std::nullopt);
}

ResidentMemory ReadResidentMemory() {
  ResidentMemory memory;
  const auto status = ReadSmallFile("/proc/self/status");
  if (!status) return memory;
  auto kilobytes = [&](std::string_view field) -> std::uint64_t {
    const std::size_t at = status->find(field);
    if (at == std::string::npos) return 0;
    std::size_t i = at + field.size();
    while (i < status->size() && ((*status)[i] == ' ' || (*status)[i] == '\t')) ++i;
    std::uint64_t value = 0;
    std::from_chars(status->data() + i, status->data() + status->size(), value);
    return value * 1024;
  };
  memory.now = kilobytes("VmRSS:");
  memory.peak = kilobytes("VmHWM:");
  return memory;
}

bool ResetPeakMemory() {
  std::FILE* file = std::fopen("/proc/self/clear_refs", "w");
  if (file == nullptr) return false;
  const bool written = std::fputs("5", file) >= 0;
  return std::fclose(file) == 0 && written;
}

}  // namespace ortkit
