#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "ortkit/convert/opset_conversion.h"
#include "ortkit/model/external_data.h"
#include "ortkit/model/model_file.h"
#include "ortkit/validate/model_equivalence.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

int OpsetOf(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty()) return static_cast<int>(opset.version());
  }
  return 0;
}

int CountOps(const onnx::ModelProto& model, const std::string& op_type) {
  return static_cast<int>(std::count_if(model.graph().node().begin(), model.graph().node().end(),
                                        [&](const onnx::NodeProto& n) { return n.op_type() == op_type; }));
}

const Diagnosis* Find(const ConversionOutcome& outcome, const std::string& code) {
  for (const auto& d : outcome.diagnoses) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

// What the default PyTorch 2.x exporter writes: IR 10, opset 20, both Gelu forms.
constexpr const char* kGelus = R"(
  <ir_version: 10, opset_import: ["" : 20]>
  gelus (float[batch, seq, 8] x) => (float[batch, seq, 8] y) {
    [gelu_exact] g = Gelu (x)
    y = Gelu <approximate = "tanh"> (g)
  }
)";

TEST(IrVersionForOpset, FollowsOnnxReleases) {
  EXPECT_EQ(IrVersionForOpset(13), 7);
  EXPECT_EQ(IrVersionForOpset(17), 8);
  EXPECT_EQ(IrVersionForOpset(18), 8);
  EXPECT_EQ(IrVersionForOpset(19), 9);
  EXPECT_EQ(IrVersionForOpset(20), 9);
  EXPECT_EQ(IrVersionForOpset(21), 10);
  EXPECT_EQ(IrVersionForOpset(25), 13);
}

TEST(ConvertOpset, GeluBecomesItsFormulaAndTheOutputKeepsItsName) {
  const auto outcome = ConvertOpset(testing::ParseModelText(kGelus), ConversionOptions{17, 0});
  ASSERT_TRUE(outcome.model.has_value()) << outcome.diagnoses.front().message;
  const auto& model = *outcome.model;
  EXPECT_EQ(OpsetOf(model), 17);
  EXPECT_EQ(model.ir_version(), 8);
  EXPECT_EQ(CountOps(model, "Gelu"), 0);
  EXPECT_EQ(CountOps(model, "Erf"), 1);
  EXPECT_EQ(CountOps(model, "Tanh"), 1);
  EXPECT_EQ(model.graph().output(0).name(), "y");
  ASSERT_EQ(outcome.rewrites.size(), 2u);
  EXPECT_EQ(outcome.rewrites[0].op_type, "Gelu");
  EXPECT_NE(outcome.rewrites[1].change.find("tanh"), std::string::npos);
}

TEST(ConvertOpset, UnevenSplitGetsExplicitSizes) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 18]>
    chunks (float[2, 10] x) => (float[2, 4] a, float[2, 4] b, float[2, 2] c) {
      a, b, c = Split <axis = 1, num_outputs = 3> (x)
    }
  )"),
                                    ConversionOptions{17, 0});
  ASSERT_TRUE(outcome.model.has_value()) << outcome.diagnoses.front().message;
  const auto& split = outcome.model->graph().node(outcome.model->graph().node_size() - 1);
  EXPECT_EQ(split.op_type(), "Split");
  EXPECT_EQ(split.input_size(), 2);  // the sizes 4, 4, 2 as a constant input
  for (const auto& attribute : split.attribute()) EXPECT_NE(attribute.name(), "num_outputs");
}

TEST(ConvertOpset, ShapeStartEndBecomesASlice) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    tail (float[batch, seq, 4] x) => (int64[2] s) {
      s = Shape <start = 1> (x)
    }
  )"),
                                    ConversionOptions{13, 0});
  ASSERT_TRUE(outcome.model.has_value()) << outcome.diagnoses.front().message;
  EXPECT_EQ(CountOps(*outcome.model, "Slice"), 1);
  EXPECT_EQ(outcome.model->graph().output(0).name(), "s");
  const auto& slice = outcome.model->graph().node(outcome.model->graph().node_size() - 1);
  EXPECT_EQ(slice.output(0), "s");
}

