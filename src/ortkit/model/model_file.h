#pragma once
// Reading an ONNX file: the file layer of `check`. Anything the bytes can be — a directory, a Git
// LFS pointer, a saved HTML page, a truncated copy — ends as a specific diagnosis, never a crash.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"

namespace ortkit {

/// A parsed model. The ModelProto holds the only in-memory copy of embedded weights;
/// external data stays on disk.
struct ModelFile {
  std::filesystem::path path;  ///< as given; empty for models parsed from memory
  std::uint64_t size_bytes = 0;
  std::unique_ptr<onnx::ModelProto> proto;  ///< never null

  /// Folder that external data locations are relative to.
  std::filesystem::path BaseDirectory() const;
};

struct ModelLoad {
  std::unique_ptr<ModelFile> model;  ///< null when the bytes are not a usable model
  std::vector<Diagnosis> diagnoses;  ///< why `model` is null, and warnings when it is not
  /// Why `model` is null, with the first error's message: kIo when the path could not be read at all
  /// (missing, a folder, a pipe, unreadable), kInvalidModel when its bytes are no usable model. Unset
  /// when `model` is set.
  std::optional<Error> failure;
};

/// Reads and parses `path` without holding the file's bytes twice.
ModelLoad LoadModelFile(const std::filesystem::path& path);

/// Parses a model from memory; `name` is used in messages (fuzzing, tests, servers).
ModelLoad ParseModelBytes(std::string_view bytes, const std::string& name = "<memory>");

/// What the first bytes of a file look like, before any protobuf parsing.
enum class ContentGuess { kEmpty, kBinary, kGitLfsPointer, kHtml, kJson, kText, kZip, kHdf5, kOrtFormat };

ContentGuess GuessContent(std::string_view head);

}  // namespace ortkit
