// --target-ort: the release table and the check of a model against one release.
#include "ortkit/check/target_runtime.h"

#include <gtest/gtest.h>

#include "test_models.h"

namespace ortkit {
namespace {

std::vector<std::string> Codes(const std::vector<Diagnosis>& found) {
  std::vector<std::string> codes;
  for (const auto& d : found) codes.push_back(d.code);
  return codes;
}

// Releases only ever add: a later release loads everything an earlier one does.
TEST(TargetRuntime, TheTableGrowsMonotonically) {
  const auto releases = OrtReleases();
  ASSERT_EQ(releases.front().version, "1.10");
  ASSERT_EQ(releases.back().version, "1.29");
  for (std::size_t i = 1; i < releases.size(); ++i) {
    EXPECT_GE(releases[i].max_ir, releases[i - 1].max_ir) << releases[i].version;
    EXPECT_GE(releases[i].max_opset, releases[i - 1].max_opset) << releases[i].version;
    EXPECT_GE(releases[i].max_ml_opset, releases[i - 1].max_ml_opset) << releases[i].version;
  }
  EXPECT_EQ(FindOrtRelease("1.16.3"), FindOrtRelease("1.16"));
  EXPECT_EQ(FindOrtRelease("1.16")->max_opset, 19);
  EXPECT_EQ(FindOrtRelease("1.9"), nullptr);
  EXPECT_EQ(FindOrtRelease("banana"), nullptr);
  EXPECT_EQ(FindOrtRelease(""), nullptr);
}

TEST(TargetRuntime, IrVersionIsCheckedFirstInTheReleasesOwnWords) {
  const auto model = testing::ParseModelText(
      R"(<ir_version: 10, opset_import: ["" : 20]> g (float[N] x) => (float[N] y) { y = Gelu(x) })");
  const auto found = CheckTargetRuntime(model, *FindOrtRelease("1.16"));
  ASSERT_EQ(Codes(found), std::vector<std::string>{"target.ir-version"});
  EXPECT_NE(found[0].message.find("\"Unsupported model IR version: 10, max supported IR version: 9\""),
            std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].fix.find("opset_version=19"), std::string::npos) << found[0].fix;
  EXPECT_NE(found[0].fix.find("ONNX Runtime 1.18 or newer"), std::string::npos) << found[0].fix;
  EXPECT_TRUE(CheckTargetRuntime(model, *FindOrtRelease("1.29")).empty());
}

TEST(TargetRuntime, OpsetsOfEachDomain) {
  const auto model = testing::ParseModelText(
      R"(<ir_version: 9, opset_import: ["" : 20, "ai.onnx.ml" : 4, "com.microsoft" : 1]> g (float[N] x) => (float[N] y) { y = Relu(x) })");
  const auto found = CheckTargetRuntime(model, *FindOrtRelease("1.16"));
  ASSERT_EQ(Codes(found), (std::vector<std::string>{"target.opset", "target.opset"}));
  EXPECT_NE(found[0].message.find("Current official support for domain ai.onnx is till opset 19."), std::string::npos);
  EXPECT_NE(found[1].message.find("Current official support for domain ai.onnx.ml is till opset 3."),
            std::string::npos);
  EXPECT_TRUE(CheckTargetRuntime(model, *FindOrtRelease("1.17")).empty());
}

TEST(TargetRuntime, OperatorsWhoseKernelCameLater) {
  const auto pad = testing::ParseModelText(
      R"(<ir_version: 9, opset_import: ["" : 19]> g (float[N] x, int64[2] p) => (float[M] y) { y = Pad<mode = "wrap">(x, p) })");
  const auto found = CheckTargetRuntime(pad, *FindOrtRelease("1.15"));
  ASSERT_EQ(Codes(found), std::vector<std::string>{"target.operator"});
  EXPECT_EQ(found[0].severity, Severity::kError);
  EXPECT_TRUE(CheckTargetRuntime(pad, *FindOrtRelease("1.16")).empty());
  const auto reflect = testing::ParseModelText(
      R"(<ir_version: 9, opset_import: ["" : 19]> g (float[N] x, int64[2] p) => (float[M] y) { y = Pad<mode = "reflect">(x, p) })");
  EXPECT_TRUE(CheckTargetRuntime(reflect, *FindOrtRelease("1.15")).empty());
  // A function operator runs expanded: a warning.
  const auto gelu = testing::ParseModelText(
      R"(<ir_version: 9, opset_import: ["" : 20]> g (float[N] x) => (float[N] y) { y = Gelu(x) })");
  const auto expanded = CheckTargetRuntime(gelu, *FindOrtRelease("1.17"));
  ASSERT_EQ(Codes(expanded), std::vector<std::string>{"target.operator"});
  EXPECT_EQ(expanded[0].severity, Severity::kWarning);
}

}  // namespace
}  // namespace ortkit
