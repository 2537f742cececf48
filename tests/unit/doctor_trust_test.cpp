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
#include "ortkit/validate/validate.h"
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

  Result<DoctorReport> TryDoctor(const char* text, const InputPlan& inputs = {},
                                 std::vector<std::string> providers = {"cpu"}) {
    const fs::path path = dir_ / "model.onnx";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    EXPECT_TRUE(testing::ParseModelText(text).SerializeToOstream(&out));
    out.close();
    DoctorOptions options;
    options.model = path;
    options.benchmark_runs = 2;
    options.inputs = inputs;
    options.providers = std::move(providers);
    return RunDoctor(*runtime_, options);
  }
  DoctorReport Doctor(const char* text, const InputPlan& inputs = {}) {
    auto report = TryDoctor(text, inputs);
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

// doctor's sweep is Validate()'s: one rule (ValidationSweepOptions) sets the grid of both, so a rule given once
// (here the largest size export.json allows a dimension) shapes both sweeps, cell for cell.
TEST_F(DoctorTrust, TheSweepIsValidatesSweepCellForCell) {
  const fs::path path = dir_ / "model.onnx";
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, seq] x) => (float[batch, seq] y) {
      y = Relu (x)
    }
  )");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(model.SerializeToOstream(&out));
    std::ofstream record(dir_ / "export.json", std::ios::trunc);
    record << R"({"dim_limits": {"seq": 24}})";
  }
  DoctorOptions doctor_options;
  doctor_options.model = path;
  doctor_options.benchmark_runs = 0;
  auto doctor = RunDoctor(*runtime_, doctor_options);
  ASSERT_TRUE(doctor.ok()) << doctor.error().message;
  ASSERT_EQ(doctor->providers.size(), 1u);
  ASSERT_TRUE(doctor->providers[0].sweep);
  const SweepReport& doctors = *doctor->providers[0].sweep;

  auto session = Session::Create(*runtime_, path, {});
  ASSERT_TRUE(session.ok()) << session.error().message;
  ValidateOptions options;
  options.model = path;
  options.compare = "opt-levels";
  options.sweep = true;
  options.sweep_max_sizes = {{"seq", 24}};
  const ValidateReport validated = Validate(*runtime_, **session, model, options);
  ASSERT_FALSE(validated.failure) << validated.failure->error.message;
  ASSERT_TRUE(validated.sweep);
  const SweepReport& validates = *validated.sweep;

  ASSERT_EQ(doctors.axes.size(), validates.axes.size());
  for (std::size_t a = 0; a < doctors.axes.size(); ++a) {
    EXPECT_EQ(doctors.axes[a].dim, validates.axes[a].dim);
    EXPECT_EQ(doctors.axes[a].values, validates.axes[a].values) << doctors.axes[a].dim;
    if (doctors.axes[a].dim == "seq") EXPECT_LE(doctors.axes[a].values.back(), 24);
  }
  ASSERT_EQ(doctors.cells.size(), validates.cells.size());
  for (std::size_t c = 0; c < doctors.cells.size(); ++c) {
    EXPECT_EQ(doctors.cells[c].dims, validates.cells[c].dims);
    EXPECT_EQ(doctors.cells[c].state, validates.cells[c].state);
    EXPECT_EQ(doctors.cells[c].batch_checked, validates.cells[c].batch_checked);
  }
  EXPECT_TRUE(Noted(*doctor, "sweep of 'seq' kept to 24 and below"));
}

// The rule itself: what the options give (axes, batch check, tolerance, largest sizes, the plan) and what the
// input step found (its size search, positive values) is what the sweep runs with.
TEST(ValidationSweepOptions, TheSweepFollowsTheOptionsAndTheInputStep) {
  ValidateOptions options;
  options.sweep_axes = {SweepAxis{"batch", {1, 2}}};
  options.batch_check = false;
  options.tolerance.atol = 0.5;
  options.sweep_max_sizes = {{"seq", 8}};
  options.inputs.plan.dims = {{"seq", 4}};
  SweepOptions sweep = ValidationSweepOptions(options, nullptr);
  ASSERT_EQ(sweep.axes.size(), 1u);
  EXPECT_EQ(sweep.axes[0].dim, "batch");
  EXPECT_FALSE(sweep.batch_consistency);
  EXPECT_EQ(sweep.tolerance.atol, 0.5);
  EXPECT_EQ(sweep.max_sizes, options.sweep_max_sizes);
  EXPECT_EQ(sweep.base.dims, options.inputs.plan.dims);
  EXPECT_FALSE(sweep.search);
  EXPECT_FALSE(sweep.base.positive_floats);

  ValidationInputs inputs;
  inputs.settled.search = ShapeSearch{};
  inputs.settled.search->grown = {{"seq", 6}};
  inputs.positive_floats = true;
  sweep = ValidationSweepOptions(options, &inputs);
  ASSERT_TRUE(sweep.search);
  EXPECT_EQ(sweep.search->grown, inputs.settled.search->grown);
  EXPECT_TRUE(sweep.base.positive_floats);
}

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
  EXPECT_TRUE(Noted(report, "input 'x' axis 0 and input 'state' axis 1 must be equal"));
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
  EXPECT_NE(unrelated->message.find("the sweep's runs show: dimension 0 follows 'unk__1'"), std::string::npos)
      << unrelated->message;
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy);
}

