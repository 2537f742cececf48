#include "ortkit/env/shared_libraries.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

namespace ortkit {
namespace {

template <typename T>
bool ReadAt(std::string_view bytes, std::uint64_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

Error NotElf(std::string what) {
  return MakeError(ErrorKind::kInvalidArgument, "not a 64-bit little-endian ELF shared library: " + std::move(what));
}

// The file offset of the segment holding virtual address `address` (DT_STRTAB is an address).
std::optional<std::uint64_t> OffsetOfAddress(std::string_view bytes, const Elf64_Ehdr& header, std::uint64_t address) {
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (!ReadAt(bytes, header.e_phoff + std::uint64_t{header.e_phentsize} * i, &segment)) return std::nullopt;
    if (segment.p_type == PT_LOAD && address >= segment.p_vaddr && address - segment.p_vaddr < segment.p_filesz) {
      return segment.p_offset + (address - segment.p_vaddr);
    }
  }
  return std::nullopt;
}

std::optional<std::string> StringAt(std::string_view bytes, std::uint64_t offset) {
  if (offset >= bytes.size()) return std::nullopt;
  const auto end = bytes.find('\0', offset);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(bytes.substr(offset, end - offset));
}

void* Open(const std::string& file) { return dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL); }

std::string OpenedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

Result<std::vector<std::string>> ParseNeededLibraries(std::string_view bytes) {
  Elf64_Ehdr header;
  if (!ReadAt(bytes, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return NotElf("no ELF header");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return NotElf("32-bit or big-endian");
  }
  if (header.e_phentsize != sizeof(Elf64_Phdr)) return NotElf("unexpected program header size");
  std::optional<Elf64_Phdr> dynamic;
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (!ReadAt(bytes, header.e_phoff + std::uint64_t{header.e_phentsize} * i, &segment)) {
      return NotElf("program headers past the end of the file");
    }
    if (segment.p_type == PT_DYNAMIC) dynamic = segment;
  }
  if (!dynamic) return std::vector<std::string>{};  // statically linked: needs nothing
  std::vector<std::uint64_t> needed;
  std::optional<std::uint64_t> strtab;
  for (std::uint64_t at = dynamic->p_offset; at < dynamic->p_offset + dynamic->p_filesz; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn entry;
    if (!ReadAt(bytes, at, &entry)) return NotElf("dynamic section past the end of the file");
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_NEEDED) needed.push_back(entry.d_un.d_val);
    if (entry.d_tag == DT_STRTAB) strtab = entry.d_un.d_ptr;
  }
  if (needed.empty()) return std::vector<std::string>{};
  const auto table = strtab ? OffsetOfAddress(bytes, header, *strtab) : std::nullopt;
  if (!table || *table >= bytes.size()) return NotElf("the string table is in no loaded segment");
  std::vector<std::string> names;
  for (auto offset : needed) {
    auto name = offset <= bytes.size() - *table ? StringAt(bytes, *table + offset) : std::nullopt;
    if (!name) return NotElf("a needed library's name is outside the file");
    names.push_back(std::move(*name));
  }
  return names;
}

Result<std::vector<std::string>> ReadNeededLibraries(const std::filesystem::path& library) {
  std::ifstream in(library, std::ios::binary);
  if (!in) return MakeError(ErrorKind::kIo, fmt::format("cannot read '{}'", library.string()));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  auto names = ParseNeededLibraries(bytes.str());
  if (!names.ok())
    return MakeError(names.error().kind, fmt::format("'{}': {}", library.string(), names.error().message));
  return names;
}

LibraryProbe ProbeLibrary(const std::string& soname, const std::vector<std::filesystem::path>& folders) {
  LibraryProbe probe;
  probe.soname = soname;
  for (const auto& folder : folders) {
    const auto file = folder / soname;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;
    if (void* handle = Open(file.string())) {
      probe.path = OpenedPath(handle, file.string());
      probe.where = folder.string();
      dlclose(handle);
      return probe;
    }
    probe.error = dlerror();
  }
  if (void* handle = Open(soname)) {
    probe.path = OpenedPath(handle, soname);
    probe.where = "the dynamic loader's search path";
    dlclose(handle);
    return probe;
  }
  const char* error = dlerror();
  if (probe.error.empty() && error != nullptr) probe.error = error;
  return probe;
}

DriverInfo ProbeDriver() {
  DriverInfo info;
  if (std::ifstream version("/proc/driver/nvidia/version"); version) {
    std::string line;
    std::getline(version, line);
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..."
    if (auto at = line.find("Kernel Module"); at != std::string::npos) {
      std::istringstream words(line.substr(at + 13));
      words >> info.version;
    }
  }
  void* cuda = Open("libcuda.so.1");
  if (cuda == nullptr) {
    info.error = "libcuda.so.1 (the driver's CUDA library) cannot be loaded: " + std::string(dlerror());
    return info;
  }
  using IntCall = int (*)(int*);
  using InitCall = int (*)(unsigned);
  auto driver_version = reinterpret_cast<IntCall>(dlsym(cuda, "cuDriverGetVersion"));
  auto init = reinterpret_cast<InitCall>(dlsym(cuda, "cuInit"));
  auto count = reinterpret_cast<IntCall>(dlsym(cuda, "cuDeviceGetCount"));
  if (driver_version != nullptr) driver_version(&info.cuda_version);
  if (init != nullptr && count != nullptr) {
    if (const int status = init(0); status != 0) {
      info.error = fmt::format("cuInit failed with CUDA error {}{}", status,
                               status == 100 ? " (no CUDA-capable device is detected)" : "");
      info.devices = status == 100 ? 0 : -1;
    } else if (count(&info.devices) != 0) {
      info.devices = -1;
    }
  }
  dlclose(cuda);
  return info;
}

std::string LibraryVersion(const LibraryProbe& probe) {
  if (!probe.found()) return "";
  void* handle = Open(probe.path);
  if (handle == nullptr) return "";
  std::string version;
  if (auto runtime = reinterpret_cast<int (*)(int*)>(dlsym(handle, "cudaRuntimeGetVersion"))) {
    int v = 0;
    if (runtime(&v) == 0) version = fmt::format("{}.{}", v / 1000, v % 1000 / 10);
  } else if (auto cudnn = reinterpret_cast<std::size_t (*)()>(dlsym(handle, "cudnnGetVersion"))) {
    const std::size_t v = cudnn();  // 90102 = 9.1.2 from cuDNN 9 on; 8907 = 8.9.7 before
    version = v >= 90000 ? fmt::format("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100)
                         : fmt::format("{}.{}.{}", v / 1000, v % 1000 / 100, v % 100);
  }
  dlclose(handle);
  return version;
}

}  // namespace ortkit
