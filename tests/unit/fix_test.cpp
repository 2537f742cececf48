// ortkit fix on models written here: each pass's edit, the proofs that accept or refuse it, and that
// nothing is written unless every proof holds. Real ONNX Runtime sessions run every proof.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ortkit/check/lint.h"
#include "ortkit/fix/model_fix.h"
#include "ortkit/model/model_file.h"
#include "ortkit/tensor/test_case.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

class FixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = Runtime::Create();
    ASSERT_TRUE(created.ok()) << created.error().message;
    runtime_ = std::move(created).value();
  }

  ModelFixReport Fix(const std::string& text, std::vector<std::string> only = {}, bool dry_run = false) {
    ModelFixOptions options;
    options.only = std::move(only);
    options.dry_run = dry_run;
    return Fix(text, options);
  }

  ModelFixReport Fix(const std::string& text, ModelFixOptions options) {
    options.model = dir_.WriteModel("model.onnx", testing::ParseModelText(text));
    options.out = dir_.path() / "fixed.onnx";
    auto report = FixModelFile(*runtime_, options);
    EXPECT_TRUE(report.ok()) << report.error().message;
    return report.ok() ? std::move(report).value() : ModelFixReport{};
  }

  onnx::ModelProto Fixed() {
    auto load = LoadModelFile(dir_.path() / "fixed.onnx");
    EXPECT_NE(load.model, nullptr);
    return load.model ? *load.model->proto : onnx::ModelProto{};
  }

  bool Written() const { return fs::exists(dir_.path() / "fixed.onnx"); }

  std::unique_ptr<Runtime> runtime_;
  testing::TempDir dir_;
};

bool HasCode(const std::vector<Diagnosis>& diagnoses, const std::string& code) {
  return std::any_of(diagnoses.begin(), diagnoses.end(), [&](const Diagnosis& d) { return d.code == code; });
}

bool AllHeld(const ModelFixReport& report) {
  return !report.evidence.empty() &&
         std::all_of(report.evidence.begin(), report.evidence.end(), [](const FixEvidence& e) { return e.held; });
}

std::string Dim0(const onnx::ValueInfoProto& value) {
  const auto& dim = value.type().tensor_type().shape().dim(0);
  return dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.dim_param();
}

TEST_F(FixTest, StaticBatchBecomesSymbolicAndOtherBatchesRun) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 3] x) => (float[4, 3] y) { y = Relu(x) })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_TRUE(AllHeld(report));
  const auto fixed = Fixed();
  EXPECT_EQ(Dim0(fixed.graph().input(0)), "batch");
  EXPECT_EQ(Dim0(fixed.graph().output(0)), "batch");
  EXPECT_TRUE(std::find(report.codes_found.begin(), report.codes_found.end(), "graph.static-batch") !=
              report.codes_found.end());
  EXPECT_TRUE(std::find(report.codes_after.begin(), report.codes_after.end(), "graph.static-batch") ==
              report.codes_after.end());
}

TEST_F(FixTest, BakedReshapeIsMadeRelativeAndProvenAtOtherBatches) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 2, 3] x) => (float[4, 6] y) <int64[2] shape = {4, 6}> {
      r = Reshape(x, shape)
      y = Relu(r)
    })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_TRUE(AllHeld(report));
  bool rewritten = false;
  for (const auto& c : report.changes) rewritten |= c.code == "graph.baked-batch-reshape";
  EXPECT_TRUE(rewritten);
}

// Behind a dynamic signature: the inputs say 'batch', but the module reshaped with a literal 1 beside a size
// it read from the input (x.view(1, x.size(1), 3, 2)), and the output declares the 1. check names the Reshape,
// the literal and the output declaration; fix starts the Concat with 0 and proves batch 1 and another.
constexpr const char* kBakedBehindDynamic = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[batch, seq, 6] x) => (float[1, seq, 3, 2] y) <int64[1] one = {1}, int64[2] tail = {3, 2},
                                                          int64[1] axis = {1}> {
      s = Shape(x)
      len = Gather(s, axis)
      target = Concat<axis = 0>(one, len, tail)
      y = Reshape(x, target)
    })";

