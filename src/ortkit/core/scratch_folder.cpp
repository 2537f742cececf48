#include "ortkit/core/scratch_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace ortkit {

Result<ScratchFolder> ScratchFolder::Create(std::string_view purpose) {
  std::error_code ec;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  if (ec) {
    return MakeError(ErrorKind::kIo,
                     fmt::format("no temporary folder ({}): set TMPDIR to a writable folder", ec.message()));
  }
  std::string pattern = (temp / fmt::format("ortkit-{}-XXXXXX", purpose)).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return MakeError(ErrorKind::kIo, fmt::format("creating the temporary folder '{}' failed ({}): set TMPDIR to a "
                                                 "writable folder",
                                                 pattern, std::strerror(errno)));
  }
  return ScratchFolder(pattern);
}

ScratchFolder::ScratchFolder(ScratchFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

}  // namespace ortkit
