#pragma once
// "Will it load on the ONNX Runtime I deploy?": what each ONNX Runtime release from 1.10 to 1.29
// accepts (IR version, ai.onnx and ai.onnx.ml opsets) and the operators that arrived in its CPU
// kernels later than in their opset, with the check of a model against one release. The facts and
// their sources are in docs/compatibility.md.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

struct OrtRelease {
  std::string_view version;   ///< "1.16"
  std::string_view released;  ///< "Sep 2023"
  std::string_view onnx;      ///< the ONNX release it is built with
  int max_ir = 0;             ///< highest model IR version it loads
  int max_opset = 0;          ///< highest ai.onnx opset it loads
  int max_ml_opset = 0;       ///< highest ai.onnx.ml opset it loads
  std::string_view cuda;      ///< CUDA and cuDNN majors of its GPU build ("" when unknown)
};

/// An operator whose CPU kernel came in a later release than the first that accepts its opset: the
/// model loads there, then fails (or, for function operators, runs untested).
struct OperatorNote {
  std::string_view domain;  ///< "" for ai.onnx
  std::string_view op_type;
  int since_opset = 0;         ///< the note applies to models importing this opset or newer
  std::string_view attribute;  ///< when set, only nodes whose string attribute has `value`
  std::string_view value;
  std::string_view first_release;  ///< first release with the CPU kernel; "" for none yet
  std::string_view subject;        ///< "Pad-19's 'wrap' mode"
  bool function = false;           ///< ONNX defines it as a function: expanded from it rather than failing
};

/// Every release in the table, oldest first.
std::span<const OrtRelease> OrtReleases();
std::span<const OperatorNote> OperatorNotes();

/// The release "1.16" (also "1.16.3": the patch is ignored); nullptr when the table has none.
const OrtRelease* FindOrtRelease(std::string_view version);

/// "1.10, 1.11, ..., 1.29", for messages.
std::string KnownOrtReleases();

/// The findings of loading `model` on `target`: target.ir-version and target.opset (errors, with
/// the very words that release prints and the opset to export with instead), target.operator
/// (errors for a kernel that does not exist there, warnings for a function run from its definition).
std::vector<Diagnosis> CheckTargetRuntime(const onnx::ModelProto& model, const OrtRelease& target);

}  // namespace ortkit
