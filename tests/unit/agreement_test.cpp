#include "ortkit/tensor/agreement.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/model/output_purpose.h"
#include "ortkit/model/quantization.h"
#include "test_models.h"

namespace ortkit {
namespace {

Tensor F32(std::vector<std::int64_t> shape, std::vector<float> v) {
  return Tensor::FromVector<float>(shape, v).value();
}

TEST(Agreement, TopOneCountsRowsWithTheSameBestClass) {
  // Row 0 keeps its best class, row 1 changes it, row 2 breaks a tie the other way.
  const Tensor expected = F32({3, 3}, {0.1f, 0.8f, 0.1f, 0.6f, 0.3f, 0.1f, 0.4f, 0.4f, 0.2f});
  const Tensor actual = F32({3, 3}, {0.1f, 0.7f, 0.2f, 0.2f, 0.7f, 0.1f, 0.39f, 0.41f, 0.2f});
  const Agreement a = MeasureAgreement(expected, actual, OutputPurpose::kScores, 2);
  EXPECT_EQ(a.rows, 3);
  EXPECT_EQ(a.top1_agree, 1);
  EXPECT_EQ(a.near_ties, 1);
  EXPECT_NEAR(a.Top1Share(), 2.0 / 3, 1e-9);
  EXPECT_EQ(a.k, 2);
  // Rows 1 and 2 keep their two best (in another order); row 0's second best moved from class 0 to class 2.
  EXPECT_NEAR(a.topk_overlap, (0.5 + 1 + 1) / 3, 1e-9);
  EXPECT_EQ(a.Describe(), "top-1 2/3 rows (1 a tie broken the other way), top-2 overlap 83.3%");
}

TEST(Agreement, CosinePerRowFindsTheWorstRow) {
  const Tensor expected = F32({2, 2}, {1, 0, 0, 1});
  const Tensor actual = F32({2, 2}, {2, 0, 1, 1});  // row 0 is longer but parallel, row 1 turned 45 degrees
  const Agreement a = MeasureAgreement(expected, actual, OutputPurpose::kEmbedding);
  EXPECT_NEAR(a.min_cosine, std::sqrt(0.5), 1e-9);
  EXPECT_EQ(a.worst_row, 1);
  EXPECT_NEAR(a.mean_cosine, (1 + std::sqrt(0.5)) / 2, 1e-9);
  EXPECT_EQ(a.Describe(), "per-row cosine >= 0.70711 (2 rows)");
  const auto cosines = RowCosines(F32({2, 2}, {0, 0, 1, 0}), F32({2, 2}, {0, 0, 0, 0}));
  EXPECT_EQ(cosines, (std::vector<double>{1, 0}));  // zero against zero alike, a vector against zero not
}

TEST(Agreement, ValuesAreJudgedBesideTheirRange) {
  const Agreement a = MeasureAgreement(F32({1, 1}, {0.98f}), F32({1, 1}, {0.9792f}), OutputPurpose::kValues);
  EXPECT_NEAR(a.range, 0.98, 1e-6);
  EXPECT_NEAR(a.RelativeError(), 0.0008 / 0.98, 1e-5);
  EXPECT_EQ(a.Describe(), "max error 0.0816% of the output's range 0.98");
  const nlohmann::json j = a.ToJson();
  EXPECT_EQ(j["purpose"], "values");
  EXPECT_EQ(j["judged_by"], a.Describe());
}

TEST(Agreement, NanNeverAgrees) {
  const Agreement a = MeasureAgreement(F32({1, 3}, {0, 1, 0}), F32({1, 3}, {NAN, NAN, NAN}), OutputPurpose::kScores);
  EXPECT_EQ(a.top1_agree, 0);
  EXPECT_EQ(a.min_cosine, 0);
  EXPECT_FALSE(std::isfinite(a.RelativeError()));
  EXPECT_EQ(RowArgmax(F32({1, 3}, {NAN, 2, 3})), (std::vector<std::int64_t>{2}));
}

onnx::ModelProto Heads() {
  return testing::ParseModelText(R"(
<ir_version: 8, opset_import: ["" : 17]>
heads (float[N, 8] x) => (float[N, 4] probs, float[N, 8] unit, float[N, 4] raw, float[N, 4] logits_out,
                          float[N, 1] single, int64[N] label, float[N, 4] gate)
<float[8, 4] w = {0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1.,
                  0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1.}> {
  h = MatMul(x, w)
  s = Softmax <axis = -1> (h)
  probs = Reshape(s, shape)
  shape = Constant <value = int64[2] {-1, 4}> ()
  n = ReduceL2 <axes = [1], keepdims = 1> (x)
  unit = Div(x, n)
  raw = Identity(h)
  logits_out = Identity(h)
  single = ReduceSum <axes = [1], keepdims = 1> (x)
  label = ArgMax <axis = 1, keepdims = 0> (h)
  gate = Sigmoid(h)
}
)");
}

TEST(OutputPurpose, ReadFromTheNodeTheNameAndTheValues) {
  const onnx::ModelProto model = Heads();
  const Tensor rows = F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(GuessOutputPurpose(model, "probs", rows), OutputPurpose::kScores);  // Softmax through a Reshape
  EXPECT_EQ(GuessOutputPurpose(model, "unit", F32({1, 8}, {1, 0, 0, 0, 0, 0, 0, 0})), OutputPurpose::kEmbedding);
  EXPECT_EQ(GuessOutputPurpose(model, "raw", rows), OutputPurpose::kEmbedding);
  EXPECT_EQ(GuessOutputPurpose(model, "logits_out", rows), OutputPurpose::kScores);  // by its name
  EXPECT_EQ(GuessOutputPurpose(model, "single", F32({2, 1}, {1, 2})), OutputPurpose::kValues);
  EXPECT_EQ(GuessOutputPurpose(model, "label", Tensor::FromVector<std::int64_t>({2}, {1, 3}).value()),
            OutputPurpose::kLabels);
  EXPECT_EQ(GuessOutputPurpose(model, "gate", rows), OutputPurpose::kValues);
  // A row that is a probability distribution scores classes whatever computed it.
  EXPECT_EQ(GuessOutputPurpose(model, "raw", F32({1, 4}, {0.25f, 0.5f, 0.125f, 0.125f})), OutputPurpose::kScores);
  // A CTC head's 8,210 characters per frame are classes; 768 values a row are a vector.
  EXPECT_EQ(GuessOutputPurpose(model, "raw", Tensor::Zeros(DataType::kFloat32, {5, 1, 8210}).value()),
            OutputPurpose::kScores);
  EXPECT_EQ(GuessOutputPurpose(model, "raw", Tensor::Zeros(DataType::kFloat32, {2, 768}).value()),
            OutputPurpose::kEmbedding);
}

TEST(Quantization, RecognisesEachScheme) {
  const onnx::ModelProto qdq = testing::ParseModelText(R"(
<ir_version: 8, opset_import: ["" : 17]>
qdq (float[N, 4] x) => (float[N, 4] y) <float s = {0.5}, uint8 z = {128}, float s2 = {0.25}, uint8 z2 = {3}> {
  q = QuantizeLinear(x, s, z)
  d = DequantizeLinear(q, s, z)
  r = Relu(d)
  q2 = QuantizeLinear(r, s2, z2)
  d2 = DequantizeLinear(q2, s2, z2)
  y = Softmax(d2)
}
)");
  const QuantizationSummary summary = SummarizeQuantization(qdq);
  ASSERT_TRUE(summary.quantized());
  EXPECT_EQ(summary.Describe(), "static QDQ (2 DequantizeLinear, 2 QuantizeLinear)");
  EXPECT_EQ(summary.ToJson()["schemes"], nlohmann::json::array({"qdq"}));
  // The output is a Softmax of the last DequantizeLinear: its step is that one's scale.
  EXPECT_EQ(OutputQuantizationStep(qdq, "y"), 0.25);

  const onnx::ModelProto dynamic = testing::ParseModelText(R"(
<ir_version: 8, opset_import: ["" : 17]>
dyn (float[N, 2] x) => (float[N, 2] y) <int8[2, 2] w = {1, 2, 3, 4}, int8 wz = {0}> {
  q, qs, qz = DynamicQuantizeLinear(x)
  m = MatMulInteger(q, w, qz, wz)
  f = Cast <to = 1> (m)
  y = Mul(f, qs)
}
)");
  EXPECT_EQ(SummarizeQuantization(dynamic).Describe(), "dynamic int8 (1 DynamicQuantizeLinear, 1 MatMulInteger)");
  EXPECT_EQ(OutputQuantizationStep(dynamic, "y"), std::nullopt);
  EXPECT_FALSE(SummarizeQuantization(Heads()).quantized());
  EXPECT_EQ(SummarizeQuantization(Heads()).Describe(), "");
}

}  // namespace
}  // namespace ortkit
