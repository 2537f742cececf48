#include "ortkit/tensor/comparison.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ortkit {
namespace {

Tensor F32(std::vector<std::int64_t> shape, std::vector<float> v) {
  return Tensor::FromVector<float>(shape, v).value();
}

TEST(CompareTensors, WithinTolerancePasses) {
  auto c = CompareTensors("y", F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {1, 2.0001f, 3, 4}), {1e-5, 1e-3});
  EXPECT_TRUE(c.passed) << c.problem;
  EXPECT_NEAR(c.max_abs_error, 1e-4, 1e-6);
  EXPECT_EQ(c.worst_position, (std::vector<std::int64_t>{0, 1}));
}

TEST(CompareTensors, ReportsWorstElementAndCounts) {
  auto c = CompareTensors("y", F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2, 3}, {1, 2, 3, 4, 5.5f, 6.1f}), {1e-5, 1e-3});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.worst_position, (std::vector<std::int64_t>{1, 1}));
  EXPECT_FLOAT_EQ(c.worst_expected, 5);
  EXPECT_FLOAT_EQ(c.worst_actual, 5.5);
  EXPECT_NE(c.problem.find("2 of 6 elements"), std::string::npos) << c.problem;
}

TEST(CompareTensors, NanOnOneSideOnlyFails) {
  auto c = CompareTensors("y", F32({3}, {1, NAN, 3}), F32({3}, {NAN, NAN, 3}), {1e-5, 1e-3});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.nan_only_actual, 1);
  EXPECT_EQ(c.nan_only_expected, 0);
  EXPECT_EQ(c.worst_position, (std::vector<std::int64_t>{0}));
  auto inf = CompareTensors("y", F32({2}, {INFINITY, 1}), F32({2}, {-INFINITY, 1}), {1e-5, 1e-3});
  EXPECT_EQ(inf.inf_mismatch, 1);
}

TEST(CompareTensors, ShapeAndTypeMismatchesAreNamed) {
  auto shape = CompareTensors("y", F32({2, 2}, {1, 2, 3, 4}), F32({4}, {1, 2, 3, 4}), {});
  EXPECT_FALSE(shape.passed);
  EXPECT_EQ(shape.problem, "shape differs: expected float32[2, 2], got float32[4]");
  auto type = CompareTensors("y", Tensor::FromVector<double>({1}, {1}).value(), F32({1}, {1}), {});
  EXPECT_FALSE(type.type_match);
}

// Rounding in a float32 sum is relative to the size of its terms: an element that cancels to near 0 in an
// output reaching 250 is off by about 250 × eps. The default tolerance allows for that, a given one does not.
TEST(CompareTensors, DefaultAbsoluteToleranceGrowsWithTheOutputsScale) {
  const Tensor expected = F32({3}, {250, -120, 0.001f});
  const Tensor actual = F32({3}, {250.0001f, -120, 0.0015f});  // 5e-4 off where the value is near 0
  const Tolerance scaled = ToleranceRules{}.For("logits", DataType::kFloat32);
  EXPECT_TRUE(scaled.scaled);
  auto c = CompareTensors("logits", expected, actual, scaled);
  EXPECT_TRUE(c.passed) << c.problem;
  EXPECT_FLOAT_EQ(c.atol_scale, 250);
  EXPECT_NEAR(c.EffectiveAtol(), 2.5e-3, 1e-9);

  // A real defect is still caught: an error of the size of the values themselves.
  c = CompareTensors("logits", expected, F32({3}, {250, -119, 0.001f}), scaled);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.problem.find("the output's largest |value| 250"), std::string::npos) << c.problem;

  // --atol given: applied as given.
  ToleranceRules given;
  given.atol = 1e-5;
  EXPECT_FALSE(given.For("logits", DataType::kFloat32).scaled);
  c = CompareTensors("logits", expected, actual, given.For("logits", DataType::kFloat32));
  EXPECT_FALSE(c.passed);
  EXPECT_FLOAT_EQ(c.atol_scale, 1);

  // Outputs below 1 in magnitude keep the plain default.
  c = CompareTensors("p", F32({2}, {0.5f, 0.001f}), F32({2}, {0.5f, 0.0015f}), scaled);
  EXPECT_FALSE(c.passed);
}

