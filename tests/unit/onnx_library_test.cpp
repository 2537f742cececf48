// The ONNX C++ library that ortkit links (built by scripts/setup.sh) beside ONNX Runtime 1.29 in one
// process: the checker, shape inference, the version converter and the textual parser work on what
// today's exporters write (IR 10, opset 20, Gelu-20), and an ONNX Runtime session runs the same
// model in the same process, so neither the two ONNX copies nor the protobuf runtimes clash.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/version_converter/convert.h>

#include "ortkit/check/onnx_checker.h"
#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "test_models.h"

namespace ortkit {
namespace {

// As PyTorch 2.x's default exporter stamps its models.
constexpr const char* kToday = R"(
<ir_version: 10, opset_import: ["" : 20]>
today (float[batch, 8] x) => (float[batch, 8] y) {
  g = Gelu<approximate = "tanh">(x)
  y = Relu(g)
}
)";

TEST(OnnxLibrary, KnowsWhatTodaysExportersWrite) {
  EXPECT_GE(KnownIrVersion(), 10);
  EXPECT_GE(KnownOnnxOpset(), 20);
  EXPECT_EQ(KnownIrVersion(), 14);  // ONNX 1.23.2; change with the pin in scripts/setup.sh
  EXPECT_EQ(KnownOnnxOpset(), 28);
}

TEST(OnnxLibrary, EveryLayerRunsOnAnOpset20ModelAndOnnxRuntimeRunsItInTheSameProcess) {
  onnx::ModelProto model = testing::ParseModelText(kToday);
  ASSERT_EQ(model.graph().node_size(), 2);

  const LayerOutcome checked = RunChecker(model);
  EXPECT_TRUE(checked.ran) << checked.skipped_reason;
  EXPECT_TRUE(checked.diagnoses.empty()) << checked.diagnoses.front().message;
  const LayerOutcome inferred = RunShapeInference(model);
  EXPECT_TRUE(inferred.ran) << inferred.skipped_reason;
  for (const auto& d : inferred.diagnoses) ADD_FAILURE() << d.code << ": " << d.message;
  ASSERT_NE(onnx::OpSchemaRegistry::Schema("Gelu", 20, ""), nullptr);

  // The stock converter goes down to opset 18 for Relu but has no adapter below Gelu-20.
  onnx::ModelProto relu = testing::ParseModelText(
      R"(<ir_version: 10, opset_import: ["" : 20]> r (float[N] x) => (float[N] y) { y = Relu(x) })");
  const onnx::ModelProto down = onnx::version_conversion::ConvertVersion(relu, 17);
  EXPECT_EQ(down.opset_import(0).version(), 17);
  EXPECT_THROW(onnx::version_conversion::ConvertVersion(model, 17), std::exception);

  testing::TempDir dir;
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok());
  auto session = Session::Create(**runtime, dir.WriteModel("today.onnx", model), SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Tensor::FromVector<float>({2, 8}, std::vector<float>(16, 1.0f)).value()});
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().message;
  EXPECT_NEAR((*outputs)[0].tensor.values<float>()[0], 0.8412f, 1e-3);  // gelu(1), tanh form
}

// ONNX 1.23's Einsum inference loops forever on a space in the equation's left-hand side; numpy and
// ONNX Runtime allow spaces, so the check removes them first.
TEST(OnnxLibrary, EinsumWithSpacesIsInferredAndABadByteFailsCleanly) {
  onnx::ModelProto spaced = testing::ParseModelText(R"(
<ir_version: 8, opset_import: ["" : 17]>
e (float[2, 3] a, float[3, 4] b) => (float[N, M] y) {
  y = Einsum<equation = "ij, jk -> ik">(a, b)
}
)");
  const LayerOutcome inferred = RunShapeInference(spaced);
  ASSERT_TRUE(inferred.ran) << inferred.skipped_reason;
  for (const auto& d : inferred.diagnoses) EXPECT_NE(d.code, "shape.inference-failed") << d.message;
  const auto& dims = spaced.graph().output(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 2);
  EXPECT_EQ(dims[0].dim_value(), 2);
  EXPECT_EQ(dims[1].dim_value(), 4);

  onnx::ModelProto bad = spaced;
  bad.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_s("ij,j\x8bk->ik");
  const LayerOutcome failed = RunShapeInference(bad);
  ASSERT_EQ(failed.diagnoses.size(), 1u);
  EXPECT_EQ(failed.diagnoses[0].code, "shape.inference-failed");
  EXPECT_NE(failed.diagnoses[0].message.find("the Einsum equation holds byte 0x8b at position 4"), std::string::npos)
      << failed.diagnoses[0].message;
}

}  // namespace
}  // namespace ortkit
