#include "ortkit/validate/purpose_judgement.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ortkit/validate/validate.h"
#include "test_models.h"

namespace ortkit {
namespace {

Tensor F32(std::vector<std::int64_t> shape, std::vector<float> v) {
  return Tensor::FromVector<float>(shape, v).value();
}

onnx::ModelProto QdqSoftmax() {
  return testing::ParseModelText(R"(
<ir_version: 8, opset_import: ["" : 17]>
qdq (float[N, 4] x) => (float[N, 4] probs) <float s = {0.05}, uint8 z = {128}> {
  q = QuantizeLinear(x, s, z)
  d = DequantizeLinear(q, s, z)
  probs = Softmax(d)
}
)");
}

ComparisonReport Compare(const std::vector<NamedTensor>& expected, const std::vector<NamedTensor>& actual) {
  return CompareOutputs(expected, actual, ToleranceRules{});
}

std::vector<NamedTensor> One(const std::string& name, Tensor t) {
  std::vector<NamedTensor> v;
  v.push_back({name, std::move(t)});
  return v;
}

// Rounding that a quantised kernel changes is judged by the output's purpose: the same best class passes, a
// changed one does not; a float model keeps the tolerance's verdict.
TEST(PurposeJudgement, QuantisedScoresPassWhileTheBestClassStays) {
  const onnx::ModelProto model = QdqSoftmax();
  const QuantizationSummary quantised = SummarizeQuantization(model);
  const auto expected = One("probs", F32({2, 4}, {0.1f, 0.6f, 0.2f, 0.1f, 0.7f, 0.1f, 0.1f, 0.1f}));
  const auto rounded = One("probs", F32({2, 4}, {0.12f, 0.55f, 0.23f, 0.1f, 0.66f, 0.12f, 0.11f, 0.11f}));
  ComparisonReport report = Compare(expected, rounded);
  ASSERT_FALSE(report.Passed());  // beyond any float tolerance
  JudgeByPurpose(report, expected, rounded, model, quantised);
  const OutputComparison& o = report.outputs[0];
  EXPECT_TRUE(o.passed) << o.judgement;
  EXPECT_EQ(o.judged, OutputComparison::Judged::kRounding);
  ASSERT_TRUE(o.agreement);
  EXPECT_EQ(o.agreement->purpose, OutputPurpose::kScores);
  ASSERT_TRUE(o.quantization_step);
  EXPECT_NEAR(*o.quantization_step, 0.05, 1e-7);
  EXPECT_NE(o.judgement.find("top-1 2/2 rows"), std::string::npos) << o.judgement;
  EXPECT_NE(o.judgement.find("float figures: "), std::string::npos) << o.judgement;

  const auto flipped = One("probs", F32({2, 4}, {0.6f, 0.1f, 0.2f, 0.1f, 0.1f, 0.7f, 0.1f, 0.1f}));
  ComparisonReport lost = Compare(expected, flipped);
  JudgeByPurpose(lost, expected, flipped, model, quantised);
  EXPECT_FALSE(lost.outputs[0].passed);
  EXPECT_EQ(lost.outputs[0].judged, OutputComparison::Judged::kPurposeLost);

  ComparisonReport as_float = Compare(expected, rounded);
  JudgeByPurpose(as_float, expected, rounded, model, QuantizationSummary{});
  EXPECT_FALSE(as_float.outputs[0].passed);
  EXPECT_EQ(as_float.outputs[0].judged, OutputComparison::Judged::kFloat);
  EXPECT_TRUE(as_float.outputs[0].agreement);  // measured all the same, for the report
}

// A QDQ convolution whose int32 bias sits next to the top of its range: the unfused graph adds it in float, the
// fused QLinearConv in an int32 accumulator that overflows, so channels flip from the top of their range to the
// bottom. Quantisation-aware judging must not hide that: the output's purpose is lost (an error), and the
// localisation names the convolution and the fused kernel.
constexpr const char* kOverflowingConv = R"(
<ir_version: 8, opset_import: ["" : 17]>
overflow (float[N, 2, 4, 4] x) => (float[N, 4, 4, 4] features)
<float xs = {0.02}, uint8 xz = {128}, int8[4, 2, 1, 1] wq = {100, 90, -100, 80, 110, 100, -90, 120},
 float ws = {0.01}, int8 wz = {0}, int32[4] bq = {2147483000, 5, 2147483000, -7}, float bs = {0.0002},
 int32 bz = {0}, float ys = {4294.97}, uint8 yz = {128}> {
  xq = QuantizeLinear(x, xs, xz)
  xd = DequantizeLinear(xq, xs, xz)
  wd = DequantizeLinear(wq, ws, wz)
  bd = DequantizeLinear(bq, bs, bz)
  c = Conv(xd, wd, bd)
  cq = QuantizeLinear(c, ys, yz)
  features = DequantizeLinear(cq, ys, yz)
}
)";

/// Validate's opt-levels cross-check of the model written in `text`.
ValidateReport CrossCheckText(const std::string& text) {
  auto runtime = Runtime::Create();
  EXPECT_TRUE(runtime.ok()) << runtime.error().message;
  if (!runtime.ok()) return {};
  const onnx::ModelProto model = testing::ParseModelText(text);
  testing::TempDir dir;
  const auto path = dir.WriteModel("model.onnx", model);
  auto session = Session::Create(**runtime, path, SessionConfig{});
  EXPECT_TRUE(session.ok()) << session.error().message;
  if (!session.ok()) return {};
  ValidateOptions options;
  options.model = path;
  options.compare = "opt-levels";
  return Validate(**runtime, **session, model, options);
}

TEST(PurposeJudgement, DivergenceAfterFusionIsCaughtAndLocalised) {
  const ValidateReport report = CrossCheckText(kOverflowingConv);
  ASSERT_FALSE(report.failure) << report.failure->error.message;
  ASSERT_TRUE(report.cross_check);
  EXPECT_TRUE(report.cross_check->quantization.quantized());
  ASSERT_EQ(report.cross_check->comparison.outputs.size(), 1u);
  const OutputComparison& o = report.cross_check->comparison.outputs[0];
  EXPECT_FALSE(o.passed);
  EXPECT_EQ(o.judged, OutputComparison::Judged::kPurposeLost) << o.judgement;
  // Localised without being asked: the convolution's quantised output, computed by the fused QLinearConv.
  ASSERT_EQ(report.localizations.size(), 1u);
  ASSERT_TRUE(report.localizations[0].report.ok()) << report.localizations[0].report.error().message;
  const QuantizedDivergence where = DescribeQuantizedDivergence(*report.localizations[0].report);
  EXPECT_EQ(where.op_type, "Conv") << where.text;
  EXPECT_NE(where.text.find("QLinearConv"), std::string::npos) << where.text;
}

// The same convolution with a bias in range rounds the same way fused and unfused: it passes as rounding.
TEST(PurposeJudgement, TheSameConvolutionWithoutOverflowPasses) {
  std::string text = kOverflowingConv;
  for (const std::string big = "2147483000"; text.find(big) != std::string::npos;)
    text.replace(text.find(big), big.size(), "20000");
  const ValidateReport report = CrossCheckText(text);
  ASSERT_TRUE(report.cross_check);
  EXPECT_TRUE(report.cross_check->Passed()) << report.cross_check->comparison.outputs[0].judgement;
  EXPECT_TRUE(report.localizations.empty());
}

}  // namespace
}  // namespace ortkit