TEST_F(FixTest, ALiteralBatchInABuiltReshapeTargetIsFoundAndRepaired) {
  const onnx::ModelProto model = testing::ParseModelText(kBakedBehindDynamic);
  const auto found = LintModel(model);
  auto baked = std::find_if(found.begin(), found.end(),
                            [](const Diagnosis& d) { return d.code == "graph.baked-batch-reshape"; });
  ASSERT_NE(baked, found.end()) << nlohmann::json(found).dump(1);
  EXPECT_NE(baked->message.find("Concat"), std::string::npos) << baked->message;
  EXPECT_NE(baked->message.find("literal 1 (from 'one')"), std::string::npos) << baked->message;
  EXPECT_NE(baked->message.find("output 'y' is declared [1, seq, 3, 2]"), std::string::npos) << baked->message;

  const auto report = Fix(kBakedBehindDynamic);
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_TRUE(AllHeld(report)) << nlohmann::json(report).dump(1);
  const auto fixed = Fixed();
  EXPECT_EQ(Dim0(fixed.graph().output(0)), "batch");
  bool rewritten = false;
  for (const auto& c : report.changes)
    rewritten |=
        c.code == "graph.baked-batch-reshape" && c.change.find("instead of the literal 1") != std::string::npos;
  EXPECT_TRUE(rewritten) << nlohmann::json(report).dump(1);
}

TEST_F(FixTest, GraphThatBakesTheBatchIsRefusedAndNothingWritten) {
  // The bias has the traced batch as its first dimension: no edit of the interface makes batch 2 work.
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 3] x) => (float[4, 3] y) <float[4, 3] bias = {1,2,3,4,5,6,7,8,9,10,11,12}> {
      y = Add(x, bias)
    })");
  EXPECT_FALSE(report.written);
  EXPECT_FALSE(Written());
  EXPECT_TRUE(HasCode(report.diagnoses, "fix.refused"));
  ASSERT_FALSE(report.refusals.empty());
  EXPECT_NE(report.refusals.back().reason.find("refused by its proof"), std::string::npos);
}

TEST_F(FixTest, TrainingDropoutLosesItsTrainingModeAndGivesTheSameOutputsTwice) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 8] x) => (float[N, 8] y) <float ratio = {0.5}, bool training = {1}> {
      y = Dropout(x, ratio, training)
    })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_TRUE(AllHeld(report));
  EXPECT_EQ(Fixed().graph().node(0).input_size(), 2);
  EXPECT_NE(report.baseline.find("inference form"), std::string::npos);
}

TEST_F(FixTest, TrainingBatchNormDropsItsStatisticsOutputs) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 2, 4] x) => (float[N, 2, 4] y)
      <float[2] s = {1, 1}, float[2] b = {0, 0}, float[2] m = {0, 0}, float[2] v = {1, 1}> {
      y, rm, rv = BatchNormalization <training_mode = 1> (x, s, b, m, v)
    })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_TRUE(AllHeld(report));
  const auto fixed = Fixed();
  EXPECT_EQ(fixed.graph().node(0).output_size(), 1);
  EXPECT_FALSE(HasCode(LintModel(fixed), "graph.training-batchnorm"));
}

TEST_F(FixTest, InitializersListedAsInputsStayInitializersOnly) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 2] x, float[2] w) => (float[N, 2] y) <float[2] w = {1, 2}> { y = Mul(x, w) })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  const auto fixed = Fixed();
  ASSERT_EQ(fixed.graph().input_size(), 1);
  EXPECT_EQ(fixed.graph().input(0).name(), "x");
  EXPECT_TRUE(report.proof && report.proof->Passed());
}

