#include "ortkit/reduce/input_folder.h"

#include "ortkit/tensor/file_names.h"
#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/test_case.h"

namespace ortkit {

std::vector<std::string> NpyFileNames(std::span<const NamedTensor> inputs) {
  std::vector<std::string> names;
  for (const auto& in : inputs) names.push_back(in.name);
  return TensorFileNames(names, ".npy");
}

Result<std::vector<std::filesystem::path>> WriteInputFolder(const std::filesystem::path& folder,
                                                            std::span<const NamedTensor> inputs) {
  ORTKIT_RETURN_IF_ERROR(WriteTestDataSet(folder / "test_data_set_0", inputs, {}));
  std::vector<std::filesystem::path> written;
  const std::vector<std::string> names = NpyFileNames(inputs);
  for (std::size_t i = 0; i < names.size(); ++i) {
    written.push_back(folder / names[i]);
    ORTKIT_RETURN_IF_ERROR(WriteNpy(written.back(), inputs[i].tensor));
  }
  return written;
}

}  // namespace ortkit
