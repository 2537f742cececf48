#include "ortkit/tensor/test_case.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "ortkit/core/files.h"
#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/npz.h"
#include "ortkit/tensor/tensor_proto.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "x2" < "x10": runs of digits compare as numbers, everything else byte by byte.
bool NaturalLess(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      const std::size_t a_start = i;
      const std::size_t b_start = j;
      while (i < a.size() && IsDigit(a[i])) ++i;
      while (j < b.size() && IsDigit(b[j])) ++j;
      std::string_view x = a.substr(a_start, i - a_start);
      std::string_view y = b.substr(b_start, j - b_start);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

// K from "input_K.pb" given prefix "input_" and suffix ".pb".
std::optional<int> NumberIn(std::string_view file, std::string_view prefix, std::string_view suffix) {
  if (!file.starts_with(prefix) || !file.ends_with(suffix) || file.size() <= prefix.size() + suffix.size())
    return std::nullopt;
  const std::string_view digits = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
  if (digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), IsDigit)) return std::nullopt;
  return std::stoi(std::string(digits));
}

Result<std::vector<fs::directory_entry>> ListFolder(const fs::path& folder) {
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(*it);
  if (ec)
    return MakeError(ErrorKind::kIo, fmt::format("{}: cannot list the folder: {}", folder.string(), ec.message()));
  std::sort(entries.begin(), entries.end(), [](const fs::directory_entry& x, const fs::directory_entry& y) {
    return NaturalLess(x.path().filename().string(), y.path().filename().string());
  });
  return entries;
}

Status RequireFolder(const fs::path& folder) {
  std::error_code ec;
  const auto status = fs::status(folder, ec);
  if (!fs::exists(status)) return MakeError(ErrorKind::kNotFound, fmt::format("{}: no such folder", folder.string()));
  if (!fs::is_directory(status))
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: is a file, not a folder", folder.string()));
  return OkStatus();
}

bool IsFile(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_regular_file(ec);
}

bool IsFolder(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_directory(ec);
}

// input_K.pb files of `entries` by K, checked to run 0, 1, 2, ... without gaps or duplicates.
Result<std::vector<fs::path>> NumberedFiles(const fs::path& folder, const std::vector<fs::directory_entry>& entries,
                                            std::string_view prefix) {
  std::map<int, fs::path> by_number;
  for (const auto& entry : entries) {
    const std::string file = entry.path().filename().string();
    const auto k = NumberIn(file, prefix, ".pb");
    if (!k || !IsFile(entry)) continue;
    auto [it, inserted] = by_number.emplace(*k, entry.path());
    if (!inserted) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: both {} and {} claim position {}", folder.string(),
                                                                it->second.filename().string(), file, *k));
    }
  }
  std::vector<fs::path> files;
  for (const auto& [k, path] : by_number) {
    if (k != static_cast<int>(files.size())) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{}: has {} but no {}{}.pb: positions must run 0, 1, 2, ...", folder.string(),
                                   path.filename().string(), prefix, files.size()));
    }
    files.push_back(path);
  }
  return files;
}

Status ReadNumbered(const std::vector<fs::path>& files, std::string_view prefix, std::vector<NamedTensor>& tensors,
                    std::vector<bool>& name_given) {
  for (std::size_t k = 0; k < files.size(); ++k) {
    ORTKIT_ASSIGN_OR_RETURN(NamedTensor tensor, ReadTensorProto(files[k]));
    name_given.push_back(!tensor.name.empty());
    if (tensor.name.empty()) tensor.name = fmt::format("{}{}", prefix, k);
    tensors.push_back(std::move(tensor));
  }
  return OkStatus();
}

enum class FileKind { kNpy, kNpz, kPb, kUnknown };

