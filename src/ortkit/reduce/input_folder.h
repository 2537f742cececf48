#pragma once
// A folder of a model's inputs, in the two layouts bug reports and other tools read: an ONNX test
// data set (test_data_set_0/input_K.pb) and one NAME.npy per input. The reproducer writes one beside
// the reduced model; a check command gets one per candidate.

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// NAME.npy file names for `inputs`, in order: names made safe for files and kept distinct.
std::vector<std::string> NpyFileNames(std::span<const NamedTensor> inputs);

/// Writes `inputs` into `folder` (created): test_data_set_0/input_K.pb and NAME.npy (NpyFileNames).
/// Returns the .npy paths, in input order. kIo naming the file on failure.
Result<std::vector<std::filesystem::path>> WriteInputFolder(const std::filesystem::path& folder,
                                                            std::span<const NamedTensor> inputs);

}  // namespace ortkit
