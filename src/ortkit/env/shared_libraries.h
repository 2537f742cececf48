#pragma once
// What a shared library needs and whether the dynamic loader can give it: the CUDA libraries an
// ONNX Runtime GPU build links against, looked for the way the loader would look for them.

#include <filesystem>
#include <string>
#include <vector>

#include "ortkit/core/result.h"

namespace ortkit {

/// The DT_NEEDED entries of an ELF shared library ("libcudart.so.13", ...), in file order. Fails
/// with kIo for an unreadable file and kInvalidArgument for one that is not a 64-bit little-endian
/// ELF file or whose dynamic section points outside it; never reads past the file's end.
Result<std::vector<std::string>> ReadNeededLibraries(const std::filesystem::path& library);

/// The same from the bytes of a file (the fuzz target's entry point).
Result<std::vector<std::string>> ParseNeededLibraries(std::string_view bytes);

/// One library looked for by its soname.
struct LibraryProbe {
  std::string soname;  ///< "libcudart.so.13"
  std::string path;    ///< the file the loader opened; empty when not found
  std::string where;   ///< "LD_LIBRARY_PATH / ld.so.cache" or the folder it was found in
  std::string error;   ///< the loader's message when not found
  bool found() const { return !path.empty(); }
};

/// Looks for `soname` in each of `folders` first (the NVIDIA Python wheels' lib folders), then the
/// way the dynamic loader does (LD_LIBRARY_PATH, the ld.so cache, the default folders). The library
/// is loaded to find out, and unloaded again. Thread-safe.
LibraryProbe ProbeLibrary(const std::string& soname, const std::vector<std::filesystem::path>& folders = {});

/// The NVIDIA driver as far as this machine shows it.
struct DriverInfo {
  std::string version;   ///< "580.65.06" from /proc/driver/nvidia/version; empty without a kernel driver
  int cuda_version = 0;  ///< newest CUDA the driver's libcuda supports (13000 = 13.0); 0 when libcuda is missing
  int devices = -1;      ///< GPUs libcuda sees; -1 when it could not be asked
  std::string error;     ///< why devices is unknown (libcuda missing, cuInit's error code)
};
DriverInfo ProbeDriver();

/// The version a loaded CUDA runtime or cuDNN reports ("13.0", "9.10.2"); empty when the library
/// has no version call ortkit knows or is not found.
std::string LibraryVersion(const LibraryProbe& probe);

}  // namespace ortkit
