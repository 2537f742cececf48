#pragma once
// Test fixtures: models written inline in the ONNX textual syntax, parsed with onnx::OnnxParser,
// and temporary files that clean up after themselves.

#include <filesystem>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

namespace ortkit::testing {

/// Parses ONNX text ("<ir_version: 8, opset_import: [\"\" : 17]> agraph (float[N] x) => ...").
/// Fails the current test (ADD_FAILURE) and returns an empty model on a syntax error.
onnx::ModelProto ParseModelText(std::string_view text);

/// The text of tests/data/models/NAME.txt, a model the end-to-end scripts use too (README.md there
/// says what each is); empty, with the test failed, when the file cannot be read.
std::string ModelText(std::string_view name);

/// A directory under the system temp folder, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// Writes `bytes` to path()/name and returns the full path.
  std::filesystem::path Write(const std::string& name, std::string_view bytes) const;
  /// Serialises `model` to path()/name and returns the full path.
  std::filesystem::path WriteModel(const std::string& name, const onnx::ModelProto& model) const;

 private:
  std::filesystem::path path_;
};

/// The whole content of `path` ("" when it cannot be read).
std::string ReadFile(const std::filesystem::path& path);

/// Path of a file in the source tree (tests/data/...).
std::filesystem::path SourcePath(const std::string& relative);

}  // namespace ortkit::testing
