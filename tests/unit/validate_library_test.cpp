#include "ortkit/validate/validate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/tensor/npy.h"
#include "test_models.h"

namespace ortkit {
namespace {

// y = 2x + 1 with a symbolic batch: every configuration agrees, every batch size runs.
constexpr const char* kAffine = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  affine (float[batch, 3] x) => (float[batch, 3] y) {
    two = Constant <value = float {2.0}> ()
    one = Constant <value = float {1.0}> ()
    scaled = Mul (x, two)
    y = Add (scaled, one)
  }
)";

class ValidateLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = std::move(Runtime::Create().value());
    model_ = testing::ParseModelText(kAffine);
    options_.model = dir_.WriteModel("affine.onnx", model_);
    auto session = Session::Create(*runtime_, options_.model, options_.session);
    ASSERT_TRUE(session.ok()) << session.error().message;
    session_ = std::move(session).value();
  }
  ValidateReport Run() { return Validate(*runtime_, *session_, model_, options_); }

  // A reference folder (NAME.npy) with x = [[0, 1, 2]] and the y given.
  std::filesystem::path WriteReference(const std::vector<float>& y) {
    const std::filesystem::path folder = dir_.path() / "reference";
    std::filesystem::create_directories(folder);
    EXPECT_TRUE(WriteNpy(folder / "x.npy", Tensor::FromVector<float>({1, 3}, {0, 1, 2}).value()).ok());
    EXPECT_TRUE(WriteNpy(folder / "y.npy", Tensor::FromVector<float>({1, 3}, y).value()).ok());
    return folder;
  }

  testing::TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  onnx::ModelProto model_;
  std::unique_ptr<Session> session_;
  ValidateOptions options_;
};

TEST_F(ValidateLibraryTest, WithoutReferenceTheConfigurationsAgreeAndEveryShapeRuns) {
  options_.compare = "opt-levels";
  options_.sweep = true;
  const ValidateReport report = Run();
  ASSERT_FALSE(report.failure) << report.failure->error.message;
  EXPECT_FALSE(report.reference);
  ASSERT_TRUE(report.cross_check);
  EXPECT_EQ(report.cross_check->label_a, "optimisations off");
  EXPECT_TRUE(report.cross_check->Passed());
  ASSERT_TRUE(report.sweep);
  EXPECT_FALSE(report.sweep->cells.empty());
  EXPECT_TRUE(report.Passed());
  const nlohmann::json json = report.ToJson();
  EXPECT_TRUE(json.contains("compare"));
  EXPECT_TRUE(json.contains("sweep"));
  EXPECT_FALSE(json.contains("reference"));
  EXPECT_TRUE(json["compare"].contains("size_notes"));
}

TEST_F(ValidateLibraryTest, ExplicitSweepAxesAreTheGrid) {
  options_.sweep = true;
  options_.sweep_axes.push_back(ParseSweepAxis("batch=1,2,5").value());
  const ValidateReport report = Run();
  ASSERT_FALSE(report.failure) << report.failure->error.message;
  EXPECT_FALSE(report.cross_check) << "no mode, no cross-check";
  ASSERT_TRUE(report.sweep);
  EXPECT_EQ(report.sweep->cells.size(), 3u);
  EXPECT_TRUE(report.Passed());
}

TEST_F(ValidateLibraryTest, AReferenceThatMatchesPassesAndOneThatDoesNotFails) {
  options_.reference = WriteReference({1, 3, 5});
  ValidateReport good = Run();
  ASSERT_FALSE(good.failure) << good.failure->error.message;
  ASSERT_TRUE(good.reference);
  EXPECT_EQ(good.reference->cases.size(), 1u);
  EXPECT_TRUE(good.Passed());
  EXPECT_EQ(good.ToJson()["reference"]["path"], options_.reference.string());

  options_.reference = WriteReference({1, 3, 6});
  options_.localize = true;
  ValidateReport bad = Run();
  ASSERT_FALSE(bad.failure) << bad.failure->error.message;
  ASSERT_TRUE(bad.reference);
  EXPECT_FALSE(bad.reference->Passed());
  EXPECT_FALSE(bad.Passed());
  EXPECT_EQ(bad.localizations.size(), 1u) << "--localize runs against the reference when it fails";
}

TEST_F(ValidateLibraryTest, AnUnusableReferenceStopsBeforeTheOtherSteps) {
  options_.reference = dir_.path() / "missing";
  options_.compare = "opt-levels";
  options_.sweep = true;
  const ValidateReport report = Run();
  ASSERT_TRUE(report.failure);
  EXPECT_EQ(report.failure->step, ValidateFailure::Step::kReference);
  EXPECT_FALSE(report.cross_check);
  EXPECT_FALSE(report.sweep);
  EXPECT_EQ(UnusableReference(options_.reference, report.failure->error).code, "validate.reference-input");
}

TEST_F(ValidateLibraryTest, AnUnknownCompareModeIsTheCallersFault) {
  options_.compare = "sideways";
  options_.sweep = true;
  const ValidateReport report = Run();
  ASSERT_TRUE(report.failure);
  EXPECT_EQ(report.failure->step, ValidateFailure::Step::kCompareMode);
  EXPECT_FALSE(report.sweep);
}

TEST_F(ValidateLibraryTest, AnUnknownDimensionStopsTheSweep) {
  options_.sweep = true;
  options_.inputs.plan.dims["no_such_dim"] = 4;
  const ValidateReport report = Run();
  ASSERT_TRUE(report.failure);
  EXPECT_EQ(report.failure->step, ValidateFailure::Step::kSweep);
}

}  // namespace
}  // namespace ortkit
