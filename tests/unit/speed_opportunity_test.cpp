#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ortkit/model/speed_opportunity.h"
#include "test_models.h"

namespace ortkit {
namespace {

using testing::ParseModelText;

void AddZeros(onnx::ModelProto& model, const std::string& name, std::vector<std::int64_t> dims) {
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  std::size_t count = 1;
  for (auto d : dims) {
    t->add_dims(d);
    count *= static_cast<std::size_t>(d);
  }
  t->set_raw_data(std::string(count * sizeof(float), '\0'));
}

// Two MatMul over 512x512 weights (2 MiB) and a small bias: the products hold nearly all of it.
onnx::ModelProto MatMulHeavy() {
  onnx::ModelProto model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    mlp (float[batch, 512] x) => (float[batch, 512] y) {
      h = MatMul(x, w1)
      hb = Add(h, b)
      y = MatMul(hb, w2)
    }
  )");
  AddZeros(model, "w1", {512, 512});
  AddZeros(model, "w2", {512, 512});
  AddZeros(model, "b", {512});
  return model;
}

TEST(NextStepFromWeights, NamesTheCommandForAMatMulHeavyModel) {
  const WeightShare share = ShareWeights(MatMulHeavy());
  EXPECT_EQ(share.product_bytes, 2 * 512 * 512 * 4);
  EXPECT_FALSE(share.quantized);
  CpuFeatures vnni;
  vnni.avx512_vnni = true;
  const std::string line = NextStepFromWeights(share, "m.onnx", vnni);
  EXPECT_NE(line.find("`ortkit optimize m.onnx --out fast.onnx`"), std::string::npos) << line;
  EXPECT_NE(line.find("MatMul/Gemm hold 100% of the weights"), std::string::npos) << line;
  EXPECT_NE(line.find("8-bit dot products"), std::string::npos) << line;
  const std::string without = NextStepFromWeights(share, "m.onnx", CpuFeatures{});
  EXPECT_NE(without.find("no 8-bit dot products (VNNI)"), std::string::npos) << without;
}

TEST(NextStepFromWeights, NothingForATinyOrAQuantisedModel) {
  const onnx::ModelProto relu = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    relu (float[4] x) => (float[4] y) { y = Relu(x) }
  )");
  EXPECT_EQ(NextStepFromWeights(ShareWeights(relu), "relu.onnx", CpuFeatures{}), "");
  onnx::ModelProto quantised = MatMulHeavy();
  auto* dql = quantised.mutable_graph()->add_node();
  dql->set_op_type("DynamicQuantizeLinear");
  dql->add_input("x");
  for (const char* o : {"xq", "xs", "xz"}) dql->add_output(o);
  const WeightShare share = ShareWeights(quantised);
  EXPECT_TRUE(share.quantized);
  EXPECT_EQ(NextStepFromWeights(share, "q.onnx", CpuFeatures{}), "");
}

TEST(NextStepFromProfile, WhenFloatProductsTakeMostOfTheTime) {
  const std::string line = NextStepFromProfile({{"MatMul", 0.78}, {"Add", 0.2}, {"Relu", 0.02}}, "m.onnx");
  EXPECT_NE(line.find("MatMul is 78% of the time: `ortkit optimize m.onnx --out fast.onnx`"), std::string::npos)
      << line;
  const std::string two = NextStepFromProfile({{"FusedConv", 0.4}, {"Add", 0.3}, {"Gemm", 0.3}}, "c.onnx");
  EXPECT_NE(two.find("FusedConv and Gemm are 70% of the time"), std::string::npos) << two;
  EXPECT_EQ(NextStepFromProfile({{"Relu", 1.0}}, "relu.onnx"), "");
  // Quantised kernels are what optimize would have made: nothing to suggest.
  EXPECT_EQ(NextStepFromProfile({{"MatMulIntegerToFloat", 0.8}, {"MatMul", 0.1}}, "q.onnx"), "");
}

}  // namespace
}  // namespace ortkit
