#include "test_models.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>
#include <onnx/defs/parser.h>

namespace ortkit::testing {

onnx::ModelProto ParseModelText(std::string_view text) {
  onnx::ModelProto model;
  const std::string copy(text);
  auto status = onnx::OnnxParser::Parse(model, copy.c_str());
  if (!status.IsOK()) {
    ADD_FAILURE() << "ONNX text does not parse: " << status.ErrorMessage() << "\n" << text;
    return onnx::ModelProto();
  }
  return model;
}

std::string ModelText(std::string_view name) {
  const std::filesystem::path path =
      std::filesystem::path(ORTKIT_SOURCE_DIR) / "tests" / "data" / "models" / (std::string(name) + ".txt");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) ADD_FAILURE() << "cannot read the test model " << path;
  return text;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("ortkit-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::Write(const std::string& name, std::string_view bytes) const {
  const auto full = path_ / name;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return full;
}

std::filesystem::path TempDir::WriteModel(const std::string& name, const onnx::ModelProto& model) const {
  return Write(name, model.SerializeAsString());
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::filesystem::path SourcePath(const std::string& relative) {
  return std::filesystem::path(ORTKIT_SOURCE_DIR) / relative;
}

}  // namespace ortkit::testing
