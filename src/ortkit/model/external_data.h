#pragma once
// External data: tensors whose bytes live in side files next to the model.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/model/model_file.h"

namespace ortkit {

/// One tensor stored outside the .onnx file, as the model records it.
struct ExternalTensor {
  std::string tensor;    ///< initializer or Constant name
  std::string location;  ///< as written in the model, relative to the model's folder
  std::int64_t offset = 0;
  std::int64_t length = -1;  ///< -1: to the end of the file
};

/// The file an external data `location` names, resolved against the model's folder `base` with
/// every symbolic link followed. An error (kInvalidModel, a sentence naming the location) when the
/// location is absolute or resolves outside `base`: ONNX Runtime refuses such paths, and ortkit
/// never opens, sizes or reports files outside the model's folder.
Result<std::filesystem::path> ResolveExternalLocation(const std::filesystem::path& base, const std::string& location);

/// Every externally stored tensor, in initializers, Constant nodes and subgraphs. Entries that
/// cannot be read (non-numeric offset, missing location) are returned in `problems`.
std::vector<ExternalTensor> ListExternalTensors(const onnx::ModelProto& model,
                                                std::vector<Diagnosis>* problems = nullptr);

/// The external-data layer of `check`: files exist, ranges lie inside them, lengths match shapes.
std::vector<Diagnosis> CheckExternalData(const ModelFile& model);

}  // namespace ortkit
