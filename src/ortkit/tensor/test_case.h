#pragma once
// ONNX test cases and folders of tensors.
// A test case is the layout ONNX's own test data uses:
//   case/model.onnx
//   case/test_data_set_0/input_0.pb, input_1.pb, ..., output_0.pb, ...
//   case/test_data_set_1/...
// input_K.pb holds the model's K-th input; its TensorProto name, when set, is the input's name.

#include <filesystem>
#include <span>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// One test_data_set_N folder.
struct TestDataSet {
  std::filesystem::path folder;
  /// inputs[K] is input_K.pb, the model's K-th input; its name is the TensorProto's name, or
  /// "input_K" when the proto has none (then input_name_given[K] is false and the tensor must
  /// be matched to the model's inputs by position K).
  std::vector<NamedTensor> inputs;
  std::vector<bool> input_name_given;
  /// outputs[K] is output_K.pb, the expected value of the model's K-th output; named as inputs.
  std::vector<NamedTensor> outputs;
  std::vector<bool> output_name_given;
};

struct TestCase {
  std::filesystem::path folder;
  std::filesystem::path model;         ///< folder/model.onnx; not parsed here
  std::vector<TestDataSet> data_sets;  ///< by N: test_data_set_0, test_data_set_1, ... (10 after 9)
};

/// Reads a test case folder. Fails when model.onnx or every test_data_set_N is missing, when the
/// input_K/output_K numbering has a gap, and on the first .pb file that cannot be read (the
/// message names it).
Result<TestCase> ReadTestCase(const std::filesystem::path& folder);

/// Reads one test_data_set_N folder (as ReadTestCase does for each).
Result<TestDataSet> ReadTestDataSet(const std::filesystem::path& folder);

/// Writes `inputs` and `outputs` as folder/input_K.pb and folder/output_K.pb, each TensorProto
/// named after its NamedTensor, creating the folder. Existing files of those names are replaced.
Status WriteTestDataSet(const std::filesystem::path& folder, std::span<const NamedTensor> inputs,
                        std::span<const NamedTensor> outputs);

/// Reads every NAME.npy in `folder` as the tensor NAME, in natural order ("x2" before "x10").
/// Other files are ignored; a folder without .npy files is an error.
Result<std::vector<NamedTensor>> ReadTensorFolder(const std::filesystem::path& folder,
                                                  const HeaderCheck& check = nullptr);

/// Reads tensors from whatever `path` is:
///   NAME.npy             one tensor named NAME
///   x.npz                every member
///   x.pb                 one tensor, named by its TensorProto or else by the file's stem
///   a folder of .npy     as ReadTensorFolder
///   a folder of .pb      each file as above, in natural order; a test data set folder (holding
///                        input_K.pb files) gives its inputs only, in K order
/// A file with another extension is recognised by its first bytes (.npy magic, zip signature).
/// `check`, when given, sees each tensor's name, type and shape before its data is read (for .npy
/// and .npz; a .pb file, whose data is no larger than the file, right after it is read).
Result<std::vector<NamedTensor>> ReadTensors(const std::filesystem::path& path, const HeaderCheck& check = nullptr);

}  // namespace ortkit
