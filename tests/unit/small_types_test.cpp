// The element types of quantised exports: the four float8 types, float4e2m1, and the packed
// int4/uint4/int2/uint2. Decoding is checked against ONNX's published values, encoding against
// ONNX Runtime's own Cast, and packed tensors travel through a real session.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"
#include "ortkit/tensor/tensor_proto.h"
#include "test_models.h"

namespace ortkit {
namespace {

TEST(SmallFloats, DecodeTheLargestAndSpecialValues) {
  EXPECT_EQ(SmallFloatToFloat(DataType::kFloat8E4M3FN, 0x7E), 448.0f);
  EXPECT_TRUE(std::isnan(SmallFloatToFloat(DataType::kFloat8E4M3FN, 0x7F)));
  EXPECT_EQ(SmallFloatToFloat(DataType::kFloat8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(SmallFloatToFloat(DataType::kFloat8E4M3FNUZ, 0x7F), 240.0f);
  EXPECT_TRUE(std::isnan(SmallFloatToFloat(DataType::kFloat8E4M3FNUZ, 0x80)));
  EXPECT_EQ(SmallFloatToFloat(DataType::kFloat8E5M2, 0x7B), 57344.0f);
  EXPECT_EQ(SmallFloatToFloat(DataType::kFloat8E5M2, 0xFC), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(SmallFloatToFloat(DataType::kFloat8E5M2, 0x7D)));
  EXPECT_EQ(SmallFloatToFloat(DataType::kFloat8E5M2FNUZ, 0x7F), 57344.0f);
  const float e2m1[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (std::uint8_t code = 0; code < 8; ++code) {
    EXPECT_EQ(SmallFloatToFloat(DataType::kFloat4E2M1, code), e2m1[code]);
    EXPECT_EQ(SmallFloatToFloat(DataType::kFloat4E2M1, code | 8), -e2m1[code]);
  }
}

TEST(SmallFloats, EveryFiniteCodeRoundTrips) {
  for (DataType type :
       {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ}) {
    for (int code = 0; code < 256; ++code) {
      const float value = SmallFloatToFloat(type, static_cast<std::uint8_t>(code));
      if (!std::isfinite(value)) continue;
      EXPECT_EQ(FloatToSmallFloat(type, value), code) << DataTypeName(type) << " code " << code << " = " << value;
    }
  }
}

TEST(SmallFloats, EncodingRoundsToEvenAndSaturates) {
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat8E4M3FN, 1.0625f), 0x38);  // halfway between 1 and 1.125: even
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat8E4M3FN, 1.1875f), 0x3A);  // halfway between 1.125 and 1.25: even
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat8E4M3FN, 1000.0f), 0x7E);
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat8E4M3FN, -std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat8E5M2, 1e9f), 0x7B);
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat8E4M3FNUZ, -0.0f), 0x00);
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat4E2M1, 5.0f), 0x6);  // between 4 and 6: even code (4 is 0x6)
  EXPECT_EQ(FloatToSmallFloat(DataType::kFloat4E2M1, 100.0f), 0x7);
}

TEST(PackedIntegers, ElementsShareBytesLowNibbleFirst) {
  Tensor t = std::move(Tensor::Zeros(DataType::kInt4, {5}).value());
  EXPECT_EQ(t.byte_size(), 3u);
  const double values[] = {-8, 7, -1, 3, 20};
  for (int i = 0; i < 5; ++i) t.SetFromDouble(i, values[i]);
  EXPECT_EQ(std::to_integer<int>(t.data()[0]), 0x78);  // -8 low, 7 high
  EXPECT_EQ(std::to_integer<int>(t.data()[1]), 0x3F);  // -1 low, 3 high
  const double expected[] = {-8, 7, -1, 3, 7};         // 20 saturates
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t.AsDouble(i), expected[i]) << i;

  Tensor u = std::move(Tensor::Zeros(DataType::kUInt4, {2, 3}).value());
  EXPECT_EQ(u.byte_size(), 3u);
  for (int i = 0; i < 6; ++i) u.SetFromDouble(i, i * 3);
  auto rows = u.SliceRows(1, 2);  // the second row starts in the middle of a byte
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->AsDouble(0), 9);
  EXPECT_EQ(rows->AsDouble(1), 12);
  EXPECT_EQ(rows->AsDouble(2), 15);
}

TEST(PackedIntegers, ProtosReadFromRawDataAndInt32Data) {
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::UINT4);
  raw.add_dims(3);
  raw.set_raw_data(std::string("\x21\x03", 2));
  auto a = TensorFromProto(raw, "raw");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->AsDouble(0), 1);
  EXPECT_EQ(a->AsDouble(1), 2);
  EXPECT_EQ(a->AsDouble(2), 3);

  onnx::TensorProto typed = raw;
  typed.clear_raw_data();
  typed.add_int32_data(0x21);
  typed.add_int32_data(0x03);
  auto b = TensorFromProto(typed, "typed");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->AsDouble(1), 2);

  raw.set_raw_data(std::string("\x21\x03\x00", 3));  // one byte too many for 3 elements
  auto c = TensorFromProto(raw, "long");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("need 2 bytes but raw_data holds 3"), std::string::npos) << c.error().message;

  onnx::TensorProto f8;
  f8.set_data_type(onnx::TensorProto::FLOAT8E5M2);
  f8.add_dims(2);
  f8.add_int32_data(0x3C);  // 1.0
  f8.add_int32_data(0xC0);  // -2.0
  auto d = TensorFromProto(f8, "f8");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->AsDouble(0), 1.0);
  EXPECT_EQ(d->AsDouble(1), -2.0);
}

// ONNX Runtime's Cast is the oracle: float -> float8 in the session equals ortkit's encoding, and
// ortkit's packed int4 input reads back through the session's Cast to float.
TEST(SmallTypesInASession, CastAgreesWithOrtkit) {
  auto runtime = Runtime::Create().value();
  testing::TempDir dir;
  const auto path = dir.WriteModel("casts.onnx", testing::ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    casts (float[n] x, int4[m] q) => (float8e4m3fn[n] f8, float8e5m2[n] f5, float[m] back) {
      f8 = Cast <to = 17> (x)
      f5 = Cast <to = 19> (x)
      back = Cast <to = 1> (q)
    }
  )"));
  auto session = Session::Create(*runtime, path, SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  std::vector<float> xs;
  for (int i = -300; i <= 300; ++i) xs.push_back(static_cast<float>(i) * 0.37f);
  xs.insert(xs.end(), {1e6f, -1e6f, 1.0625f, 0.001f, -0.0f});
  Tensor q = std::move(Tensor::Zeros(DataType::kInt4, {16}).value());
  for (int i = 0; i < 16; ++i) q.SetFromDouble(i, i - 8);
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::FromVector<float>({static_cast<std::int64_t>(xs.size())}, xs).value()});
  inputs.push_back({"q", std::move(q)});
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().message;
  const Tensor& f8 = (*outputs)[0].tensor;
  const Tensor& f5 = (*outputs)[1].tensor;
  ASSERT_EQ(f8.type(), DataType::kFloat8E4M3FN);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(std::to_integer<int>(f8.data()[i]), FloatToSmallFloat(DataType::kFloat8E4M3FN, xs[i])) << xs[i];
    EXPECT_EQ(std::to_integer<int>(f5.data()[i]), FloatToSmallFloat(DataType::kFloat8E5M2, xs[i])) << xs[i];
  }
  const Tensor& back = (*outputs)[2].tensor;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back.values<float>()[i], static_cast<float>(i - 8));
}

}  // namespace
}  // namespace ortkit
