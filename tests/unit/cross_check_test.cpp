#include "ortkit/validate/cross_check.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_models.h"

namespace ortkit {
namespace {

// A two-layer perceptron with a symbolic batch; weights are added as initializers by AddWeights.
constexpr const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  chain (float[batch, 4] x) => (float[batch, 3] y) {
    h1 = MatMul (x, w1)
    a1 = Relu (h1)
    h2 = MatMul (a1, w2)
    y = Softmax <axis = -1> (h2)
  }
)";

void AddWeight(onnx::ModelProto& model, const std::string& name, const std::vector<std::int64_t>& dims, float offset) {
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  std::int64_t count = 1;
  for (auto d : dims) {
    t->add_dims(d);
    count *= d;
  }
  for (std::int64_t i = 0; i < count; ++i) t->add_float_data(offset + 0.05f * static_cast<float>((i * 7) % 11));
}

/// `w2_delta` is added to one weight of w2 (a shift of all of them would cancel in the Softmax).
onnx::ModelProto Chain(float w2_delta = 0) {
  onnx::ModelProto model = testing::ParseModelText(kChain);
  AddWeight(model, "w1", {4, 5}, 0.1f);
  AddWeight(model, "w2", {5, 3}, 0.1f);
  auto* w2 = model.mutable_graph()->mutable_initializer(1);
  w2->set_float_data(0, w2->float_data(0) + w2_delta);
  return model;
}

std::vector<NamedTensor> ChainInputs(std::int64_t batch) {
  std::vector<float> x(static_cast<std::size_t>(batch * 4));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f + 0.1f * static_cast<float>(i % 5);
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::FromVector<float>({batch, 4}, x).value()});
  return inputs;
}

bool CudaAvailable() {
  auto available = Runtime::AvailableProviders();
  return std::find(available.begin(), available.end(), "CUDAExecutionProvider") != available.end();
}

class CrossCheckTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = std::move(Runtime::Create().value()); }
  std::unique_ptr<Runtime> runtime_;
};

TEST(ParseCrossCheckMode, OptLevelsDefaultToOffAgainstAll) {
  SessionConfig base;
  base.intra_op_threads = 1;
  auto plan = ParseCrossCheckMode("opt-levels", base);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->a.config.optimization_level, OptimizationLevel::kOff);
  EXPECT_EQ(plan->b.config.optimization_level, OptimizationLevel::kAll);
  EXPECT_EQ(plan->a.label, "optimisations off");
  EXPECT_EQ(plan->b.label, "optimisations all");
  EXPECT_EQ(plan->b.config.intra_op_threads, 1) << "the other settings come from the base";
  EXPECT_TRUE(plan->a.model.empty());

  auto levels = ParseCrossCheckMode("opt-levels=basic,extended");
  ASSERT_TRUE(levels.ok()) << levels.error().message;
  EXPECT_EQ(levels->a.config.optimization_level, OptimizationLevel::kBasic);
  EXPECT_EQ(levels->b.label, "optimisations extended");
}

TEST(ParseCrossCheckMode, BadModesAreNamed) {
  struct Case {
    const char* mode;
    ErrorKind kind;
    const char* says;
  };
  for (const Case& c :
       {Case{"speed", ErrorKind::kInvalidArgument, "use one of: opt-levels, providers=cpu,cuda"},
        Case{"opt-levels=off,max", ErrorKind::kInvalidArgument, "unknown optimisation level 'max'; levels: off, basic"},
        Case{"opt-levels=all", ErrorKind::kInvalidArgument, "exactly two names"},
        Case{"providers=cpu", ErrorKind::kInvalidArgument, "exactly two names"},
        Case{"providers", ErrorKind::kInvalidArgument, "e.g. 'providers=cpu,cuda'"},
        Case{"providers=cpu,cpu", ErrorKind::kInvalidArgument, "names 'cpu' twice"},
        Case{"providers=cpu,gpu", ErrorKind::kInvalidArgument, "unknown execution provider 'gpu'; known: cpu, cuda"}}) {
    auto plan = ParseCrossCheckMode(c.mode);
    ASSERT_FALSE(plan.ok()) << c.mode;
    EXPECT_EQ(plan.error().kind, c.kind) << c.mode;
    EXPECT_NE(plan.error().message.find(c.says), std::string::npos) << c.mode << ": " << plan.error().message;
  }
}

TEST(ParseCrossCheckMode, UnavailableProviderNamesWhatIsAvailable) {
  if (CudaAvailable()) GTEST_SKIP() << "this ONNX Runtime build has CUDA";
  auto plan = ParseCrossCheckMode("providers=cpu,cuda");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(plan.error().message.find("execution provider 'cuda' (CUDAExecutionProvider) is not available"),
            std::string::npos)
      << plan.error().message;
  EXPECT_NE(plan.error().message.find("available: CPUExecutionProvider"), std::string::npos) << plan.error().message;
}

