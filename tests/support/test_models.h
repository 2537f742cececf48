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

/// An audio front end as converters write it: samples `x[?, ?]` with a reflect pad of 32 (so at least 33
/// samples), and a recurrent state `[2, ?, 8]` whose second, unnamed axis is the batch.
inline constexpr std::string_view kUnnamedAudioModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[?, ?] x, float[2, ?, 8] state) => (float[?, ?] y, float[2, ?, 8] next) {
    pads = Constant <value = int64[4] {0, 32, 0, 32}> ()
    y = Pad <mode = "reflect"> (x, pads)
    m = ReduceMean <axes = [1], keepdims = 1> (y)
    zero = Constant <value = int64[1] {0}> ()
    u = Unsqueeze (m, zero)
    next = Add (state, u)
  }
)";

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