TEST_F(FixTest, Float64IslandBecomesFloat32WithinTolerance) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[N, 3] y) <double[1] k = {0.5}> {
      d = Cast <to = 11> (x)
      m = Mul(d, k)
      y = Cast <to = 1> (m)
    })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  const auto fixed = Fixed();
  EXPECT_EQ(fixed.graph().initializer(0).data_type(), onnx::TensorProto::FLOAT);
  EXPECT_FALSE(HasCode(LintModel(fixed), "graph.float64-mixed"));
  EXPECT_TRUE(report.proof && report.proof->Passed());
}

TEST_F(FixTest, Float64ThatFloat32CannotHoldIsRefusedByTheNumbers) {
  // x + 1e10 - 1e10 is x in float64 and 0 (or 1024-steps) in float32: the outputs would move.
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[N, 3] y) <double[1] big = {1e10}> {
      d = Cast <to = 11> (x)
      a = Add(d, big)
      s = Sub(a, big)
      y = Cast <to = 1> (s)
    })");
  EXPECT_FALSE(report.written);
  EXPECT_FALSE(Written());
  EXPECT_TRUE(HasCode(report.diagnoses, "fix.refused"));
}

TEST_F(FixTest, DeadCodeUnusedInputsAndDuplicateInitializersGo) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 2] x, float[N, 2] unused) => (float[N, 2] y) <float[2] a = {1, 2}, float[2] b = {1, 2}> {
      p = Mul(x, a)
      y = Add(p, b)
      dead = Relu(x)
    })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  const auto fixed = Fixed();
  EXPECT_EQ(fixed.graph().node_size(), 2);
  EXPECT_EQ(fixed.graph().input_size(), 1);
  EXPECT_EQ(fixed.graph().initializer_size(), 1);
  EXPECT_TRUE(report.proof && report.proof->Passed());
}

TEST_F(FixTest, EqualConstantNodesAreReadAsOne) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 2] x) => (float[N, 2] y) {
      a = Constant <value = float[2] {1, 2}> ()
      b = Constant <value = float[2] {1, 2}> ()
      p = Mul(x, a)
      y = Add(p, b)
    })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_EQ(Fixed().graph().node_size(), 3);
  EXPECT_TRUE(report.proof && report.proof->Passed());
}

TEST_F(FixTest, TwoNamesForOneSizeBecomeOne) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[a, 3] x, float[b, 3] z) => (float[a, 3] y) { y = Add(x, z) })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  const auto fixed = Fixed();
  EXPECT_EQ(Dim0(fixed.graph().input(1)), "a");
  EXPECT_FALSE(HasCode(LintModel(fixed), "shape.dim-name-inconsistent"));
}

TEST_F(FixTest, OutputDimensionNamedAfterTheInputAxisInferenceProves) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[unk__0, 3] y) { y = Relu(x) })");
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_EQ(Dim0(Fixed().graph().output(0)), "N");
  EXPECT_TRUE(std::find(report.codes_after.begin(), report.codes_after.end(), "shape.output-dim-unrelated") ==
              report.codes_after.end());
}

TEST_F(FixTest, DryRunPlansAndWritesNothing) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 3] x) => (float[4, 3] y) { y = Relu(x) })",
                          {}, /*dry_run=*/true);
  EXPECT_FALSE(report.changes.empty());
  EXPECT_FALSE(report.written);
  EXPECT_FALSE(Written());
}

TEST_F(FixTest, OnlyLimitsThePassesAndUnknownNamesAreErrors) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 3] x, float[4, 3] unused) => (float[4, 3] y) { y = Relu(x) })",
                          std::vector<std::string>{"graph.unused-input"});
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_EQ(Dim0(Fixed().graph().input(0)), "4");  // static-batch was not asked for
  EXPECT_EQ(Fixed().graph().input_size(), 1);
  EXPECT_FALSE(ValidateFixSelection({"no-such-fix"}).ok());
}

TEST_F(FixTest, TargetOpsetIsReachedAfterTheOtherFixes) {
  ModelFixOptions options;
  options.conversion = ConversionOptions{13, 0};
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 3] x) => (float[4, 3] y) { y = Relu(x) })",
                          options);
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  const auto fixed = Fixed();
  EXPECT_EQ(fixed.opset_import(0).version(), 13);
  EXPECT_EQ(Dim0(fixed.graph().input(0)), "batch");
  EXPECT_TRUE(AllHeld(report));
}