TEST(CompareTensors, OneLargeValueDoesNotHideErrorsEverywhereElse) {
  const Tolerance scaled = ToleranceRules{}.For("y", DataType::kFloat32);
  // Values of 1 and one of 1e6: the scaled atol is 10.
  std::vector<float> expected(101, 1.0F);
  expected[0] = 1e6F;
  for (int i : {10, 20, 30}) expected[i] = 0;
  std::vector<float> actual = expected;
  // Three elements that cancel to zero, off by 1e-3: the case the scale is for. Passes.
  for (int i : {10, 20, 30}) actual[i] = 1e-3F;
  auto c = CompareTensors("y", F32({101}, expected), F32({101}, actual), scaled);
  EXPECT_TRUE(c.passed) << c.problem;
  EXPECT_EQ(c.scale_only, 3);
  // Every small value off by 5 (500%): within atol 10, but only thanks to the scale. Fails.
  for (std::size_t i = 1; i < actual.size(); ++i) actual[i] = expected[i] + 5.0F;
  c = CompareTensors("y", F32({101}, expected), F32({101}, actual), scaled);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_EQ(c.scale_only, 100);
  EXPECT_NE(c.problem.find("100 of 101 elements"), std::string::npos) << c.problem;
  EXPECT_NE(c.problem.find("give --atol"), std::string::npos) << c.problem;
  EXPECT_EQ(c.ToJson().at("scale_only"), 100);
  // A tolerance given is applied as given: these are plain mismatches then.
  ToleranceRules given;
  given.atol = 1e-5;
  c = CompareTensors("y", F32({101}, expected), F32({101}, actual), given.For("y", DataType::kFloat32));
  EXPECT_EQ(c.mismatches, 100);
  EXPECT_EQ(c.scale_only, 0);
}

TEST(CompareOutputs, MissingAndExtraOutputs) {
  std::vector<NamedTensor> expected;
  expected.push_back({"a", F32({1}, {1})});
  expected.push_back({"b", F32({1}, {1})});
  std::vector<NamedTensor> actual;
  actual.push_back({"a", F32({1}, {1})});
  actual.push_back({"c", F32({1}, {1})});
  auto report = CompareOutputs(expected, actual, {});
  EXPECT_FALSE(report.Passed());
  EXPECT_EQ(report.missing_in_run, std::vector<std::string>{"b"});
  EXPECT_EQ(report.not_in_reference, std::vector<std::string>{"c"});
}

TEST(ToleranceRules, PerOutputBeatsGlobalBeatsDefault) {
  ToleranceRules rules;
  rules.atol = 0.5;
  rules.per_output["logits"] = {1, 2};
  EXPECT_EQ(rules.For("logits", DataType::kFloat32).atol, 1);
  EXPECT_EQ(rules.For("other", DataType::kFloat32).atol, 0.5);
  EXPECT_EQ(rules.For("other", DataType::kFloat32).rtol, 1e-3);
  EXPECT_EQ(rules.For("ids", DataType::kInt64).rtol, 0);
}

// A NaN tolerance made every comparison pass (no difference is greater than NaN).
TEST(ToleranceRules, RefusesNanInfiniteAndNegativeTolerances) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [rules, flag] : std::vector<std::pair<ToleranceRules, std::string>>{
           {{nan, std::nullopt, {}}, "--atol is nan"},
           {{std::nullopt, nan, {}}, "--rtol is nan"},
           {{inf, std::nullopt, {}}, "--atol is inf"},
           {{-1.0, std::nullopt, {}}, "--atol is -1"},
           {{std::nullopt, std::nullopt, {{"y", Tolerance{nan, 0}}}}, "--per-output y: ATOL is nan"},
           {{std::nullopt, std::nullopt, {{"y", Tolerance{0, -nan}}}}, "--per-output y: RTOL is"},
       }) {
    const Status status = rules.Validate();
    ASSERT_FALSE(status.ok()) << flag;
    EXPECT_EQ(status.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(status.error().message.find(flag), std::string::npos) << status.error().message;
    EXPECT_NE(status.error().message.find("a finite number >= 0"), std::string::npos) << status.error().message;
  }
  EXPECT_TRUE((ToleranceRules{0.0, 1e-3, {{"y", Tolerance{1e-5, 0}}}}.Validate().ok()));
}

}  // namespace
}  // namespace ortkit
