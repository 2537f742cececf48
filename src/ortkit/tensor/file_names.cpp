#include "ortkit/tensor/file_names.h"

#include <functional>
#include <set>

#include <fmt/format.h>

namespace ortkit {
namespace {

/// File systems take 255 bytes a name; a stem keeps well below it, room left for "_N" and the extension.
constexpr std::size_t kMostStem = 120;

std::string BoundedStem(std::string_view name) {
  std::string stem = ReferenceFileStem(name);
  if (stem.empty() || stem.front() == '.') stem.insert(0, "_");
  if (stem.size() > kMostStem) {
    stem = fmt::format("{}_{:016x}", stem.substr(0, kMostStem - 17), std::hash<std::string_view>{}(name));
  }
  return stem;
}

}  // namespace

std::string ReferenceFileStem(std::string_view value_name) {
  std::string stem(value_name);
  for (char& c : stem) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (!keep) c = '_';
  }
  return stem;
}

std::vector<std::string> TensorFileNames(std::span<const std::string> names, std::string_view extension) {
  std::set<std::string> used;
  std::vector<std::string> files;
  files.reserve(names.size());
  for (const auto& name : names) {
    const std::string stem = BoundedStem(name);
    std::string file = fmt::format("{}{}", stem, extension);
    for (int k = 2; !used.insert(file).second; ++k) file = fmt::format("{}_{}{}", stem, k, extension);
    files.push_back(std::move(file));
  }
  return files;
}

}  // namespace ortkit