// PyTorch's exporter writes Reduce*-18 with noop_with_empty_axes = 0, an attribute opset 17 has only on ReduceSum.
TEST(ConvertOpset, ReduceMeanAxesBecomeAnAttributeAndTheNeutralNoopIsDropped) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 18]>
    rms (float[batch, 8] x) => (float[batch, 1] y) {
      axes = Constant <value = int64[1] {-1}> ()
      y = ReduceMean <keepdims = 1, noop_with_empty_axes = 0> (x, axes)
    }
  )"),
                                    ConversionOptions{17, 0});
  ASSERT_TRUE(outcome.model.has_value()) << outcome.diagnoses.front().message;
  const auto& mean = outcome.model->graph().node(outcome.model->graph().node_size() - 1);
  ASSERT_EQ(mean.op_type(), "ReduceMean");
  EXPECT_EQ(mean.input_size(), 1);
  std::vector<std::string> attributes;
  for (const auto& a : mean.attribute()) attributes.push_back(a.name());
  std::sort(attributes.begin(), attributes.end());
  EXPECT_EQ(attributes, (std::vector<std::string>{"axes", "keepdims"}));

  const auto noop = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 18]>
    rms (float[batch, 8] x) => (float[batch, 8] y) {
      y = ReduceMean <noop_with_empty_axes = 1> (x)
    }
  )"),
                                 ConversionOptions{17, 0});
  EXPECT_FALSE(noop.model.has_value());
  EXPECT_NE(Find(noop, "convert.not-expressible"), nullptr);
}

TEST(ConvertOpset, PadAlongChosenAxesIsRefusedNamingTheNode) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 18]>
    pad (float[4, 4] x) => (float[4, 6] y) {
      pads = Constant <value = int64[2] {1, 1}> ()
      axes = Constant <value = int64[1] {1}> ()
      [pad_width] y = Pad (x, pads, , axes)
    }
  )"),
                                    ConversionOptions{17, 0});
  EXPECT_FALSE(outcome.model.has_value());
  const Diagnosis* d = Find(outcome, "convert.not-expressible");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->location.node, "pad_width");
  EXPECT_EQ(d->location.op_type, "Pad");
  EXPECT_NE(d->message.find("axes"), std::string::npos) << d->message;
}

TEST(ConvertOpset, AnOperatorWithoutAdapterIsNamedWithItsNodes) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    norm (float[2, 4, 3] x, float[4] scale, float[4] bias) => (float[2, 4, 3] y) {
      [gn] y = GroupNormalization <num_groups = 2> (x, scale, bias)
    }
  )"),
                                    ConversionOptions{17, 0});
  EXPECT_FALSE(outcome.model.has_value());
  const Diagnosis* d = Find(outcome, "convert.no-adapter");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->location.node, "gn");
  EXPECT_NE(d->message.find("GroupNormalization"), std::string::npos) << d->message;
}

TEST(ConvertOpset, ATypeTheOlderVersionLacksIsRefused) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 20]>
    fill (int64[2] shape) => (bfloat16[a, b] y) {
      [fill_bf16] y = ConstantOfShape <value = bfloat16[1] {1}> (shape)
    }
  )"),
                                    ConversionOptions{17, 0});
  EXPECT_FALSE(outcome.model.has_value());
  const Diagnosis* d = Find(outcome, "convert.not-expressible");
  ASSERT_NE(d, nullptr) << (outcome.diagnoses.empty() ? "" : outcome.diagnoses.front().code);
  EXPECT_EQ(d->location.node, "fill_bf16");
}

TEST(ConvertOpset, AnIrVersionThatCannotHoldTheTypesIsRefused) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    f8 (float[4] x) => (float8e4m3fn[4] y) {
      y = Cast <to = 17> (x)
    }
  )"),
                                    ConversionOptions{19, 8});
  EXPECT_FALSE(outcome.model.has_value());
  EXPECT_NE(Find(outcome, "convert.ir-too-low"), nullptr);
}

TEST(ConvertOpset, OtherDomainsAreKeptWithAWarning) {
  const auto outcome = ConvertOpset(testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    fused (float[2, 4] x) => (float[2, 4] y) {
      y = com.microsoft.FastGelu (x)
    }
  )"),
                                    ConversionOptions{15, 0});
  ASSERT_TRUE(outcome.model.has_value());
  EXPECT_NE(Find(outcome, "convert.custom-domain"), nullptr);
  EXPECT_EQ(outcome.model->graph().node(0).domain(), "com.microsoft");
}

