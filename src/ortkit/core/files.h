#pragma once
// Files the user names: only regular files are read. A named pipe would block the reader forever,
// a device such as /dev/zero has no size and never ends, a socket cannot be opened at all.

#include <cstdint>
#include <filesystem>
#include <initializer_list>
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

/// Whether a command may write the file `path`: it must be missing or a regular file (a folder, a
/// named pipe, a device or a socket is refused, naming it: writing to a pipe blocks until someone
/// reads, a device swallows the file, and the files written beside it, PATH.data or PATH_inputs/,
/// would land next to the device), and none of `inputs`, the files the command reads. `flag` names
/// it in the message ("--out /dev/null: is a character device, not a file ortkit can write").
Status CheckOutputFile(const std::filesystem::path& path, std::string_view flag,
                       std::initializer_list<std::filesystem::path> inputs = {});

/// Whether a command may write into the folder `path`: missing (it is created) or a folder.
Status CheckOutputFolder(const std::filesystem::path& path, std::string_view flag);

}  // namespace ortkit
