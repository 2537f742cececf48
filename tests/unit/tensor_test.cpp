#include "ortkit/tensor/tensor.h"

#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace ortkit {
namespace {

TEST(Tensor, AllocatesAndSlicesRows) {
  auto t = Tensor::FromVector<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Describe(), "float32[3, 2]");
  auto rows = t->SliceRows(1, 3);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->shape(), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(rows->values<float>()[0], 3);
  EXPECT_FALSE(t->SliceRows(2, 4).ok());
}

TEST(Tensor, AViewKeepsItsBytesAliveAndClonesIntoItsOwn) {
  bool released = false;
  auto owner =
      std::shared_ptr<std::vector<float>>(new std::vector<float>{1, 2, 3, 4, 5, 6}, [&](std::vector<float>* v) {
        released = true;
        delete v;
      });
  auto* second_row = reinterpret_cast<std::byte*>(owner->data() + 3);
  auto view = Tensor::View(DataType::kFloat32, {1, 3}, std::shared_ptr<std::byte>(owner, second_row));
  ASSERT_TRUE(view.ok()) << view.error().message;
  owner.reset();
  EXPECT_FALSE(released);  // the view holds the owner
  EXPECT_EQ(view->data(), second_row);
  EXPECT_EQ(view->values<float>()[2], 6);
  Tensor copy = view->Clone();
  EXPECT_NE(copy.data(), view->data());
  Tensor moved = std::move(view).value();
  EXPECT_EQ(moved.values<float>()[0], 4);
  moved = Tensor();
  EXPECT_TRUE(released);
  EXPECT_EQ(copy.values<float>()[1], 5);
  EXPECT_FALSE(Tensor::View(DataType::kString, {1}, nullptr).ok());
  EXPECT_FALSE(Tensor::View(DataType::kFloat32, {-1}, nullptr).ok());
}

TEST(Tensor, RejectsBadShapes) {
  EXPECT_FALSE(Tensor::Allocate(DataType::kFloat32, {2, -1}).ok());
  EXPECT_FALSE(Tensor::Allocate(DataType::kFloat32, {1LL << 40, 1LL << 40}).ok());
  EXPECT_FALSE(Tensor::FromVector<float>({2}, {1, 2, 3}).ok());
}

TEST(Tensor, HalfRoundTripsExactValuesAndSpecials) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(1e6f))));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.5f)), 1.5f);
}

TEST(Tensor, ConvertsThroughDouble) {
  auto t = Tensor::Zeros(DataType::kInt8, {3});
  ASSERT_TRUE(t.ok());
  t->SetFromDouble(0, 300);
  t->SetFromDouble(1, -2.6);
  EXPECT_EQ(t->AsDouble(0), 127);
  EXPECT_EQ(t->AsDouble(1), -3);
  EXPECT_EQ(t->AsDouble(2), 0);
}

TEST(DataTypes, LookUpByEveryName) {
  EXPECT_EQ(FindDataTypeByNumpy("<f4")->type, DataType::kFloat32);
  EXPECT_EQ(FindDataTypeByNumpy("|b1")->type, DataType::kBool);
  EXPECT_EQ(FindDataTypeByNumpy("=i8")->type, DataType::kInt64);
  EXPECT_EQ(FindDataTypeByNumpy(">f4"), nullptr);
  EXPECT_EQ(FindDataTypeByProtocol("FP16")->type, DataType::kFloat16);
  EXPECT_EQ(FindDataTypeByName("float")->type, DataType::kFloat32);
}

}  // namespace
}  // namespace ortkit