// Two inputs whose batches the converter named apart (tf2onnx: unk__330, unk__331), joined by a Concat along
// their features: they run only at equal batches. Tied, they are one axis for the search and the sweep, no
// size limit is made up for either, and the output's unk__332 follows them.
TEST_F(DoctorTrust, AxesThatMustAgreeAreTiedNotReadAsASizeLimit) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[unk__330, 21] a, float[unk__331, 21] b) => (float[unk__332, 42] y) {
      y = Concat <axis = 1> (a, b)
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
  EXPECT_EQ(Find(report, "sweep.size-limit"), nullptr) << nlohmann::json(report.diagnoses).dump();
  EXPECT_TRUE(Noted(report, "input 'a' axis 0 ('unk__330') and input 'b' axis 0 ('unk__331') must be equal"));
  ASSERT_TRUE(report.providers[0].sweep);
  const SweepReport& sweep = *report.providers[0].sweep;
  EXPECT_TRUE(sweep.Passed());
  ASSERT_EQ(sweep.axes.size(), 1u);
  EXPECT_GE(sweep.axes[0].values.size(), 2u);
  const Diagnosis* unrelated = Find(report, "shape.output-dim-unrelated");
  ASSERT_NE(unrelated, nullptr);
  EXPECT_EQ(unrelated->severity, Severity::kInfo) << unrelated->message;
  EXPECT_NE(unrelated->message.find("follows 'unk__330'"), std::string::npos) << unrelated->message;
}

// A dimension ONNX's inference cannot relate to the inputs (it names it unk__N: an ML operator's batch, a
// NonZero's count) is judged by the runs: on these inputs NonZero's count is 4 x N in every run, so it is a
// note that says so (ExplainOutputDim's own cases are in sweep_test.cpp).
TEST_F(DoctorTrust, RunsDecideTheOutputDimsInferenceCannotSize) {
  const auto counted = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (int64[2, ?] where) {
      where = NonZero (x)
    }
  )");
  EXPECT_EQ(counted.verdict, DoctorVerdict::kHealthy) << nlohmann::json(counted.diagnoses).dump();
  bool judged = false;
  for (const auto& d : counted.diagnoses) {
    if (d.code != "shape.output-dim-unknown" && d.code != "shape.output-dim-unrelated") continue;
    judged = true;
    EXPECT_EQ(d.severity, Severity::kInfo) << d.message;
    EXPECT_NE(d.message.find("dimension 1 follows 4 x 'N'"), std::string::npos) << d.message;
  }
  EXPECT_TRUE(judged) << nlohmann::json(counted.diagnoses).dump();
}

// A two-tower model (SigLIP's shape): the image tower reshapes with its patch count (16) first, which the
// check's heuristic reads as a traced batch. The sweep runs the image batch at several sizes and every run
// passes, so the finding is a note, whatever the text tower's batch is called.
TEST_F(DoctorTrust, APatchCountFirstInAReshapeIsSettledByTheTowersOwnBatch) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (int64[text_batch, seq] input_ids, float[image_batch, 16, 4] pixels)
        => (float[text_batch, seq] text, float[image_batch, 16, 4] image) {
      text = Cast<to = 1> (input_ids)
      patches_first = Transpose<perm = [1, 0, 2]> (pixels)
      flat_shape = Constant<value = int64[2] {16, -1}> ()
      flat = Reshape (patches_first, flat_shape)
      pooled = Relu (flat)
      back_shape = Constant<value = int64[3] {16, -1, 4}> ()
      back = Reshape (pooled, back_shape)
      image = Transpose<perm = [1, 0, 2]> (back)
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
  bool settled = false;
  for (const auto& d : report.diagnoses) {
    if (d.code != "graph.baked-batch-reshape") continue;
    settled = true;
    EXPECT_EQ(d.severity, Severity::kInfo) << d.message;
    EXPECT_NE(d.message.find("the sweep ran 'image_batch' at"), std::string::npos) << d.message;
  }
  EXPECT_TRUE(settled) << nlohmann::json(report.diagnoses).dump();
}

