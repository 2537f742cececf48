#include "ortkit/bench/run_comparison.h"

#include <random>

#include <gtest/gtest.h>

namespace ortkit {
namespace {

ComparablePoint Point(const std::string& label, double centre, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> noise(0, centre * 0.03);
  ComparablePoint p;
  p.label = label;
  double total = 0;
  for (int i = 0; i < 400; ++i) {
    p.samples_ms.push_back(centre + noise(random));
    total += p.samples_ms.back();
  }
  p.runs_per_s = 1000 * 400 / total;
  return p;
}

const FigureComparison& Figure(const PointComparison& p, const std::string& name) {
  for (const auto& f : p.figures) {
    if (f.figure == name) return f;
  }
  static FigureComparison none;
  ADD_FAILURE() << "no figure " << name;
  return none;
}

TEST(BenchCompare, SameDistributionIsWithinNoise) {
  auto report = CompareRuns({Point("batch=1", 2.0, 1)}, {Point("batch=1", 2.0, 2)}, CompareOptions{});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->verdict, ChangeVerdict::kWithinNoise);
  const auto& p50 = Figure(report->points[0], "p50 latency");
  EXPECT_LT(p50.low, 1.0);
  EXPECT_GT(p50.high, 1.0);
  EXPECT_TRUE(p50.gates);
}

TEST(BenchCompare, TenPercentSlowerIsARegression) {
  auto report = CompareRuns({Point("batch=1", 2.0, 1), Point("batch=8", 5.0, 3)},
                            {Point("batch=1", 2.2, 2), Point("batch=8", 5.0, 4)}, CompareOptions{});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->verdict, ChangeVerdict::kSlower);
  EXPECT_EQ(report->points[0].verdict, ChangeVerdict::kSlower);
  EXPECT_EQ(report->points[1].verdict, ChangeVerdict::kWithinNoise);
  const auto& p50 = Figure(report->points[0], "p50 latency");
  EXPECT_NEAR(p50.ratio, 1.1, 0.02);
  EXPECT_GT(p50.low, 1.0);
  const auto& throughput = Figure(report->points[0], "throughput");
  EXPECT_NEAR(throughput.ratio, 1 / 1.1, 0.02);
  EXPECT_LT(throughput.high, 1.0);
  EXPECT_EQ(throughput.verdict, ChangeVerdict::kSlower);
}

TEST(BenchCompare, FasterEverywhereAndTheMinimumChange) {
  auto faster = CompareRuns({Point("a", 2.0, 1)}, {Point("a", 1.6, 2)}, CompareOptions{});
  EXPECT_EQ(faster->verdict, ChangeVerdict::kFaster);
  // A real but small change (1%) stays within noise under a 2% minimum.
  CompareOptions options;
  options.min_change = 0.02;
  auto small = CompareRuns({Point("a", 2.0, 1)}, {Point("a", 2.02, 1)}, options);
  EXPECT_EQ(small->verdict, ChangeVerdict::kWithinNoise);
}

TEST(BenchCompare, UnmatchedAndEmpty) {
  auto report =
      CompareRuns({Point("a", 2.0, 1), Point("b", 2.0, 1)}, {Point("a", 2.0, 2), Point("c", 2.0, 2)}, CompareOptions{});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->unmatched, (std::vector<std::string>{"b", "c"}));
  auto none = CompareRuns({Point("a", 2.0, 1)}, {Point("z", 2.0, 2)}, CompareOptions{});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("share no shape"), std::string::npos);
  ComparablePoint empty;
  empty.label = "a";
  EXPECT_FALSE(CompareRuns({Point("a", 2.0, 1)}, {empty}, CompareOptions{}).ok());
}

}  // namespace
}  // namespace ortkit