FileKind KindOf(const fs::path& path) {
  const std::string extension = path.extension().string();
  if (extension == ".npy") return FileKind::kNpy;
  if (extension == ".npz") return FileKind::kNpz;
  if (extension == ".pb") return FileKind::kPb;
  // Unknown extension: the first bytes decide.
  std::ifstream in(path, std::ios::binary);
  char head[6] = {};
  in.read(head, sizeof head);
  const std::string_view start(head, static_cast<std::size_t>(in.gcount()));
  if (start == std::string_view("\x93NUMPY", 6)) return FileKind::kNpy;
  if (start.starts_with(std::string_view("PK\x03\x04", 4))) return FileKind::kNpz;
  return FileKind::kUnknown;
}

Result<NamedTensor> ReadPbNamedByStem(const fs::path& path) {
  ORTKIT_ASSIGN_OR_RETURN(NamedTensor tensor, ReadTensorProto(path));
  if (tensor.name.empty()) tensor.name = path.stem().string();
  return tensor;
}

}  // namespace

Result<TestDataSet> ReadTestDataSet(const fs::path& folder) {
  ORTKIT_RETURN_IF_ERROR(RequireFolder(folder));
  ORTKIT_ASSIGN_OR_RETURN(auto entries, ListFolder(folder));
  ORTKIT_ASSIGN_OR_RETURN(auto input_files, NumberedFiles(folder, entries, "input_"));
  ORTKIT_ASSIGN_OR_RETURN(auto output_files, NumberedFiles(folder, entries, "output_"));
  if (input_files.empty() && output_files.empty()) {
    return MakeError(ErrorKind::kNotFound,
                     fmt::format("{}: holds no input_K.pb or output_K.pb files", folder.string()));
  }
  TestDataSet data_set;
  data_set.folder = folder;
  ORTKIT_RETURN_IF_ERROR(ReadNumbered(input_files, "input_", data_set.inputs, data_set.input_name_given));
  ORTKIT_RETURN_IF_ERROR(ReadNumbered(output_files, "output_", data_set.outputs, data_set.output_name_given));
  return data_set;
}

Result<TestCase> ReadTestCase(const fs::path& folder) {
  ORTKIT_RETURN_IF_ERROR(RequireFolder(folder));
  TestCase test_case;
  test_case.folder = folder;
  test_case.model = folder / "model.onnx";
  std::error_code ec;
  if (!fs::is_regular_file(test_case.model, ec)) {
    return MakeError(ErrorKind::kNotFound, fmt::format("{}: no model.onnx; a test case folder holds model.onnx and "
                                                       "test_data_set_N folders",
                                                       folder.string()));
  }
  ORTKIT_ASSIGN_OR_RETURN(auto entries, ListFolder(folder));
  for (const auto& entry : entries) {
    if (!IsFolder(entry) || !NumberIn(entry.path().filename().string(), "test_data_set_", "")) continue;
    ORTKIT_ASSIGN_OR_RETURN(TestDataSet data_set, ReadTestDataSet(entry.path()));
    test_case.data_sets.push_back(std::move(data_set));
  }
  if (test_case.data_sets.empty()) {
    return MakeError(ErrorKind::kNotFound,
                     fmt::format("{}: has model.onnx but no test_data_set_N folders", folder.string()));
  }
  return test_case;
}

Status WriteTestDataSet(const fs::path& folder, std::span<const NamedTensor> inputs,
                        std::span<const NamedTensor> outputs) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    return MakeError(ErrorKind::kIo, fmt::format("{}: cannot create the folder: {}", folder.string(), ec.message()));
  for (auto [tensors, prefix] : {std::pair{inputs, "input_"}, std::pair{outputs, "output_"}}) {
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      ORTKIT_RETURN_IF_ERROR(
          WriteTensorProto(folder / fmt::format("{}{}.pb", prefix, k), tensors[k].tensor, tensors[k].name));
    }
  }
  return OkStatus();
}

