#pragma once
// References: inputs and expected outputs recorded by the framework (an ONNX test-case folder,
// one test_data_set_N folder, an .npz, or a folder of NAME.npy files), matched to a model's
// inputs and outputs, and the validation of a session against them.

#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/comparison.h"

namespace ortkit {

/// One set of inputs with the outputs the framework produced for them.
struct ReferenceCase {
  std::string label;  ///< "test_data_set_0", "reference.npz"
  std::vector<NamedTensor> inputs;
  std::vector<NamedTensor> expected;
};

/// Reads `path` and assigns each tensor to a model input or output: by name, or by position for
/// test-case files without names (input_K / output_K). A tensor that matches neither, a missing
/// input, or a reference with no expected outputs is an error naming the tensor and listing the
/// model's names. A uint16 tensor for a bfloat16 input or output is read as bfloat16 bit patterns
/// (how numpy-based tools, ONNX's test data among them, store bfloat16).
Result<std::vector<ReferenceCase>> ReadReference(const std::filesystem::path& path,
                                                 const std::vector<TensorSpec>& inputs,
                                                 const std::vector<TensorSpec>& outputs);

struct CaseResult {
  std::string label;
  bool ran = false;
  std::string run_error;  ///< the runtime's message when !ran
  ComparisonReport comparison;
};

/// The model's outputs against reference cases (ValidateAgainst), case by case.
struct ReferenceReport {
  std::vector<CaseResult> cases;
  bool Passed() const;
  /// {"passed", "cases": [{"label", "ran", "comparison"} or {"label", "ran": false, "run_error",
  /// "diagnosis"}]}: a case that did not run carries the runtime's message and its diagnosis.
  nlohmann::json ToJson() const;
};

/// Runs every case on `session` and compares with its expected outputs. With `purpose_model` (the model the
/// session runs), each output's task-level agreement is measured, and a quantised model's outputs are judged
/// by their purpose (validate/purpose_judgement.h): a float framework's reference is not what integer
/// kernels reproduce.
ReferenceReport ValidateAgainst(Session& session, const std::vector<ReferenceCase>& cases,
                                const ToleranceRules& tolerance, const onnx::ModelProto* purpose_model = nullptr);

}  // namespace ortkit
