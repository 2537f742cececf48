#pragma once
// External data: tensors whose bytes live in side files next to the model.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
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

/// Protobuf refuses to serialise a message of 2 GiB or more: inlined weights stay below this.
inline constexpr std::uint64_t kMaxInlinedBytes = 1536ULL << 20;

/// Reads the bytes of every externally stored tensor (initializers, Constant-like attributes, every
/// subgraph) into the tensor itself, for a model that must travel as bytes: ONNX Runtime resolves
/// the external files of a model loaded from bytes against no folder at all. Past `max_bytes` in
/// all, fails with kUnavailable: "`purpose`, and they exceed 1.5 GiB; `remedy`".
Status InlineExternalData(onnx::ModelProto& model, const std::filesystem::path& base, std::uint64_t max_bytes,
                          std::string_view purpose, std::string_view remedy);

/// Writes `model` to `path`. With `external_data`, every stored tensor of 1 KiB or more goes to
/// one side file named after `path` plus ".data" in the same folder (ONNX's layout: location,
/// offset aligned to 4 KiB, length), which is replaced (and removed again when no tensor is that
/// large). Fails with kIo naming the file.
Status WriteModel(onnx::ModelProto model, const std::filesystem::path& path, bool external_data);

}  // namespace ortkit
