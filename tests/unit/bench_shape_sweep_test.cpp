#include "ortkit/bench/shape_sweep.h"

#include <gtest/gtest.h>

namespace ortkit {
namespace {

TensorSpec Spec(std::string name, std::vector<DimSpec> dims) {
  TensorSpec s;
  s.name = std::move(name);
  s.type = DataType::kFloat32;
  s.dims = std::move(dims);
  return s;
}

DimSpec Sym(std::string s) { return DimSpec{-1, std::move(s)}; }
DimSpec Fixed(std::int64_t v) { return DimSpec{v, ""}; }

const std::vector<TensorSpec> kEncoder = {Spec("x", {Sym("batch"), Sym("seq_len"), Fixed(64)})};

TEST(BenchShapeSweep, ParsesListsAndSweepAxes) {
  EXPECT_EQ(ParseSizeList("1,8,32", "--batch").value(), (std::vector<std::int64_t>{1, 8, 32}));
  auto sweeps = ParseSweepAxes({"seq_len=16,64", "other=3"}).value();
  ASSERT_EQ(sweeps.size(), 2u);
  EXPECT_EQ(sweeps[0].dim, "seq_len");
  EXPECT_EQ(sweeps[0].values, (std::vector<std::int64_t>{16, 64}));
  // A bare number continues the previous name; a new NAME= starts another.
  auto mixed = ParseSweepAxes({"batch=4,seq_len=16,64"}).value();
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_EQ(mixed[1].values.size(), 2u);
}

TEST(BenchShapeSweep, RejectsImpossibleSizes) {
  auto zero = ParseSizeList("1,0", "--batch");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("size 0 is impossible"), std::string::npos) << zero.error().message;
  EXPECT_FALSE(ParseSizeList("1,x", "--batch").ok());
  EXPECT_FALSE(ParseSizeList("4,4", "--batch").ok());
  EXPECT_FALSE(ParseSweepAxes({"16,64"}).ok());
  EXPECT_FALSE(ParseSweepAxes({"seq_len=-3"}).ok());
}

TEST(BenchShapeSweep, CrossesBatchAndDimsWithBatchFastest) {
  auto points = ExpandShapePoints(kEncoder, {1, 8}, {{"seq_len", {16, 64}}}).value();
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].label, "batch=1 seq_len=16");
  EXPECT_EQ(points[1].label, "batch=8 seq_len=16");
  EXPECT_EQ(points[1].batch, 8);
  EXPECT_EQ(points[3].dims.at("seq_len"), 64);
  // No --batch: the batch dimension's default size.
  auto defaults = ExpandShapePoints(kEncoder, {}, {}).value();
  ASSERT_EQ(defaults.size(), 1u);
  EXPECT_EQ(defaults[0].label, "batch=1");
}

TEST(BenchShapeSweep, ErrorsNameTheFlagAndTheModelsDimensions) {
  auto missing = ExpandShapePoints(kEncoder, {}, {{"sequence", {4}}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(
      missing.error().message.find("no input has a dimension named 'sequence'; symbolic dimensions: batch, seq_len"),
      std::string::npos)
      << missing.error().message;
  const std::vector<TensorSpec> fixed = {Spec("x", {Fixed(1), Fixed(3)})};
  auto impossible = ExpandShapePoints(fixed, {8}, {});
  ASSERT_FALSE(impossible.ok());
  EXPECT_NE(impossible.error().message.find("impossible shape"), std::string::npos) << impossible.error().message;
  EXPECT_TRUE(ExpandShapePoints(fixed, {1}, {}).ok());  // the fixed size itself is fine
  auto twice = ExpandShapePoints(kEncoder, {2}, {{"batch", {4}}});
  EXPECT_FALSE(twice.ok());
}

TEST(BenchShapeSweep, FindsTheSharedBatchSymbol) {
  const std::vector<TensorSpec> bert = {Spec("input_ids", {Sym("batch"), Sym("seq")}),
                                        Spec("mask", {Sym("batch"), Sym("seq")})};
  EXPECT_EQ(FindBatchSymbol(bert), "batch");
  const std::vector<TensorSpec> disagree = {Spec("a", {Sym("n")}), Spec("b", {Sym("m")})};
  EXPECT_EQ(FindBatchSymbol(disagree), "");
}

}  // namespace
}  // namespace ortkit
