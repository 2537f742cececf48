#pragma once
// The cgroup this process runs in, as /proc/self/cgroup names it, and the limits its controllers
// set: the smallest along the path up to the root. Levels that do not exist are skipped: a
// container without its own cgroup namespace sees the host's path but only its own cgroup.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ortkit {

/// One limit as a cgroup's folder sets it; none when the folder sets none (or it cannot be read).
using CgroupLimitReader = std::function<std::optional<double>(const std::filesystem::path& dir)>;

/// The smallest limit along the cgroup paths of `proc_self_cgroup` (the text of /proc/self/cgroup),
/// read under `root` (the cgroup file system, /sys/fs/cgroup): `read_v2` along the unified (v2)
/// hierarchy's, `read_v1` along that of the v1 hierarchy holding `v1_controller` (mounted at
/// root/CONTROLLERS, or at root/v1_controller). None when no level sets one.
std::optional<double> SmallestCgroupLimit(std::string_view proc_self_cgroup, const std::filesystem::path& root,
                                          std::string_view v1_controller, const CgroupLimitReader& read_v2,
                                          const CgroupLimitReader& read_v1);

/// The text of a small file (a /proc or /sys entry), or none when it cannot be read.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path);

/// `text`, trailing spaces and newlines left out, as a number; none when it is not one.
std::optional<double> ParseLimitNumber(std::string_view text);

}  // namespace ortkit
