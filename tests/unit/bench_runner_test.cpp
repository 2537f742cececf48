#include "ortkit/bench/runner.h"

#include <atomic>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "test_models.h"

namespace ortkit {
namespace {

constexpr const char* kMatMul = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[batch, 16] x) => (float[batch, 16] y) {
    w = Constant <value = float[16, 16] {1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
                                          0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,
                                          0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,
                                          0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,
                                          0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,
                                          0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,
                                          0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,
                                          0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1}> ()
    m = MatMul (x, w)
    y = Relu (m)
  }
)";

class BenchRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = std::move(Runtime::Create().value());
    bytes_ = testing::ParseModelText(kMatMul).SerializeAsString();
    session_ = NewSession();
    inputs_.push_back({"x", Tensor::Zeros(DataType::kFloat32, {4, 16}).value()});
  }
  std::unique_ptr<Session> NewSession() {
    SessionConfig config;
    config.intra_op_threads = 1;
    auto session = Session::CreateFromBytes(*runtime_, bytes_, config);
    EXPECT_TRUE(session.ok()) << session.error().message;
    return std::move(session).value();
  }
  std::unique_ptr<Runtime> runtime_;
  std::string bytes_;
  std::unique_ptr<Session> session_;
  std::vector<NamedTensor> inputs_;
};

TEST_F(BenchRunnerTest, FixedCountKeepsEverySample) {
  BenchOptions options;
  options.iterations = 57;
  options.warmup = 2;
  options.rows_per_run = 4;
  auto result = RunBenchmark(*session_, inputs_, options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->runs, 57);
  EXPECT_EQ(result->samples_ms.size(), 57u);
  EXPECT_EQ(result->latency.count, 57);
  EXPECT_GT(result->first_run_ms, 0);
  EXPECT_GT(result->latency.min, 0);
  EXPECT_LE(result->latency.min, result->latency.p50);
  EXPECT_LE(result->latency.p50, result->latency.p99);
  EXPECT_LE(result->latency.p99, result->latency.max);
  EXPECT_GT(result->runs_per_s, 0);
  EXPECT_DOUBLE_EQ(result->samples_per_s, result->runs_per_s * 4);
  EXPECT_GT(result->usage.peak_rss_bytes, 1 << 20);
  EXPECT_GE(result->usage.cpu_seconds, 0);
  EXPECT_FALSE(result->failure.has_value());
}

TEST_F(BenchRunnerTest, FixedDurationStopsAtTheDeadline) {
  BenchOptions options;
  options.duration_s = 0.2;
  options.warmup = 0;
  std::atomic<int> reports{0};
  double last = 0;
  options.progress = [&](double fraction) {
    ++reports;
    last = fraction;
  };
  auto result = RunBenchmark(*session_, inputs_, options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_GE(result->wall_s, 0.2);
  EXPECT_LT(result->wall_s, 1.5);
  EXPECT_GT(result->runs, 10);
  EXPECT_GE(reports.load(), 1);
  EXPECT_DOUBLE_EQ(last, 1.0);
}

TEST_F(BenchRunnerTest, ConcurrencyOverSeveralSessionsSharesTheCount) {
  auto second = NewSession();
  Session* sessions[] = {session_.get(), second.get()};
  BenchOptions options;
  options.iterations = 200;
  options.concurrency = 3;
  auto result = RunBenchmark(std::span<Session* const>(sessions), inputs_, options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->runs, 200);
  EXPECT_EQ(result->sessions, 2);
  EXPECT_EQ(result->concurrency, 3);
}

TEST_F(BenchRunnerTest, IoBindingRunsTheBinding) {
  BenchOptions options;
  options.iterations = 30;
  options.io_binding = true;
  options.concurrency = 2;
  auto result = RunBenchmark(*session_, inputs_, options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->runs, 30);
}

TEST_F(BenchRunnerTest, BadOptionsAndInputsAreErrors) {
  BenchOptions options;
  options.concurrency = 0;
  auto no_threads = RunBenchmark(*session_, inputs_, options);
  ASSERT_FALSE(no_threads.ok());
  EXPECT_EQ(no_threads.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(no_threads.error().message.find("concurrency): expected 1 to 1024, got 0"), std::string::npos)
      << no_threads.error().message;

  options = BenchOptions{};
  options.iterations = 0;
  EXPECT_FALSE(RunBenchmark(*session_, inputs_, options).ok());
  // Counts and durations past what can be measured are refused, never reserved or waited for.
  options = BenchOptions{};
  options.iterations = BenchOptions::kMostIterations + 1;
  auto too_many = RunBenchmark(*session_, inputs_, options);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message.find("iterations: expected 1 to 10000000"), std::string::npos);
  options = BenchOptions{};
  options.duration_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(RunBenchmark(*session_, inputs_, options).ok());
  options.duration_s = 1e308;
  EXPECT_FALSE(RunBenchmark(*session_, inputs_, options).ok());

  std::vector<NamedTensor> wrong;
  wrong.push_back({"x", Tensor::Zeros(DataType::kFloat32, {4, 15}).value()});
  auto mismatch = RunBenchmark(*session_, wrong, BenchOptions{});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(mismatch.error().message.find("input 'x' dimension 1 is 15"), std::string::npos)
      << mismatch.error().message;
}

}  // namespace
}  // namespace ortkit
