// The library's entry points the commands call, and the checks of the options they fill in: one run of a
// model (RunModelOnce), --target-ort as Validate's first step, a model that cannot be read as a failure
// rather than a flag, and the ranges each options struct checks itself, whoever sets it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/inputs/single_run.h"
#include "ortkit/model/model_file.h"
#include "ortkit/perf/infer_client.h"
#include "ortkit/reduce/reduce.h"
#include "ortkit/validate/validate.h"
#include "test_models.h"

namespace ortkit {
namespace {

// y = 2x with a symbolic batch.
constexpr const char* kDouble = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  twice (float[batch, 3] x) => (float[batch, 3] y) {
    two = Constant <value = float {2.0}> ()
    y = Mul (x, two)
  }
)";

class EntryPointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = std::move(Runtime::Create().value());
    model_ = testing::ParseModelText(kDouble);
    path_ = dir_.WriteModel("twice.onnx", model_);
    auto session = Session::Create(*runtime_, path_, SessionConfig{});
    ASSERT_TRUE(session.ok()) << session.error().message;
    session_ = std::move(session).value();
    specs_ = DescribeInputs(*session_).value();
  }

  testing::TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  onnx::ModelProto model_;
  std::filesystem::path path_;
  std::unique_ptr<Session> session_;
  std::vector<TensorSpec> specs_;
};

TEST_F(EntryPointTest, RunModelOnceMakesTheInputsAtTheSizesGivenAndRuns) {
  InputSources sources;
  sources.plan.dims["batch"] = 4;
  auto run = RunModelOnce(*session_, specs_, model_, path_, sources);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_FALSE(run->failure);
  ASSERT_EQ(run->inputs.tensors.size(), 1u);
  EXPECT_EQ(run->inputs.tensors[0].tensor.shape(), (std::vector<std::int64_t>{4, 3}));
  ASSERT_EQ(run->outputs.size(), 1u);
  EXPECT_EQ(run->outputs[0].name, "y");
  EXPECT_EQ(run->outputs[0].tensor.shape(), (std::vector<std::int64_t>{4, 3}));
  EXPECT_TRUE(run->diagnoses.empty());
  EXPECT_GE(run->run_ms, 0);
}

TEST_F(EntryPointTest, RunModelOnceRefusesSizesTheModelDoesNotHave) {
  InputSources sources;
  sources.plan.dims["no_such_dim"] = 2;
  auto run = RunModelOnce(*session_, specs_, model_, path_, sources);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(run.error().message.find("no_such_dim"), std::string::npos) << run.error().message;
}

TEST_F(EntryPointTest, TargetReleaseIsTheFirstStepOfValidate) {
  ValidateOptions options;
  options.model = path_;
  options.target_ort = "1.16";
  ValidateReport report = Validate(*runtime_, *session_, model_, options);
  ASSERT_FALSE(report.failure) << report.failure->error.message;
  ASSERT_TRUE(report.target);
  EXPECT_EQ(report.target->release, "1.16");
  EXPECT_TRUE(report.target->Passed());
  EXPECT_TRUE(report.Passed());
  EXPECT_EQ(report.ToJson()["target"]["release"], "1.16");

  options.target_ort = "0.1";
  report = Validate(*runtime_, *session_, model_, options);
  ASSERT_TRUE(report.failure);
  EXPECT_EQ(report.failure->step, ValidateFailure::Step::kTarget);
  EXPECT_NE(report.failure->error.message.find("--target-ort 0.1"), std::string::npos);
}

TEST(ModelLoadFailure, SaysWhyThereIsNoModel) {
  testing::TempDir dir;
  const ModelLoad missing = LoadModelFile(dir.path() / "missing.onnx");
  ASSERT_TRUE(missing.failure);
  EXPECT_EQ(missing.failure->kind, ErrorKind::kIo);
  EXPECT_NE(missing.failure->message.find("does not exist"), std::string::npos) << missing.failure->message;

  const ModelLoad folder = LoadModelFile(dir.path());
  ASSERT_TRUE(folder.failure);
  EXPECT_EQ(folder.failure->kind, ErrorKind::kIo);

  const ModelLoad text = LoadModelFile(dir.Write("notes.onnx", "ir_version: 8\n"));
  ASSERT_TRUE(text.failure);
  EXPECT_EQ(text.failure->kind, ErrorKind::kInvalidModel);
  EXPECT_EQ(text.failure->message, text.diagnoses.front().message);

  const ModelLoad model = LoadModelFile(dir.WriteModel("twice.onnx", testing::ParseModelText(kDouble)));
  EXPECT_TRUE(model.model);
  EXPECT_FALSE(model.failure);
}

TEST(OptionsValidate, ReduceChecksItsOwnRanges) {
  ReduceOptions options;
  options.condition = ParseFailureCondition("run").value();
  EXPECT_TRUE(options.Validate().ok());
  options.time_budget = std::chrono::milliseconds(0);
  EXPECT_NE(options.Validate().error().message.find("--time-budget"), std::string::npos);
  options.time_budget = std::chrono::milliseconds(1000);
  options.command_timeout = std::chrono::milliseconds(0);
  EXPECT_NE(options.Validate().error().message.find("--command-timeout"), std::string::npos);
  options.command_timeout = std::chrono::milliseconds(1000);
  options.session.provider = "no-such-provider";
  EXPECT_FALSE(options.Validate().ok());
}

TEST(OptionsValidate, PerfClientChecksItsTimeoutAndEncoding) {
  perf::ClientOptions options;
  EXPECT_TRUE(options.Validate().ok());
  options.timeout_ms = 0;
  EXPECT_NE(options.Validate().error().message.find("--timeout-ms"), std::string::npos);
  options.timeout_ms = perf::ClientOptions::kMostTimeoutMs + 1;
  EXPECT_FALSE(options.Validate().ok());
  options.timeout_ms = 1000;
  options.protocol = perf::Protocol::kGrpc;
  options.json_tensors = true;
  EXPECT_NE(options.Validate().error().message.find("--json"), std::string::npos);
  EXPECT_STREQ(perf::ToString(perf::Protocol::kGrpc), "grpc");
}

}  // namespace
}  // namespace ortkit
