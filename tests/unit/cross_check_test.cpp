#include "ortkit/validate/cross_check.h"

#include <algorithm>

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
  EXPECT_NE(plan.error().message.find("execution provider 'cuda' is not available"), std::string::npos)
      << plan.error().message;
  EXPECT_NE(plan.error().message.find("available: cpu"), std::string::npos) << plan.error().message;
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
  auto report = CrossCheck(*runtime_, ModelSource{path, {}}, off, SessionConfig{}, ChainInputs(3), {});
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
  auto report = CrossCheck(*runtime_, ModelSource{path, {}}, off, SessionConfig{}, inputs, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->Passed());
  const auto& y = report->comparison.outputs.at(0);
  EXPECT_EQ(y.nan_both, 2);
  EXPECT_EQ(y.mismatches, 0);
  EXPECT_NE(y.problem.find("2 of 8 elements are NaN on both sides"), std::string::npos) << y.problem;
}

TEST_F(CrossCheckTest, ASideWithAnotherModelDiffers) {
  const std::string healthy = Chain().SerializeAsString();
  const std::string perturbed = Chain(0.5f).SerializeAsString();
  CrossCheckPlan plan{{"exported", {}, {}}, {"re-exported", {}, ModelSource{{}, perturbed}}};
  auto report = CrossCheck(*runtime_, ModelSource{{}, healthy}, plan, ChainInputs(2), {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->Passed());
  ASSERT_EQ(report->comparison.outputs.size(), 1u);
  EXPECT_GT(report->comparison.outputs[0].mismatches, 0);
  EXPECT_EQ(report->label_b, "re-exported");
}

TEST_F(CrossCheckTest, ErrorsNameTheSide) {
  const std::string healthy = Chain().SerializeAsString();
  CrossCheckPlan plan{{"good", {}, {}}, {"broken", {}, ModelSource{{}, std::string_view("not a model")}}};
  auto report = CrossCheck(*runtime_, ModelSource{{}, healthy}, plan, ChainInputs(1), {});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().message.rfind("broken: ", 0), 0u) << report.error().message;

  std::vector<NamedTensor> wrong;
  wrong.push_back({"x", Tensor::FromVector<float>({1, 3}, {1, 2, 3}).value()});
  auto bad_inputs =
      CrossCheck(*runtime_, ModelSource{{}, healthy}, ParseCrossCheckMode("opt-levels").value(), wrong, {});
  ASSERT_FALSE(bad_inputs.ok());
  EXPECT_EQ(bad_inputs.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(bad_inputs.error().message.rfind("optimisations off: ", 0), 0u) << bad_inputs.error().message;
}

}  // namespace
}  // namespace ortkit
