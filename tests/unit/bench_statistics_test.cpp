#include "ortkit/core/sample_stats.h"

#include <random>

#include <gtest/gtest.h>

namespace ortkit {
namespace {

TEST(BenchStatistics, PercentilesInterpolateLikeNumpy) {
  // numpy.percentile([1..10], [50, 90, 99, 99.9]) = 5.5, 9.1, 9.91, 9.991
  std::vector<double> samples = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
  const LatencyStats s = Summarize(samples);
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_NEAR(s.p90, 9.1, 1e-12);
  EXPECT_NEAR(s.p95, 9.55, 1e-12);
  EXPECT_NEAR(s.p99, 9.91, 1e-12);
  EXPECT_NEAR(s.p999, 9.991, 1e-12);
  EXPECT_NEAR(s.stddev, 3.0276503540974917, 1e-12);  // numpy.std(ddof=1)
}

TEST(BenchStatistics, EmptyAndSingleSample) {
  EXPECT_EQ(Summarize({}).count, 0);
  const std::vector<double> one = {4.25};
  const LatencyStats s = Summarize(one);
  EXPECT_DOUBLE_EQ(s.p50, 4.25);
  EXPECT_DOUBLE_EQ(s.p999, 4.25);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
}

TEST(BenchStatistics, ScaledMadIgnoresOutliers) {
  std::vector<double> samples;
  for (int i = 0; i < 99; ++i) samples.push_back(2.0 + 0.1 * (i % 3 - 1));  // 1.9, 2.0, 2.1
  samples.push_back(1000);                                                  // two stalls
  samples.push_back(1000);
  EXPECT_NEAR(ScaledMad(samples), 1.4826 * 0.1, 1e-9);
}

TEST(BenchStatistics, BootstrapBandSeparatesRealShiftsFromNoise) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> noise(0, 0.05);
  std::vector<double> base, same, slower;
  for (int i = 0; i < 500; ++i) {
    base.push_back(1.0 + noise(random));
    same.push_back(1.0 + noise(random));
    slower.push_back(1.1 + noise(random));
  }
  const RatioInterval unchanged = BootstrapRatio(base, same, SampleStatistic::kP50);
  EXPECT_LT(unchanged.low, 1.0);
  EXPECT_GT(unchanged.high, 1.0);
  const RatioInterval shifted = BootstrapRatio(base, slower, SampleStatistic::kP50);
  EXPECT_NEAR(shifted.ratio, 1.1, 0.02);
  EXPECT_GT(shifted.low, 1.05);
  EXPECT_LT(shifted.high, 1.15);
  // Deterministic for a seed.
  const RatioInterval again = BootstrapRatio(base, slower, SampleStatistic::kP50);
  EXPECT_EQ(shifted.low, again.low);
  EXPECT_NEAR(ComputeStatistic(slower, SampleStatistic::kMean), 1.1, 0.01);
}

TEST(BenchStatistics, ThinKeepsEvenlySpacedSamples) {
  std::vector<double> samples(1000);
  for (int i = 0; i < 1000; ++i) samples[i] = i;
  const auto kept = Thin(samples, 100);
  ASSERT_EQ(kept.size(), 100u);
  EXPECT_EQ(kept[0], 0);
  EXPECT_EQ(kept[1], 10);
  EXPECT_EQ(kept[99], 990);
  EXPECT_EQ(Thin(samples, 5000).size(), 1000u);
}

}  // namespace
}  // namespace ortkit