TEST(LabelSides, NamesWhatDiffers) {
  SessionConfig off;
  off.optimization_level = OptimizationLevel::kOff;
  SessionConfig all;
  EXPECT_EQ(LabelSides(off, all), std::make_pair(std::string("optimisations off"), std::string("optimisations all")));
  SessionConfig cuda;
  cuda.provider = "cuda";
  EXPECT_EQ(LabelSides(all, cuda), std::make_pair(std::string("cpu"), std::string("cuda")));
  EXPECT_EQ(LabelSides(all, all), std::make_pair(std::string("first run"), std::string("second run")));
}

TEST_F(CrossCheckTest, OptimisationLevelsAgreeOnAHealthyModel) {
  testing::TempDir dir;
  const auto path = dir.WriteModel("chain.onnx", Chain());
  SessionConfig off;
  off.optimization_level = OptimizationLevel::kOff;
  auto report = CrossCheck(*runtime_, ModelToLoad{path, {}}, off, SessionConfig{}, ChainInputs(3), {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->Passed());
  ASSERT_EQ(report->comparison.outputs.size(), 1u);
  EXPECT_EQ(report->comparison.outputs[0].name, "y");
  EXPECT_EQ(report->comparison.outputs[0].elements, 9);
  EXPECT_EQ(report->label_a, "optimisations off");
  const nlohmann::json j = report->ToJson();
  EXPECT_EQ(j["reference"]["label"], "optimisations off");
  EXPECT_EQ(j["checked"]["label"], "optimisations all");
  EXPECT_TRUE(j["passed"].get<bool>());
}

// Both sides NaN at the same places is not agreement: it fails, and says so.
TEST_F(CrossCheckTest, NaNOnBothSidesIsAFindingNotAgreement) {
  testing::TempDir dir;
  const auto path = dir.WriteModel("sqrt.onnx", testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    roots (float[batch, 4] x) => (float[batch, 4] y) {
      y = Sqrt (x)
    }
  )"));
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::FromVector<float>({2, 4}, {-1, 4, 9, 16, 1, -4, 0, 25}).value()});
  SessionConfig off;
  off.optimization_level = OptimizationLevel::kOff;
  auto report = CrossCheck(*runtime_, ModelToLoad{path, {}}, off, SessionConfig{}, inputs, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->Passed());
  const auto& y = report->comparison.outputs.at(0);
  EXPECT_EQ(y.nan_both, 2);
  EXPECT_EQ(y.mismatches, 0);
  EXPECT_NE(y.problem.find("2 of 8 elements are NaN on both sides"), std::string::npos) << y.problem;
}

/// The nodes of the graph ONNX Runtime builds from `path` with `config`, read back from the optimised
/// model it writes: what the profiler of a session with the same settings must count.
int OptimisedNodeCount(Runtime& runtime, const std::filesystem::path& path, SessionConfig config,
                       const testing::TempDir& dir) {
  config.optimized_model_path = dir.path() / "optimised.onnx";
  auto session = Session::Create(runtime, path, config);
  EXPECT_TRUE(session.ok()) << session.error().message;
  onnx::ModelProto optimised;
  EXPECT_TRUE(optimised.ParseFromString(testing::ReadFile(config.optimized_model_path)));
  return optimised.graph().node_size();
}

void ExpectEveryNodeOnTheCpu(const SidePlacement& placement, int nodes, const std::string& side) {
  EXPECT_TRUE(placement.known()) << side << ": " << placement.note;
  ASSERT_EQ(placement.providers.size(), 1u) << side;
  EXPECT_EQ(placement.providers[0].name, "CPUExecutionProvider") << side;
  EXPECT_EQ(placement.providers[0].nodes, nodes) << side;
  EXPECT_EQ(placement.memory_copies, 0) << side;
  EXPECT_TRUE(placement.cpu_fallbacks.empty()) << side;
}

