#pragma once
// The ONNX-library layers of `check`: the checker and shape inference, with graceful
// degradation for models newer than the ONNX library (1.23: IR 14, opset 28) knows.

#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

/// Newest IR version and ai.onnx opset the linked ONNX library knows.
int KnownIrVersion();
int KnownOnnxOpset();

struct LayerOutcome {
  bool ran = true;             ///< false: the layer could not judge this model at all
  std::string skipped_reason;  ///< why, when !ran
  std::vector<Diagnosis> diagnoses;
};

/// Why the ONNX library cannot judge `model` (IR or opset too new), as warnings; empty when it can.
std::vector<Diagnosis> OnnxLibraryLimits(const onnx::ModelProto& model);

/// onnx::checker::check_model, its exceptions turned into checker.failed with the node named.
/// External data files are left to CheckExternalData (the checker would look for them relative to
/// the current directory): their locations are hidden from the checker during the call, so
/// `model` is modified while it runs and restored before it returns.
LayerOutcome RunChecker(onnx::ModelProto& model);

/// Strict shape inference, in place: `model` gains value_info for intermediate values and
/// refined output types. Reports output dimensions that stay symbolic, become fixed or unknown.
LayerOutcome RunShapeInference(onnx::ModelProto& model);

}  // namespace ortkit
