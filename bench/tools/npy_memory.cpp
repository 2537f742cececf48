// npy_memory: the memory cost of reading an .npy (bench/npy_memory.sh drives it).
//   npy_memory write PATH MIB   writes a float32 .npy of MIB mebibytes of data
//   npy_memory read PATH        reads it with ortkit::ReadNpy and prints peak resident memory
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ortkit/tensor/npy.h"

namespace {

double PeakResidentMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

int Write(const std::string& path, long mib) {
  const std::int64_t count = mib * 1024 * 1024 / 4;
  auto tensor = ortkit::Tensor::Allocate(ortkit::DataType::kFloat32, {count});
  if (!tensor.ok()) {
    std::fprintf(stderr, "%s\n", tensor.error().message.c_str());
    return 1;
  }
  auto values = tensor->values<float>();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000);
  const auto status = ortkit::WriteNpy(path, *tensor);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.error().message.c_str());
    return 1;
  }
  return 0;
}

int Read(const std::string& path) {
  const double before = PeakResidentMiB();
  auto tensor = ortkit::ReadNpy(path);
  if (!tensor.ok()) {
    std::fprintf(stderr, "%s\n", tensor.error().message.c_str());
    return 1;
  }
  const double peak = PeakResidentMiB();
  const double file = static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0);
  auto values = tensor->values<float>();
  const bool intact =
      values.size() > 1001 && values[1001] == 1.0f && values.back() == static_cast<float>((values.size() - 1) % 1000);
  std::printf("file           %.1f MiB\n", file);
  std::printf("resident       %.1f MiB before reading, %.1f MiB peak\n", before, peak);
  std::printf("peak / file    %.3f (%.3f counting only what the read added)\n", peak / file, (peak - before) / file);
  std::printf("data intact    %s\n", intact ? "yes" : "NO");
  return intact ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "write" && argc == 4) return Write(argv[2], std::strtol(argv[3], nullptr, 10));
  if (mode == "read" && argc == 3) return Read(argv[2]);
  std::fprintf(stderr, "usage: %s write PATH MIB | read PATH\n", argv[0]);
  return 2;
}