// With optimisations off every node of the file runs; with them on, every node of the optimised graph
// (here MatMul + Add + Relu fuse, so the two counts differ).
TEST_F(CrossCheckTest, PlacementCountsTheNodesEachSideRan) {
  testing::TempDir dir;
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    dense (float[batch, 4] x) => (float[batch, 3] y) {
      h1 = MatMul (x, w1)
      b1 = Add (h1, bias)
      a1 = Relu (b1)
      h2 = MatMul (a1, w2)
      y = Softmax <axis = -1> (h2)
    }
  )");
  AddWeight(model, "w1", {4, 5}, 0.1f);
  AddWeight(model, "bias", {5}, -0.2f);
  AddWeight(model, "w2", {5, 3}, 0.1f);
  const auto path = dir.WriteModel("dense.onnx", model);
  const CrossCheckPlan plan = ParseCrossCheckMode("opt-levels").value();
  auto report = CrossCheck(*runtime_, ModelToLoad{path, {}}, plan, ChainInputs(2), {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_GT(model.graph().node_size(), 0);
  ExpectEveryNodeOnTheCpu(report->placement_a, model.graph().node_size(), "optimisations off");
  const int optimised = OptimisedNodeCount(*runtime_, path, plan.b.config, dir);
  ASSERT_GT(optimised, 0);
  EXPECT_LT(optimised, model.graph().node_size()) << "no fusion: the two sides no longer tell their graphs apart";
  ExpectEveryNodeOnTheCpu(report->placement_b, optimised, "optimisations all");
}

TEST_F(CrossCheckTest, PlacementIsInTheJson) {
  const std::string healthy = Chain().SerializeAsString();
  auto report =
      CrossCheck(*runtime_, ModelToLoad{{}, healthy}, ParseCrossCheckMode("opt-levels").value(), ChainInputs(1), {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  const nlohmann::json j = report->ToJson();
  for (const char* side : {"a", "b"}) {
    ASSERT_TRUE(j.contains("placement") && j["placement"].contains(side)) << j.dump();
    const nlohmann::json& p = j["placement"][side];
    ASSERT_TRUE(p["providers"].is_array() && !p["providers"].empty()) << p.dump();
    EXPECT_EQ(p["providers"][0]["name"], "CPUExecutionProvider") << p.dump();
    EXPECT_GT(p["providers"][0]["nodes"].get<int>(), 0) << p.dump();
    EXPECT_EQ(p["memory_copies"], 0) << p.dump();
    EXPECT_TRUE(p["cpu_fallbacks"].is_array() && p["cpu_fallbacks"].empty()) << p.dump();
    EXPECT_FALSE(p.contains("note")) << p.dump();
  }
}

// No folder for the profiler's trace: the outputs are still compared, and the placement says why it is unknown.
TEST_F(CrossCheckTest, AnUnknownPlacementDoesNotFailTheCheck) {
  const char* saved = std::getenv("TMPDIR");
  const std::string restore = saved == nullptr ? "" : saved;
  ::setenv("TMPDIR", "/nonexistent/ortkit-cross-check-test", 1);
  const std::string healthy = Chain().SerializeAsString();
  auto report =
      CrossCheck(*runtime_, ModelToLoad{{}, healthy}, ParseCrossCheckMode("opt-levels").value(), ChainInputs(1), {});
  if (saved == nullptr) {
    ::unsetenv("TMPDIR");
  } else {
    ::setenv("TMPDIR", restore.c_str(), 1);
  }
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->Passed());
  for (const SidePlacement* p : {&report->placement_a, &report->placement_b}) {
    EXPECT_FALSE(p->known());
    EXPECT_EQ(p->note.rfind("placement unknown: ", 0), 0u) << p->note;
    EXPECT_TRUE(p->providers.empty());
  }
  EXPECT_TRUE(report->ToJson()["placement"]["a"].contains("note"));
}

TEST_F(CrossCheckTest, ASideWithAnotherModelDiffers) {
  const std::string healthy = Chain().SerializeAsString();
  const std::string perturbed = Chain(0.5f).SerializeAsString();
  CrossCheckPlan plan{{"exported", {}, {}}, {"re-exported", {}, ModelToLoad{{}, perturbed}}};
  auto report = CrossCheck(*runtime_, ModelToLoad{{}, healthy}, plan, ChainInputs(2), {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->Passed());
  ASSERT_EQ(report->comparison.outputs.size(), 1u);
  EXPECT_GT(report->comparison.outputs[0].mismatches, 0);
  EXPECT_EQ(report->label_b, "re-exported");
}

TEST_F(CrossCheckTest, ErrorsNameTheSide) {
  const std::string healthy = Chain().SerializeAsString();
  CrossCheckPlan plan{{"good", {}, {}}, {"broken", {}, ModelToLoad{{}, std::string_view("not a model")}}};
  auto report = CrossCheck(*runtime_, ModelToLoad{{}, healthy}, plan, ChainInputs(1), {});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().message.rfind("broken: ", 0), 0u) << report.error().message;

  std::vector<NamedTensor> wrong;
  wrong.push_back({"x", Tensor::FromVector<float>({1, 3}, {1, 2, 3}).value()});
  auto bad_inputs =
      CrossCheck(*runtime_, ModelToLoad{{}, healthy}, ParseCrossCheckMode("opt-levels").value(), wrong, {});
  ASSERT_FALSE(bad_inputs.ok());
  EXPECT_EQ(bad_inputs.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(bad_inputs.error().message.rfind("optimisations off: ", 0), 0u) << bad_inputs.error().message;
}

}  // namespace
}  // namespace ortkit
