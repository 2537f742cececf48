#include "ortkit/bench/tune.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/bench/plot.h"
#include "test_models.h"

namespace ortkit {
namespace {

TEST(BenchTune, CandidatesFitTheCores) {
  TuneSpace space;
  space.cores = 4;
  space.batches = {1, 8};
  space.max_instances = 4;
  const auto candidates = TuneCandidates(space);
  ASSERT_FALSE(candidates.empty());
  for (const auto& c : candidates) {
    EXPECT_LE(c.instances * c.intra_op_threads * c.inter_op_threads, 4) << c.Describe();
    EXPECT_EQ(c.inter_op_threads, c.parallel ? 2 : 1);
  }
  // intra 1: 4 sequential + 2 parallel instance counts; intra 2: 2 + 1; intra 4: 1 + 0; two batches each.
  EXPECT_EQ(candidates.size(), static_cast<std::size_t>((4 + 2 + 2 + 1 + 1) * 2));
  // Batches ascend within one session configuration.
  EXPECT_EQ(candidates[0].batch, 1);
  EXPECT_EQ(candidates[1].batch, 8);
  space.cores = 1;
  for (const auto& c : TuneCandidates(space)) EXPECT_FALSE(c.parallel);
}

TuneMeasurement Measured(int intra, std::int64_t batch, double p99, double rate) {
  TuneMeasurement m;
  m.candidate.intra_op_threads = intra;
  m.candidate.batch = batch;
  m.measured = true;
  m.latency.p99 = p99;
  m.samples_per_s = rate;
  return m;
}

TEST(BenchTune, PicksTheFastestWithinTheBudget) {
  std::vector<TuneMeasurement> m = {Measured(1, 1, 5, 200), Measured(1, 8, 30, 900), Measured(1, 32, 80, 1500),
                                    Measured(2, 8, 20, 900)};
  m.push_back(TuneMeasurement{});  // unmeasured
  EXPECT_EQ(PickBest(m, 50), 1u);  // a tie on throughput goes to fewer threads
  m[3].samples_per_s = 950;
  EXPECT_EQ(PickBest(m, 50), 3u);
  EXPECT_EQ(PickBest(m, 100), 2u);
  EXPECT_FALSE(PickBest(m, 1).has_value());
  // A tie goes to the configuration using fewer threads.
  std::vector<TuneMeasurement> tie = {Measured(2, 8, 20, 900), Measured(1, 8, 20, 900)};
  EXPECT_EQ(PickBest(tie, 50), 1u);
}

TEST(BenchTune, SweepsARealModelAndWritesTheServingConfig) {
  testing::TempDir dir;
  const auto path = dir.WriteModel("m.onnx", testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 32] x) => (float[batch, 32] y) {
      y = Softmax <axis = -1> (x)
    }
  )"));
  auto runtime = Runtime::Create().value();
  TuneOptions options;
  options.latency_budget_ms = 50;
  options.time_budget_s = 2.0;
  options.space.cores = 2;
  options.space.batches = {1, 4};
  options.space.max_instances = 2;
  options.warmup = 1;
  std::size_t progress_calls = 0;
  options.progress = [&](std::size_t, std::size_t) { ++progress_calls; };
  InputsForBatch inputs = [](std::int64_t batch) -> Result<std::vector<NamedTensor>> {
    std::vector<NamedTensor> t;
    ORTKIT_ASSIGN_OR_RETURN(Tensor x, Tensor::Zeros(DataType::kFloat32, {batch, 32}));
    t.push_back({"x", std::move(x)});
    return t;
  };
  auto report = Tune(*runtime, path, inputs, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->measurements.size(), TuneCandidates(options.space).size());
  EXPECT_EQ(progress_calls, report->measurements.size());
  ASSERT_TRUE(report->best.has_value());
  EXPECT_LT(report->elapsed_s, 6.0);
  const auto& best = report->measurements[*report->best];
  EXPECT_TRUE(best.measured);
  EXPECT_LE(best.latency.p99, 50);

  const nlohmann::json config = ServingConfigJson(*report, options, "softmax", "batch", {});
  EXPECT_EQ(config["name"], "softmax");
  EXPECT_EQ(config["instances"], best.candidate.instances);
  EXPECT_EQ(config["session"]["intra_op_threads"], best.candidate.intra_op_threads);
  EXPECT_EQ(config["session"]["execution_mode"], best.candidate.parallel ? "parallel" : "sequential");
  EXPECT_EQ(config["session"]["optimization_level"], 99);
  EXPECT_EQ(config["batching"]["enabled"], best.candidate.batch > 1);
  EXPECT_GE(config["batching"]["max_queue_delay_us"].get<int>(), 100);
  EXPECT_EQ(config["tuning"]["candidates"].size(), report->measurements.size());
  for (const char* key : {"provider", "inter_op_threads"}) EXPECT_TRUE(config["session"].contains(key)) << key;
  for (const char* key :
       {"max_batch_size", "preferred_batch_sizes", "max_queue_size", "timeout_us", "priority_levels"}) {
    EXPECT_TRUE(config["batching"].contains(key)) << key;
  }
}

TEST(BenchPlot, DrawsOneLinePerSeriesAndFigure) {
  std::vector<PlotPoint> points = {{"seq_len=16", 1, 1.0, 1.5, 1000},
                                   {"seq_len=16", 8, 4.0, 5.0, 2000},
                                   {"seq_len=64", 1, 2.0, 2.5, 500},
                                   {"seq_len=64", 8, 9.0, 11.0, 890}};
  const std::string svg = RenderSweepSvg(points, "bench <model>");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  std::size_t lines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  EXPECT_EQ(lines, 6u);  // two series × (p50, p99, throughput)
  EXPECT_NE(svg.find("bench &lt;model&gt;"), std::string::npos);
  EXPECT_NE(svg.find("seq_len=64"), std::string::npos);
}

}  // namespace
}  // namespace ortkit
