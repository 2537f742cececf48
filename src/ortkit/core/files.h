#pragma once
// Files the user names: only regular files are read. A named pipe would block the reader forever,
// a device such as /dev/zero has no size and never ends, a socket cannot be opened at all.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "ortkit/core/result.h"

namespace ortkit {

/// What `status` names, for a message: "a folder", "a named pipe (FIFO)", "a character device",
/// "a block device", "a socket", "a regular file", or "a special file".
std::string_view DescribeFileType(const std::filesystem::file_status& status);

/// The size of `path` when it is a regular file (symbolic links followed), found without opening
/// it. Errors: kNotFound "PATH: no such file"; kInvalidArgument "PATH: is a folder, not EXPECTED"
/// (and likewise for pipes, devices and sockets); kIo when the size cannot be read. `expected`
/// completes the sentence: "an .npy file", "a model".
Result<std::uint64_t> RegularFileSize(const std::filesystem::path& path, std::string_view expected);

}  // namespace ortkit
