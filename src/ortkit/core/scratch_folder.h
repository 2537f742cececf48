#pragma once
// A fresh folder of ortkit's own under the system's temporary folder ($TMPDIR, else /tmp), removed with
// everything in it when the object goes: for profiler traces, probe models and a check command's files.

#include <filesystem>
#include <string_view>

#include "ortkit/core/result.h"

namespace ortkit {

class ScratchFolder {
 public:
  /// Creates "ortkit-PURPOSE-XXXXXX" there. kIo, ending with the fix (set TMPDIR to a writable folder),
  /// when the temporary folder is unknown or not writable.
  static Result<ScratchFolder> Create(std::string_view purpose);

  ScratchFolder(ScratchFolder&& other) noexcept;
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ScratchFolder& operator=(ScratchFolder&&) = delete;
  ~ScratchFolder();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ScratchFolder(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace ortkit