TEST(ConvertOpset, TargetsOutsideTheConvertersRangeAreRefused) {
  EXPECT_FALSE(ConvertOpset(testing::ParseModelText(kGelus), ConversionOptions{5, 0}).model.has_value());
  EXPECT_FALSE(ConvertOpset(testing::ParseModelText(kGelus), ConversionOptions{99, 0}).model.has_value());
}

class CheckEquivalenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = std::move(Runtime::Create().value());
    dir_ = fs::temp_directory_path() / ("ortkit_convert_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    original_ = testing::ParseModelText(kGelus);
    ASSERT_TRUE(WriteModel(original_, dir_ / "gelus.onnx", false).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Runtime> runtime_;
  fs::path dir_;
  onnx::ModelProto original_;
};

TEST_F(CheckEquivalenceTest, TheFormulaMatchesTheKernelAtTwoShapes) {
  const auto outcome = ConvertOpset(original_, ConversionOptions{17, 0});
  ASSERT_TRUE(outcome.model.has_value());
  std::string bytes;
  ASSERT_TRUE(outcome.model->SerializeToString(&bytes));
  auto proof = CheckEquivalence(*runtime_, ModelToLoad{dir_ / "gelus.onnx", {}}, bytes, original_, {});
  ASSERT_TRUE(proof.ok()) << proof.error().message;
  ASSERT_EQ(proof->trials.size(), 2u);
  EXPECT_EQ(proof->trials[0].label, "batch=1, seq=16");
  EXPECT_EQ(proof->trials[1].label, "batch=3, seq=32");
  EXPECT_TRUE(proof->Passed());
  EXPECT_LT(proof->MaxAbsError(), 1e-5);
}

TEST_F(CheckEquivalenceTest, AModelThatComputesSomethingElseFails) {
  // Not a conversion of the original at all: its outputs must be told apart.
  const onnx::ModelProto other = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    other (float[batch, seq, 8] x) => (float[batch, seq, 8] y) {
      half = Constant <value = float {0.6}> ()
      y = Mul (x, half)
    }
  )");
  std::string bytes;
  ASSERT_TRUE(other.SerializeToString(&bytes));
  auto proof = CheckEquivalence(*runtime_, ModelToLoad{dir_ / "gelus.onnx", {}}, bytes, original_, {});
  ASSERT_TRUE(proof.ok()) << proof.error().message;
  EXPECT_FALSE(proof->Passed());
  EXPECT_GT(proof->MaxAbsError(), 0.01);
}

TEST_F(CheckEquivalenceTest, AConvertedModelThatDoesNotLoadIsAnError) {
  auto proof = CheckEquivalence(*runtime_, ModelToLoad{dir_ / "gelus.onnx", {}}, "not a model", original_, {});
  ASSERT_FALSE(proof.ok());
  EXPECT_EQ(proof.error().message.rfind("converted: ", 0), 0u) << proof.error().message;
}

TEST_F(CheckEquivalenceTest, WrittenExternalDataReadsBack) {
  onnx::ModelProto weighted = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    scale (float[2, 512] x) => (float[2, 512] y) {
      y = Mul (x, w)
    }
  )");
  auto* w = weighted.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(512);
  std::string raw(512 * sizeof(float), '\0');
  for (int i = 0; i < 512; ++i) {
    const float v = 0.25f * static_cast<float>(i % 7);
    std::memcpy(raw.data() + i * sizeof(float), &v, sizeof v);
  }
  w->set_raw_data(raw);
  ASSERT_TRUE(WriteModel(weighted, dir_ / "weighted.onnx", true).ok());
  ASSERT_TRUE(fs::exists(dir_ / "weighted.onnx.data"));
  EXPECT_EQ(fs::file_size(dir_ / "weighted.onnx.data"), raw.size());
  ModelLoad load = LoadModelFile(dir_ / "weighted.onnx");
  ASSERT_NE(load.model, nullptr);
  EXPECT_EQ(ListExternalTensors(*load.model->proto).size(), 1u);
  onnx::ModelProto inlined = *load.model->proto;
  ASSERT_TRUE(InlineExternalData(inlined, dir_, kMaxInlinedBytes, "test", "none").ok());
  EXPECT_EQ(inlined.graph().initializer(0).raw_data(), raw);
}

}  // namespace
}  // namespace ortkit
