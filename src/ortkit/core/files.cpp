#include "ortkit/core/files.h"

#include <fmt/format.h>

namespace ortkit {

std::string_view DescribeFileType(const std::filesystem::file_status& status) {
  namespace fs = std::filesystem;
  switch (status.type()) {
    case fs::file_type::regular: return "a regular file";
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a named pipe (FIFO)";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    default: return "a special file";
  }
}

Result<std::uint64_t> RegularFileSize(const std::filesystem::path& path, std::string_view expected) {
  namespace fs = std::filesystem;
  const std::string name = path.string();
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) return MakeError(ErrorKind::kNotFound, fmt::format("{}: no such file", name));
  if (fs::is_directory(status)) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: is a folder, not {}", name, expected));
  }
  if (!fs::is_regular_file(status)) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: is {}, not {}: ortkit reads regular files only",
                                                              name, DescribeFileType(status), expected));
  }
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("{}: cannot read its size: {}", name, ec.message()));
  return size;
}

Status CheckOutputFile(const std::filesystem::path& path, std::string_view flag,
                       std::initializer_list<std::filesystem::path> inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{} {}: is {}, not a file ortkit can write; name a file",
                                                              flag, path.string(), DescribeFileType(status)));
  }
  if (!fs::exists(status)) return OkStatus();
  for (const fs::path& input : inputs) {
    if (!input.empty() && fs::equivalent(input, path, ec)) {
      return MakeError(
          ErrorKind::kInvalidArgument,
          fmt::format("{} {}: is {}, which this command reads; write elsewhere", flag, path.string(), input.string()));
    }
  }
  return OkStatus();
}

Status CheckOutputFolder(const std::filesystem::path& path, std::string_view flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_directory(status)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{} {}: is {}, not a folder", flag, path.string(), DescribeFileType(status)));
  }
  return OkStatus();
}

}  // namespace ortkit
