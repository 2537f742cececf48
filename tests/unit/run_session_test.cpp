// RunSession on models whose outputs are not all tensors: a classic-ML classifier converted by
// skl2onnx answers a label tensor and a ZipMap (a sequence of maps) of class probabilities.
#include <gtest/gtest.h>

#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "test_models.h"

namespace ortkit {
namespace {

onnx::ModelProto Classifier() {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 1]>
    classifier (float[N, 2] x) => (int64[N] label, float[N, 2] probs) {
      label, probs = ai.onnx.ml.LinearClassifier <coefficients = [1.0, 2.0, 3.0, 4.0], intercepts = [0.1, 0.2],
                                                  classlabels_ints = [0, 1], post_transform = "SOFTMAX"> (x)
    }
  )");
  // The ZipMap output the text format cannot declare: seq(map(int64, float)).
  auto* node = model.mutable_graph()->add_node();
  node->set_op_type("ZipMap");
  node->set_domain("ai.onnx.ml");
  node->add_input("probs");
  node->add_output("output_probability");
  auto* labels = node->add_attribute();
  labels->set_name("classlabels_int64s");
  labels->set_type(onnx::AttributeProto::INTS);
  labels->add_ints(0);
  labels->add_ints(1);
  auto* out = model.mutable_graph()->mutable_output(1);
  out->set_name("output_probability");
  out->clear_type();
  auto* map = out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_map_type();
  map->set_key_type(onnx::TensorProto::INT64);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return model;
}

TEST(RunSession, SequenceAndMapOutputsAreLeftOutNotAFailure) {
  auto runtime = Runtime::Create().value();
  testing::TempDir dir;
  auto session = Session::Create(*runtime, dir.WriteModel("classifier.onnx", Classifier()), SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::FromVector<float>({3, 2}, {1, 0, 0, 1, -1, -1}).value()});
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().message;
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ((*outputs)[0].name, "label");
  EXPECT_EQ((*outputs)[0].tensor.shape(), (std::vector<std::int64_t>{3}));

  // Asked for by name, the sequence is still refused with a message that says why.
  auto named = RunSession(**session, RunRequest{inputs, {"output_probability"}});
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.error().message.find("is not a tensor"), std::string::npos) << named.error().message;
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

// A declaration traced at one size and written as fixed: the run gives another shape.
TEST(RunSession, OutputsThatContradictTheirDeclarationAreNamed) {
  auto runtime = Runtime::Create().value();
  testing::TempDir dir;
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    stale (float[N, 4] x) => (float[1, 4] y, float[N, 4] z, float[seqlen] w) {
      y = Identity (x)
      z = Relu (x)
      w = Identity (x)
    }
  )");
  auto session = Session::Create(*runtime, dir.WriteModel("stale.onnx", model), SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, {3, 4}).value()});
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().message;
  const auto mismatches = OutputShapeMismatches(DeclaredOutputs(model), *outputs);
  ASSERT_EQ(mismatches.size(), 2u);
  EXPECT_EQ(mismatches[0], "output 'y' is [3, 4] but the model declares [1, 4]");
  EXPECT_EQ(mismatches[1], "output 'w' is [3, 4] but the model declares [seqlen]");
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

// A model whose every output is a sequence (SplitToSequence) still runs: ONNX Runtime needs an output to fetch,
// so ortkit fetches the sequence and drops it. A failing run still fails.
TEST(RunSession, AModelWithoutTensorOutputsStillRuns) {
  auto runtime = Runtime::Create().value();
  testing::TempDir dir;
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    split (float[N, 3] x) => (seq(float[?, 3]) pieces) {
      pieces = SplitToSequence <axis = 0> (x)
    }
  )");
  auto session = Session::Create(*runtime, dir.WriteModel("split.onnx", model), SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, {4, 3}).value()});
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().message;
  EXPECT_TRUE(outputs->empty());

  inputs[0].tensor = Tensor::Zeros(DataType::kFloat32, {4, 5}).value();
  EXPECT_FALSE(RunSession(**session, RunRequest{inputs, {}}).ok());
}

}  // namespace
}  // namespace ortkit