TEST_F(FixTest, ReferencesTheFixedModelMustMatch) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x) => (float[2, 3] y) { y = Relu(x) })";
  auto x = Tensor::Zeros(DataType::kFloat32, {2, 3}).value();
  auto* values = reinterpret_cast<float*>(x.data());
  for (int i = 0; i < 6; ++i) values[i] = static_cast<float>(i) - 2.5f;
  auto y = x.Clone();
  auto* relu = reinterpret_cast<float*>(y.data());
  for (int i = 0; i < 6; ++i) relu[i] = std::max(relu[i], 0.0f);
  auto write = [&](const fs::path& folder, Tensor expected) {
    std::vector<NamedTensor> inputs, outputs;
    inputs.push_back({"x", x.Clone()});
    outputs.push_back({"y", std::move(expected)});
    ASSERT_TRUE(WriteTestDataSet(folder, inputs, outputs).ok());
  };
  write(dir_.path() / "good", y.Clone());
  ModelFixOptions options;
  options.reference = dir_.path() / "good";
  auto report = Fix(text, options);
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_TRUE(AllHeld(report));

  fs::remove(dir_.path() / "fixed.onnx");
  write(dir_.path() / "bad", x.Clone());  // the inputs themselves: negative values Relu would have zeroed
  options.reference = dir_.path() / "bad";
  report = Fix(text, options);
  EXPECT_FALSE(report.written);
  EXPECT_FALSE(Written());
  EXPECT_TRUE(HasCode(report.diagnoses, "validate.mismatch"));
}

TEST_F(FixTest, ConstantSubgraphsAreFoldedByTheRuntimeOffline) {
  ModelFixOptions options;
  options.fold_constants = true;
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 2] x) => (float[N, 2] y) <float[2] a = {1, 2}, float[2] b = {3, 4}> {
      s = Add(a, b)
      t = Sqrt(s)
      y = Mul(x, t)
    })",
                          options);
  ASSERT_TRUE(report.written) << nlohmann::json(report).dump(1);
  EXPECT_EQ(Fixed().graph().node_size(), 1);
  EXPECT_TRUE(report.proof && report.proof->Passed());
}

TEST_F(FixTest, OriginalThatDoesNotRunIsNotProvenButTheFixedModelRuns) {
  // The Reshape fails at the sizes the proof tries (3 elements per row into rows of 5) and no fix touches
  // it: neither model runs, so the report says the outputs were not compared and the fixed model did not
  // run either (a note: the unused input's removal stands on its own).
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x, float[N, 3] unused) => (float[N, 5] y) <int64[2] shape = {-1, 5}> {
      y = Reshape(x, shape)
    })");
  EXPECT_TRUE(HasCode(report.diagnoses, "fix.not-proven")) << nlohmann::json(report).dump(1);
  const auto runs = std::find_if(report.evidence.begin(), report.evidence.end(),
                                 [](const FixEvidence& e) { return e.claim == "the fixed model loads and runs here"; });
  ASSERT_NE(runs, report.evidence.end());
  EXPECT_FALSE(runs->held);
  EXPECT_FALSE(runs->required);
}

TEST_F(FixTest, HealthyModelHasNothingToFix) {
  const auto report = Fix(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[N, 3] y) { y = Relu(x) })");
  EXPECT_FALSE(report.written);
  EXPECT_TRUE(HasCode(report.diagnoses, "fix.nothing-to-fix"));
  EXPECT_FALSE(report.Failed());
}

TEST_F(FixTest, UnreadableModelIsAReportNotACrash) {
  ModelFixOptions options;
  options.model = dir_.Write("broken.onnx", "not a model at all");
  options.out = dir_.path() / "fixed.onnx";
  auto report = FixModelFile(*runtime_, options);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->Failed());
  EXPECT_FALSE(Written());
}

}  // namespace
}  // namespace ortkit
