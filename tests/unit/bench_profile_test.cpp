#include "ortkit/runtime/profile.h"

#include <gtest/gtest.h>

#include "ortkit/bench/runner.h"
#include "test_models.h"

namespace ortkit {
namespace {

TEST(BenchProfile, ParsesARealTraceFromTheRuntime) {
  testing::TempDir dir;
  auto runtime = Runtime::Create().value();
  const auto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 8] x) => (float[batch, 8] y) {
      w = Constant <value = float[8, 8] {1,0,0,0,0,0,0,0, 0,1,0,0,0,0,0,0, 0,0,1,0,0,0,0,0, 0,0,0,1,0,0,0,0,
                                         0,0,0,0,1,0,0,0, 0,0,0,0,0,1,0,0, 0,0,0,0,0,0,1,0, 0,0,0,0,0,0,0,1}> ()
      m = MatMul (x, w)
      y = Relu (m)
    }
  )");
  SessionConfig config;
  config.optimization_level = OptimizationLevel::kOff;  // keep MatMul and Relu apart
  config.enable_profiling = true;
  config.profile_prefix = (dir.path() / "trace").string();
  auto session = Session::CreateFromBytes(*runtime, model.SerializeAsString(), config).value();
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, {2, 8}).value()});
  BenchOptions options;
  options.iterations = 7;
  options.warmup = 0;
  ASSERT_TRUE(RunBenchmark(*session, inputs, options).ok());
  auto trace = EndProfiling(*session);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_TRUE(std::filesystem::exists(*trace));
  EXPECT_EQ(trace->parent_path(), dir.path());

  auto report = ReadProfileTrace(*trace, "cpu");
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->runs, 8);  // the first run and 7 measured
  EXPECT_GT(report->node_total_us, 0);
  ASSERT_GE(report->op_types.size(), 2u);
  bool saw_matmul = false;
  for (const auto& n : report->nodes) {
    EXPECT_EQ(n.provider, "CPUExecutionProvider");
    EXPECT_EQ(n.calls, 8) << n.node;
    if (n.op_type == "MatMul") saw_matmul = true;
  }
  EXPECT_TRUE(saw_matmul);
  ASSERT_EQ(report->providers.size(), 1u);
  EXPECT_NEAR(report->providers[0].share, 1.0, 1e-9);
  EXPECT_TRUE(report->memory_copies.empty());
  EXPECT_TRUE(report->cpu_fallbacks.empty());
  // Ending a session that does not profile is an error, not a crash.
  auto plain = Session::CreateFromBytes(*runtime, model.SerializeAsString(), SessionConfig{}).value();
  EXPECT_FALSE(EndProfiling(*plain).ok());
}

TEST(BenchProfile, FindsCopiesAndCpuFallbacksWhenAnotherProviderWasAsked) {
  // The shape of a CUDA trace: two nodes on CUDA, a copy back to the host, one node left on the CPU.
  const char* trace = R"([
    {"cat":"Session","name":"session_initialization","dur":5000,"args":{}},
    {"cat":"Node","name":"mm_kernel_time","dur":300,"args":{"op_name":"MatMul","provider":"CUDAExecutionProvider"}},
    {"cat":"Node","name":"mm_fence_before","dur":1,"args":{"op_name":"MatMul","provider":"CUDAExecutionProvider"}},
    {"cat":"Node","name":"gelu_kernel_time","dur":100,"args":{"op_name":"Gelu","provider":"CUDAExecutionProvider"}},
    {"cat":"Node","name":"copy_kernel_time","dur":400,"args":{"op_name":"MemcpyToHost","provider":"CUDAExecutionProvider"}},
    {"cat":"Node","name":"topk_kernel_time","dur":200,"args":{"op_name":"TopK","provider":"CPUExecutionProvider"}},
    {"cat":"Session","name":"model_run","dur":1100,"args":{}}
  ])";
  auto report = ParseProfileTrace(trace, "cuda");
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->runs, 1);
  EXPECT_DOUBLE_EQ(report->node_total_us, 1000);
  EXPECT_DOUBLE_EQ(report->session_initialization_us, 5000);
  ASSERT_EQ(report->nodes.size(), 4u);
  EXPECT_EQ(report->nodes[0].node, "copy");
  EXPECT_DOUBLE_EQ(report->nodes[0].share, 0.4);
  ASSERT_EQ(report->memory_copies.size(), 1u);
  EXPECT_EQ(report->memory_copies[0].op_type, "MemcpyToHost");
  ASSERT_EQ(report->cpu_fallbacks.size(), 1u);
  EXPECT_EQ(report->cpu_fallbacks[0].node, "topk");
  ASSERT_EQ(report->providers.size(), 2u);
  EXPECT_EQ(report->providers[0].name, "CUDAExecutionProvider");
  EXPECT_EQ(report->providers[0].nodes, 3);
  // Asked for the CPU, nothing "falls back".
  EXPECT_TRUE(ParseProfileTrace(trace, "cpu")->cpu_fallbacks.empty());
}

TEST(BenchProfile, ReadsTheOlderWrappedFormAndIgnoresWhatItDoesNotKnow) {
  // {"traceEvents": [...]}, events with nested arguments, fields of other types, and an object that
  // is not an event beside the array.
  const char* trace = R"({"otherData": {"cat": "Node", "name": "x_kernel_time"}, "traceEvents": [
    {"cat":"Node","name":"a_kernel_time","dur":30,"ph":"X","args":{"op_name":"Relu","provider":"CPUExecutionProvider",
      "input_type_shape":[{"float":[1,4]}],"thread_scheduling_stats":{"main_thread":{"block_size":1}}}},
    {"cat":"Node","name":"a_kernel_time","dur":10.5,"args":{"op_name":"Relu","provider":"CPUExecutionProvider"}},
    {"cat":"Node","name":"_kernel_time","dur":5,"args":{"node_index":"7","op_name":"Add","provider":"CPUExecutionProvider"}},
    {"cat":"Session","name":"model_run","dur":50,"args":{"ok":true,"n":null}}
  ]})";
  auto report = ParseProfileTrace(trace, "cpu");
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->runs, 1);
  ASSERT_EQ(report->nodes.size(), 2u);
  EXPECT_EQ(report->nodes[0].node, "a");
  EXPECT_EQ(report->nodes[0].calls, 2);
  EXPECT_DOUBLE_EQ(report->nodes[0].total_us, 40.5);
  EXPECT_EQ(report->nodes[1].node, "#7");
  EXPECT_EQ(report->nodes[1].op_type, "Add");
}

TEST(BenchProfile, RejectsWhatIsNotATrace) {
  EXPECT_FALSE(ParseProfileTrace("{not json", "cpu").ok());
  EXPECT_FALSE(ParseProfileTrace(R"({"a": 1})", "cpu").ok());
  EXPECT_EQ(ReadProfileTrace("/nonexistent/trace.json", "cpu").error().kind, ErrorKind::kIo);
}

}  // namespace
}  // namespace ortkit
