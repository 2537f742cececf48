#include "ortkit/model/model_file.h"

#include <gtest/gtest.h>

namespace ortkit {
namespace {

TEST(GuessContent, RecognisesCommonMistakes) {
  EXPECT_EQ(GuessContent(""), ContentGuess::kEmpty);
  EXPECT_EQ(GuessContent("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12345\n"), ContentGuess::kGitLfsPointer);
  EXPECT_EQ(GuessContent("  <!DOCTYPE html><html><body>hi</body></html>"), ContentGuess::kHtml);
  EXPECT_EQ(GuessContent("{\"error\": \"not found\"}"), ContentGuess::kJson);
  EXPECT_EQ(GuessContent("ir_version: 8\ngraph {}"), ContentGuess::kText);
  EXPECT_EQ(GuessContent(std::string("PK\x03\x04rest", 8)), ContentGuess::kZip);
  EXPECT_EQ(GuessContent(std::string("\x08\x07\x12\x07pytorch", 11)), ContentGuess::kBinary);
}

}  // namespace
}  // namespace ortkit
