#pragma once
// The mechanical fixes of `ortkit fix`, one pass per defect that `check` reports. Each pass edits a
// ModelProto in place (weights inline) and says what it changed and what it left, and why; proving
// the result is ModelFix's (fix/model_fix.h). Passes read the model with check's lint index, the
// view the rules that found the defect have.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

namespace ortkit {

/// One edit a pass made.
struct FixChange {
  std::string code;    ///< the diagnosis code it answers ("graph.static-batch"); empty for clean-up no rule reports
  std::string target;  ///< what it touched: "input 'x'", "node 'Reshape_3'"
  std::string change;  ///< "dimension 0: 4 -> 'batch'"
};

/// A finding a pass could not fix mechanically, and why.
struct FixRefusal {
  std::string code;
  std::string target;
  std::string reason;
};

struct FixPassOptions {
  bool keep_overridable = false;  ///< keep initializers listed as graph inputs (they can be fed to override)
  std::string batch_name = "batch";
};

struct FixPassResult {
  std::vector<FixChange> changes;
  std::vector<FixRefusal> refusals;
  /// Sizes the original is known to run at (the traced batch size): the proof compares there.
  std::map<std::string, std::int64_t> proof_sizes;
  bool changed() const { return !changes.empty(); }
};

/// How a pass's result is proven besides the checker and the comparison with the original.
enum class FixPurpose {
  kSameOutputs,    ///< the outputs stay the original's: compared, nothing else to show
  kOtherBatches,   ///< the model now runs at other batch sizes, row i of a batch equal to row i alone
  kInferenceMode,  ///< the outputs are meant to change (training -> inference): not compared with the
                   ///< original; the fixed model gives the same outputs twice and row by row
};

struct FixPass {
  std::string_view name;                ///< "static-batch"; --only accepts it as well as the codes
  std::vector<std::string_view> codes;  ///< the diagnosis codes it answers; it runs when check reports one
  bool always = false;                  ///< runs without a finding (dead code has no code of its own)
  FixPurpose purpose = FixPurpose::kSameOutputs;
  std::string_view summary;  ///< what it does and how it is proven, one sentence for the docs
  FixPassResult (*apply)(onnx::ModelProto& model, const FixPassOptions& options) = nullptr;
};

/// Every pass, in the order they run: interface first (inputs, batch), then what the graph computes,
/// then clean-up.
std::span<const FixPass> FixPasses();

/// The pass answering `code`; nullptr when `fix` does not handle it.
const FixPass* FindFixPassForCode(std::string_view code);

/// Whether `ortkit fix` handles `code`, one sentence for `explain` and the troubleshooting guide.
std::string FixHandling(std::string_view code);

// The passes (each in its own file).
FixPassResult FixInitializersAsInputs(onnx::ModelProto& model, const FixPassOptions& options);
FixPassResult FixTrainingDropout(onnx::ModelProto& model, const FixPassOptions& options);
FixPassResult FixTrainingBatchNorm(onnx::ModelProto& model, const FixPassOptions& options);
FixPassResult FixStaticBatch(onnx::ModelProto& model, const FixPassOptions& options);
FixPassResult FixFloat64(onnx::ModelProto& model, const FixPassOptions& options);
FixPassResult FixDimNames(onnx::ModelProto& model, const FixPassOptions& options);
FixPassResult RemoveDeadCode(onnx::ModelProto& model, const FixPassOptions& options);

}  // namespace ortkit
