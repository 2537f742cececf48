// `doctor` never calls a healthy model broken for inputs or sizes of its own making: positive inputs are
// tried where normal ones give NaN, sizes the model refuses are requirements, and output dimensions named
// by the exporter are a note once the sweep has run them all.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "ortkit/doctor/doctor.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

class DoctorTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ortkit_doctor_trust_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    runtime_ = std::move(Runtime::Create().value());
  }
  void TearDown() override { fs::remove_all(dir_); }

  DoctorReport Doctor(const char* text, const InputPlan& inputs = {}) {
    const fs::path path = dir_ / "model.onnx";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    EXPECT_TRUE(testing::ParseModelText(text).SerializeToOstream(&out));
    out.close();
    DoctorOptions options;
    options.model = path;
    options.benchmark_runs = 2;
    options.inputs = inputs;
    auto report = RunDoctor(*runtime_, options);
    EXPECT_TRUE(report.ok()) << report.error().message;
    return std::move(report).value();
  }
  static const Diagnosis* Find(const DoctorReport& report, const std::string& code) {
    auto it = std::find_if(report.diagnoses.begin(), report.diagnoses.end(),
                           [&](const Diagnosis& d) { return d.code == code; });
    return it == report.diagnoses.end() ? nullptr : &*it;
  }
  static bool Noted(const DoctorReport& report, const std::string& text) {
    for (const auto& p : report.providers) {
      for (const auto& n : p.notes) {
        if (n.find(text) != std::string::npos) return true;
      }
    }
    return false;
  }

  fs::path dir_;
  std::unique_ptr<Runtime> runtime_;
};

// A log-power front end: right to give NaN for negative input, healthy for the positive input it is made for.
TEST_F(DoctorTrust, PositiveInputsAreTriedBeforeNanIsBlamed) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 8] power) => (float[batch, 8] y) {
      y = Log (power)
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
  EXPECT_TRUE(Noted(report, "float inputs drawn from [0.1, 1)"));
}

// NaN whatever the input is still a defect.
TEST_F(DoctorTrust, NanForEveryInputIsStillBroken) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 8] x) => (float[batch, 8] y) {
      zero = Constant <value = float[1] {0}> ()
      z = Mul (x, zero)
      y = Div (z, zero)
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kBroken);
  EXPECT_FALSE(Noted(report, "float inputs drawn from"));
  EXPECT_NE(Find(report, "sweep.nan-inf"), nullptr) << "NaN on both sides is named as NaN";
  EXPECT_EQ(Find(report, "validate.mismatch"), nullptr) << "not as a disagreement";
}

// A run that fails at the file's own sizes fails in the cross-check and in the sweep's one cell: one finding,
// with no empty "at : " where the cell's sizes would be.
TEST_F(DoctorTrust, AFailureAtFixedSizesIsSaidOnce) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[2, 3] x) => (float[5, 5] y) {
      s = Constant <value = int64[2] {5, 5}> ()
      y = Reshape (x, s)
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kBroken);
  const auto count = std::count_if(report.diagnoses.begin(), report.diagnoses.end(),
                                   [](const Diagnosis& d) { return d.code == "runtime.shape-mismatch"; });
  EXPECT_EQ(count, 1) << nlohmann::json(report.diagnoses).dump();
  for (const auto& d : report.diagnoses) EXPECT_NE(d.message.rfind("at : ", 0), 0u) << d.message;
}

// --shape gives an input its whole shape: its dimensions are not swept (a grid would claim sizes never run).
TEST_F(DoctorTrust, AnInputShapedByTheUserIsNotSwept) {
  InputPlan plan;
  plan.shapes["x"] = {1, 512};
  const auto report = Doctor(testing::ModelText("unnamed_audio").c_str(), plan);
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
  ASSERT_TRUE(report.providers[0].sweep);
  for (const auto& axis : report.providers[0].sweep->axes) {
    EXPECT_NE(axis.dim, "x:0");
    EXPECT_NE(axis.dim, "x:1");
  }
}

TEST_F(DoctorTrust, AnAudioModelWithUnnamedDimsIsHealthyWithItsMinimumFound) {
  const auto report = Doctor(testing::ModelText("unnamed_audio").c_str());
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
  const Diagnosis* limit = Find(report, "sweep.size-limit");
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(limit->severity, Severity::kInfo);
  EXPECT_NE(limit->message.find("'x:1' (input 'x' axis 1) needs at least 33"), std::string::npos) << limit->message;
  EXPECT_TRUE(Noted(report, "'x:0' and 'state:1'"));
  ASSERT_TRUE(report.providers[0].sweep);
  EXPECT_EQ(report.providers[0].sweep->axes.size(), 2u);
  EXPECT_TRUE(report.providers[0].sweep->Passed());
}

// tf2onnx names output dims unk__N: the file loses their link to the inputs, the sweep shows it holds.
TEST_F(DoctorTrust, ExporterNamedOutputDimsAreANoteOnceTheSweepRunsThemAll) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[unk__1, 8] x) => (float[unk__2, 8] y) {
      y = Relu (x)
    }
  )");
  const Diagnosis* unrelated = Find(report, "shape.output-dim-unrelated");
  ASSERT_NE(unrelated, nullptr);
  EXPECT_EQ(unrelated->severity, Severity::kInfo);
  EXPECT_NE(unrelated->message.find("the sweep ran all"), std::string::npos) << unrelated->message;
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy);
}

}  // namespace
}  // namespace ortkit
