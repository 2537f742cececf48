#pragma once
// What every candidate is held to: the original model's outputs on the proof's inputs. The inputs are the
// reference's when one is given, else the user's --input files, else synthesised at the sizes the model
// runs at; then the same at another batch size (1 becomes 3), so that the batch axis is proven too.

#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/optimize/candidate_proof.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/agreement.h"
#include "ortkit/tensor/tensor_spec.h"

namespace ortkit {

struct ProofBaseline {
  std::vector<TensorSpec> session_inputs;   ///< as the original's session declares them
  std::vector<TensorSpec> declared_inputs;  ///< as the file declares them (the interface a candidate keeps)
  std::vector<TensorSpec> declared_outputs;
  std::vector<ProofInputs> trials;
  std::vector<std::string> output_names;  ///< the outputs compared, in the model's order
  std::vector<OutputPurpose> purposes;    ///< by position of output_names
  std::string source;                     ///< "synthesised", "--input files", "the reference 'DIR' (2 cases)"
  std::string batch_dim;                  ///< the batch axis' symbol; empty when there is none
  std::vector<std::string> notes;         ///< sizes found by running, a trial the original does not run
};

/// Runs `session` (the original `model`) on the proof's inputs. Errors: a reference or --input files that do
/// not fit the model (kInvalidArgument, naming the input), the original not running on the first inputs
/// (kRuntime, with the runtime's message).
Result<ProofBaseline> RunOriginal(Session& session, const onnx::ModelProto& model, const InputSources& sources,
                                  const std::filesystem::path& reference);

/// "input_ids int64[1, 128], attention_mask int64[1, 128]"
std::string DescribeShapes(const std::vector<NamedTensor>& tensors);

}  // namespace ortkit
