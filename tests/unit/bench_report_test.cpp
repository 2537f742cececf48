#include "ortkit/bench/report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ortkit {
namespace {

MeasuredPoint Point(std::int64_t batch, std::int64_t seq_len, double samples_per_s) {
  MeasuredPoint p;
  p.point.dims = {{"batch", batch}, {"seq_len", seq_len}};
  p.point.batch = batch;
  p.point.label = "batch=" + std::to_string(batch) + " seq_len=" + std::to_string(seq_len);
  p.inputs = {{"input_ids", {batch, seq_len}, "synthesised: indices into 'emb' (100 rows)"}};
  p.result.samples_ms = {1.5, 1.25, 2.0, 1.75};
  p.result.latency = Summarize(p.result.samples_ms);
  p.result.runs = 4;
  p.result.first_run_ms = 9.5;
  p.result.wall_s = 0.25;
  p.result.runs_per_s = 16;
  p.result.samples_per_s = samples_per_s;
  p.result.usage = {123 << 20, 0.5, 2.0};
  return p;
}

BenchReport SampleReport() {
  BenchReport r;
  r.settings.model = "encoder.onnx";
  r.settings.onnxruntime = "1.20.0";
  r.settings.intra_op_threads = 2;
  r.settings.execution_mode = "parallel";
  r.settings.optimization_level = 1;
  r.settings.cpu_arena = false;
  r.settings.concurrency = 2;
  r.settings.hardware_threads = 8;
  r.settings.cores = 4;
  r.settings.duration = "300ms";
  r.session_create_ms = 12.5;
  r.peak_rss_bytes = 456 << 20;
  r.points = {Point(1, 8, 16), Point(4, 8, 48), Point(4, 16, 40)};
  r.points[2].result.failure = MakeError(ErrorKind::kRuntime, "out of memory");
  r.stopped = "batch=4 seq_len=16: a run failed after 4 measured runs: out of memory";
  r.size_notes = {"dimensions no flag sets are at x:1=7"};
  ProfileReport profile;
  profile.trace = "ortkit_profile_2026.json";
  profile.runs = 6;
  profile.node_total_us = 900;
  profile.nodes = {{"mm0", "MatMul", "CPUExecutionProvider", 6, 600, 0.75}};
  profile.op_types = {{"MatMul", 1, 6, 600, 0.75}};
  profile.providers = {{"CPUExecutionProvider", 3, 18, 900, 1}};
  r.profile = profile;
  SetThroughputVsBatchOne(r.points, "batch");
  return r;
}

TEST(BenchReport, ThroughputIsRelativeToBatchOneWithTheOtherDimsEqual) {
  const BenchReport r = SampleReport();
  EXPECT_DOUBLE_EQ(r.points[0].throughput_vs_batch1, 1.0);
  EXPECT_DOUBLE_EQ(r.points[1].throughput_vs_batch1, 3.0);
  EXPECT_EQ(r.points[2].throughput_vs_batch1, 0);  // no batch-1 point at seq_len 16
}

TEST(BenchReport, RoundTripsThroughJson) {
  const BenchReport original = SampleReport();
  const nlohmann::json json = original.ToJson();
  EXPECT_EQ(json["config"]["duration"], "300ms");
  EXPECT_FALSE(json["config"].contains("iterations"));
  EXPECT_EQ(json["results"][1]["latency_ms"]["p99_9"], original.points[1].result.latency.p999);
  EXPECT_FALSE(json["results"][2].contains("throughput_vs_batch1"));

  auto read = BenchReport::FromJson(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->settings.model, "encoder.onnx");
  EXPECT_EQ(read->settings.execution_mode, "parallel");
  EXPECT_FALSE(read->settings.cpu_arena);
  EXPECT_EQ(read->settings.duration, std::optional<std::string>("300ms"));
  EXPECT_FALSE(read->settings.iterations.has_value());
  ASSERT_EQ(read->points.size(), 3u);
  const MeasuredPoint& p = read->points[1];
  EXPECT_EQ(p.point.label, "batch=4 seq_len=8");
  EXPECT_EQ(p.point.dims.at("seq_len"), 8);
  EXPECT_EQ(p.point.batch, 4);
  EXPECT_EQ(p.result.samples_ms, original.points[1].result.samples_ms);
  EXPECT_EQ(p.result.latency.p50, original.points[1].result.latency.p50);
  EXPECT_EQ(p.inputs.at(0).shape, (std::vector<std::int64_t>{4, 8}));
  ASSERT_TRUE(read->points[2].result.failure.has_value());
  EXPECT_EQ(read->points[2].result.failure->message, "out of memory");
  EXPECT_EQ(read->stopped, original.stopped);
  ASSERT_TRUE(read->profile.has_value());
  EXPECT_EQ(read->profile->nodes.at(0).op_type, "MatMul");
  EXPECT_EQ(read->profile->trace, original.profile->trace);
  // Everything the JSON holds survives: writing what was read gives the same JSON.
  EXPECT_EQ(read->ToJson(), json);

  const auto comparable = ComparablePoints(*read);
  ASSERT_EQ(comparable.size(), 3u);
  EXPECT_EQ(comparable[0].label, "batch=1 seq_len=8");
  EXPECT_EQ(comparable[0].runs_per_s, 16);
}

TEST(BenchReport, KeepsAtMostTheSavedSamples) {
  BenchReport r;
  r.points = {Point(1, 8, 16)};
  r.points[0].result.samples_ms.assign(kSavedSamples * 3, 1.0);
  r.points[0].result.runs = static_cast<std::int64_t>(kSavedSamples * 3);
  const nlohmann::json json = r.ToJson();
  EXPECT_EQ(json["results"][0]["samples_kept"], kSavedSamples);
  EXPECT_EQ(json["results"][0]["runs"], kSavedSamples * 3);
}

TEST(BenchReport, ReadsAReportWithOnlyWhatCompareNeeds) {
  auto read = BenchReport::FromJson(
      nlohmann::json::parse(R"({"results": [{"label": "default", "samples_ms": [1, 2], "runs_per_s": 600}]})"));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->points.size(), 1u);
  EXPECT_EQ(read->points[0].result.runs, 2);
  EXPECT_FALSE(read->profile.has_value());
}

TEST(BenchReport, RejectsAMalformedReportSayingWhatIsWrong) {
  auto expect_error = [](const char* text, const std::string& expected) {
    auto read = BenchReport::FromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(read.ok()) << text;
    EXPECT_EQ(read.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(read.error().message.find(expected), std::string::npos) << read.error().message;
  };
  expect_error(R"({"x": 1})", "not an `ortkit bench --format json` report (no \"results\" array)");
  expect_error(R"([1, 2])", "no \"results\" array");
  expect_error(R"({"results": [{"label": "default", "runs_per_s": 600}]})",
               "a result lacks label, samples_ms or runs_per_s");
  expect_error(R"({"results": [{"label": "default", "samples_ms": "fast", "runs_per_s": 600}]})",
               "a result lacks label, samples_ms or runs_per_s");
  expect_error(R"({"results": [{"label": "a", "samples_ms": [1], "runs_per_s": 6, "batch": "eight"}]})",
               "results[0].batch: expected an integer, got \"eight\"");
  expect_error(R"({"results": [], "config": {"io_binding": 1}})", "config.io_binding: expected true or false, got 1");
  expect_error(R"({"results": [], "profile": {"top_nodes": {}}})", "profile.top_nodes: expected a list, got object");
}

}  // namespace
}  // namespace ortkit