Result<std::vector<NamedTensor>> ReadTensorFolder(const fs::path& folder, const HeaderCheck& check) {
  ORTKIT_RETURN_IF_ERROR(RequireFolder(folder));
  ORTKIT_ASSIGN_OR_RETURN(auto entries, ListFolder(folder));
  std::vector<NamedTensor> tensors;
  for (const auto& entry : entries) {
    if (!IsFile(entry) || entry.path().extension() != ".npy") continue;
    ORTKIT_ASSIGN_OR_RETURN(Tensor tensor, ReadNpy(entry.path(), check));
    tensors.push_back(NamedTensor{entry.path().stem().string(), std::move(tensor)});
  }
  if (tensors.empty()) return MakeError(ErrorKind::kNotFound, fmt::format("{}: holds no .npy files", folder.string()));
  return tensors;
}

namespace {

// ReadTensors before its check of .pb tensors.
Result<std::vector<NamedTensor>> ReadTensorsUnchecked(const fs::path& path, const HeaderCheck& check) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status))
    return MakeError(ErrorKind::kNotFound, fmt::format("{}: no such file or folder", path.string()));
  std::vector<NamedTensor> tensors;
  if (!fs::is_directory(status)) {
    ORTKIT_RETURN_IF_ERROR(RegularFileSize(path, "a tensor file (.npy, .npz or .pb)"));
    switch (KindOf(path)) {
      case FileKind::kNpy: {
        ORTKIT_ASSIGN_OR_RETURN(Tensor tensor, ReadNpy(path, check));
        tensors.push_back(NamedTensor{path.stem().string(), std::move(tensor)});
        return tensors;
      }
      case FileKind::kNpz: return ReadNpz(path, check);
      case FileKind::kPb: {
        ORTKIT_ASSIGN_OR_RETURN(NamedTensor tensor, ReadPbNamedByStem(path));
        tensors.push_back(std::move(tensor));
        return tensors;
      }
      case FileKind::kUnknown: break;
    }
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: neither its extension nor its first bytes say .npy, .npz or .pb, the tensor files "
                    "ortkit reads",
                    path.string()));
  }
  ORTKIT_ASSIGN_OR_RETURN(auto entries, ListFolder(path));
  std::vector<fs::path> npy;
  std::vector<fs::path> pb;
  for (const auto& entry : entries) {
    if (!IsFile(entry)) continue;
    if (entry.path().extension() == ".npy") npy.push_back(entry.path());
    if (entry.path().extension() == ".pb") pb.push_back(entry.path());
  }
  if (!npy.empty() && !pb.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: mixes {} .npy and {} .pb files; keep one kind of tensor file per folder",
                                 path.string(), npy.size(), pb.size()));
  }
  if (!npy.empty()) return ReadTensorFolder(path, check);
  if (pb.empty()) return MakeError(ErrorKind::kNotFound, fmt::format("{}: holds no .npy or .pb files", path.string()));
  ORTKIT_ASSIGN_OR_RETURN(auto inputs, NumberedFiles(path, entries, "input_"));
  if (!inputs.empty()) {
    std::vector<bool> name_given;
    ORTKIT_RETURN_IF_ERROR(ReadNumbered(inputs, "input_", tensors, name_given));
    return tensors;
  }
  for (const fs::path& file : pb) {
    ORTKIT_ASSIGN_OR_RETURN(NamedTensor tensor, ReadPbNamedByStem(file));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

}  // namespace

Result<std::vector<NamedTensor>> ReadTensors(const fs::path& path, const HeaderCheck& check) {
  ORTKIT_ASSIGN_OR_RETURN(auto tensors, ReadTensorsUnchecked(path, check));
  if (!check) return tensors;
  // .npy and .npz were checked from their headers; .pb files are checked here, after reading.
  for (const auto& t : tensors) ORTKIT_RETURN_IF_ERROR(check(t.name, t.tensor.type(), t.tensor.shape()));
  return tensors;
}

}  // namespace ortkit
