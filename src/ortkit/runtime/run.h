#pragma once
// Running a session on ortkit Tensors, and describing its inputs and outputs.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/tensor.h"
#include "ortkit/tensor/tensor_spec.h"

namespace onnx {
class ModelProto;
}

namespace ortkit {

Result<std::vector<TensorSpec>> DescribeInputs(Session& session);
Result<std::vector<TensorSpec>> DescribeOutputs(Session& session);

struct RunRequest {
  std::span<const NamedTensor> inputs;
  /// Empty: every tensor output of the session (sequences, maps and optionals are computed, not returned;
  /// a model with no tensor output runs all the same and returns no output).
  std::vector<std::string> output_names;
};

/// The graph inputs a caller feeds, as the model file declares them (initializers listed as inputs left out,
/// as ONNX Runtime leaves them out of a session's inputs): for checking --dim and --shape before any session.
std::vector<TensorSpec> DeclaredInputs(const onnx::ModelProto& model);

/// The graph outputs as the model file declares them (ONNX Runtime's session metadata may already
/// hold its own inferred shapes instead). Non-tensor outputs have is_tensor false.
std::vector<TensorSpec> DeclaredOutputs(const onnx::ModelProto& model);

/// Outputs whose shape contradicts the model's declaration: another rank, or another size on a
/// dimension declared fixed ("output 'y' is [20, 1, 8210] but the model declares [1, seqlen]").
/// Symbolic and unnamed dimensions accept any size. One sentence per output; empty when all fit.
std::vector<std::string> OutputShapeMismatches(const std::vector<TensorSpec>& declared,
                                               std::span<const NamedTensor> outputs);

/// Runs once and copies the outputs into Tensors. Checks the inputs against the session's
/// declaration first (names, element types, ranks, fixed dimensions) so the error names the
/// input; runtime failures come back as kRuntime errors carrying the runtime's message.
/// Thread-safe: many threads may Run one Session.
Result<std::vector<NamedTensor>> RunSession(Session& session, const RunRequest& request);

/// Checks `inputs` against `specs`: every declared input present, no unknown names, element
/// types and ranks equal, fixed dimensions equal. The error names the input and the mismatch.
Status CheckInputs(std::span<const NamedTensor> inputs, const std::vector<TensorSpec>& specs);

}  // namespace ortkit
