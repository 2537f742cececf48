// ortkit_fuzz_replay PATH...: runs the fuzz body over every file under the given files or folders,
// without libFuzzer, so the seed corpus and the crash reproducers run in the ordinary test suite
// (test fuzz.replay_corpus). A crash names the file on the line before it.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model_fuzz_body.h"

namespace {

std::vector<std::filesystem::path> CollectFiles(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path root(argv[i]);
    if (std::filesystem::is_directory(root)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') files.push_back(entry.path());
      }
    } else {
      files.push_back(root);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  const auto files = CollectFiles(argc, argv);
  if (files.empty()) {
    std::fprintf(stderr, "no files to replay\n");
    return 1;
  }
  for (const auto& file : files) {
    std::fprintf(stderr, "replay %s\n", file.c_str());
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      ortkit::fuzz::RunModelFuzzBody(bytes);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FAILED: %s: an exception escaped: %s\n", file.c_str(), e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "replayed %zu files without a crash\n", files.size());
  return 0;
}