// Every output a sequence (SplitToSequence): ortkit fetches tensors only, which is ortkit's limit, not the
// model's defect. The model loads and runs; the note says its values were not checked.
TEST_F(DoctorTrust, OutputsOrtkitDoesNotFetchAreANoteNotBroken) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 3] x) => (seq(float[?, 3]) pieces) {
      pieces = SplitToSequence <axis = 0> (x)
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
  const Diagnosis* note = Find(report, "runtime.non-tensor-output");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->severity, Severity::kInfo);
  EXPECT_NE(note->message.find("no output of the model is a tensor: 'pieces' is a sequence"), std::string::npos)
      << note->message;
  ASSERT_TRUE(report.providers[0].sweep);
  EXPECT_TRUE(report.providers[0].sweep->Passed());
}

// A Loop's condition input: a synthesised false runs it 0 times and its scan output is empty, which looked like
// an output dimension that does not follow the input. Booleans are synthesised true.
TEST_F(DoctorTrust, ALoopRunsOnItsSynthesisedCondition) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (int64 M, bool cond, float[N, 3] init, float[N, 3] x) => (float[N, 3] final, float[K, N, 3] stacked) {
      final, stacked = Loop (M, cond, init) <body = loop_body (int64 i, bool cond_in, float[N, 3] acc_in)
                                                           => (bool cond_out, float[N, 3] acc_out, float[N, 3] scan_out) {
        cond_out = Identity (cond_in)
        acc_out = Add (acc_in, x)
        scan_out = Identity (acc_out)
      }>
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
  EXPECT_EQ(Find(report, "sweep.output-dim-mismatch"), nullptr);
}

// Strings are numbers written as text: a Cast from string parses them (random words made it fail in stod).
TEST_F(DoctorTrust, StringInputsParseAsNumbers) {
  const auto report = Doctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (string[N] x) => (float[N] y) {
      y = Cast <to = 1> (x)
    }
  )");
  EXPECT_EQ(report.verdict, DoctorVerdict::kHealthy) << nlohmann::json(report.diagnoses).dump();
}

// --dim and --shape the model cannot take are the user's mistake: an error with run's message, not a verdict.
TEST_F(DoctorTrust, SizeFlagsTheModelCannotTakeAreUsageErrors) {
  constexpr const char* kEncoder = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, seq_len, 8] x) => (float[batch, seq_len, 8] y) {
      y = Relu (x)
    }
  )";
  InputPlan unknown_dim;
  unknown_dim.dims["nosuch"] = 3;
  auto report = TryDoctor(kEncoder, unknown_dim);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(report.error().message,
            "--dim nosuch=3: no input has a dimension named 'nosuch'; symbolic dimensions: batch, seq_len");
  InputPlan wrong_rank;
  wrong_rank.shapes["x"] = {1, 2};
  report = TryDoctor(kEncoder, wrong_rank);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(report.error().message, "--shape x=[1, 2]: the input has rank 3 (float32[batch, seq_len, 8])");
  InputPlan fits;
  fits.dims["batch"] = 2;
  EXPECT_TRUE(TryDoctor(kEncoder, fits).ok());
}

// A provider this ONNX Runtime build lacks is the machine's fault: the model is not judged, and the report
// says why (the runtime's refusal and the environment's diagnosis).
TEST_F(DoctorTrust, AnUnavailableProviderIsTheEnvironmentNotTheModel) {
  if (CheckProviderAvailable("cuda").ok()) GTEST_SKIP() << "this ONNX Runtime build has CUDA";
  auto report = TryDoctor(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 8] x) => (float[batch, 8] y) {
      y = Relu (x)
    }
  )",
                          {}, {"cuda"});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->unavailable_provider, "cuda");
  EXPECT_FALSE(report->check.has_value());
  EXPECT_TRUE(report->providers.empty());
  EXPECT_NE(Find(*report, "runtime.provider-unavailable"), nullptr) << nlohmann::json(report->diagnoses).dump();
  EXPECT_NE(Find(*report, "env.provider-not-built"), nullptr) << nlohmann::json(report->diagnoses).dump();
}

}  // namespace
}  // namespace ortkit
