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

namespace onnx {
class ModelProto;
}

namespace ortkit {

/// One dimension as a session declares it: a fixed size, or symbolic (named or not).
struct DimSpec {
  std::int64_t value = -1;  ///< >= 0 when fixed
  std::string symbol;       ///< the dim_param name when symbolic; empty when unnamed

  bool fixed() const { return value >= 0; }
  /// "4", "batch" or "?"
  std::string ToString() const;
};

/// A session input or output.
struct TensorSpec {
  std::string name;
  bool is_tensor = true;  ///< false for sequences, maps, optionals
  DataType type = DataType::kUndefined;
  std::vector<DimSpec> dims;

  /// "float32[batch, 3, 224, 224]"
  std::string Describe() const;
};

/// Whether a tensor of `type` and `shape` fits `spec` (element type, rank, fixed dimensions);
/// kInvalidArgument naming `what` ("input 'x'") otherwise. Always OK for non-tensor specs.
Status CheckAgainstSpec(std::string_view what, DataType type, std::span<const std::int64_t> shape,
                        const TensorSpec& spec);

/// A HeaderCheck for tensor files that feed the model: a tensor named after an input must fit it
/// (CheckAgainstSpec); other names pass, for the caller to place or refuse. Keeps a reference to
/// `inputs`, which must outlive it.
HeaderCheck InputHeaderCheck(const std::vector<TensorSpec>& inputs);

Result<std::vector<TensorSpec>> DescribeInputs(Session& session);
Result<std::vector<TensorSpec>> DescribeOutputs(Session& session);

struct RunRequest {
  std::span<const NamedTensor> inputs;
  std::vector<std::string>
      output_names;  ///< empty: every tensor output of the session (sequences and maps are not fetched)
};

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

/// Wraps `tensor` for the runtime: numeric tensors without a copy (the tensor must outlive the
/// Run call), strings copied through `allocator`. Throws Ort::Exception as the C++ API does.
Ort::Value ToOrtValue(const Tensor& tensor, const Ort::MemoryInfo& memory, Ort::AllocatorWithDefaultOptions& allocator);

/// Checks `inputs` against `specs`: every declared input present, no unknown names, element
/// types and ranks equal, fixed dimensions equal. The error names the input and the mismatch.
Status CheckInputs(std::span<const NamedTensor> inputs, const std::vector<TensorSpec>& specs);

}  // namespace ortkit
