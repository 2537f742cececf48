#include "ortkit/model/model_file.h"

#include <gtest/gtest.h>

namespace ortkit {
namespace {

TEST(GuessContent, RecognisesCommonMistakes) {
  EXPECT_EQ(GuessContent(""), ContentGuess::kEmpty);
  EXPECT_EQ(GuessContent("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12345\n"),
            ContentGuess::kGitLfsPointer);
  EXPECT_EQ(GuessContent("  <!DOCTYPE html><html><body>hi</body></html>"), ContentGuess::kHtml);
  EXPECT_EQ(GuessContent("{\"error\": \"not found\"}"), ContentGuess::kJson);
  EXPECT_EQ(GuessContent("ir_version: 8\ngraph {}"), ContentGuess::kText);
  EXPECT_EQ(GuessContent(std::string("PK\x03\x04rest", 8)), ContentGuess::kZip);
  EXPECT_EQ(GuessContent(std::string("\x08\x07\x12\x07pytorch", 11)), ContentGuess::kBinary);
}

}  // namespace
}  // namespace ortkit

#include "test_models.h"

namespace ortkit {
namespace {

TEST(LoadModelFile, ParsesATextFixture) {
  testing::TempDir dir;
  auto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) }
  )");
  auto path = dir.WriteModel("relu.onnx", model);
  ModelLoad load = LoadModelFile(path);
  ASSERT_NE(load.model, nullptr);
  EXPECT_EQ(load.model->proto->graph().node(0).op_type(), "Relu");
  EXPECT_TRUE(load.diagnoses.empty());
}

TEST(LoadModelFile, TruncatedFileNamesTheField) {
  testing::TempDir dir;
  auto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) }
  )");
  std::string bytes = model.SerializeAsString();
  auto path = dir.Write("cut.onnx", bytes.substr(0, bytes.size() - 10));
  ModelLoad load = LoadModelFile(path);
  ASSERT_EQ(load.model, nullptr);
  ASSERT_EQ(load.diagnoses.size(), 1u);
  EXPECT_EQ(load.diagnoses[0].code, "file.truncated");
  EXPECT_NE(load.diagnoses[0].message.find("graph"), std::string::npos) << load.diagnoses[0].message;
}

}  // namespace
}  // namespace ortkit
