#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "ortkit/core/cpu_features.h"

#include "ortkit/model/summary.h"
#include "ortkit/optimize/calibration.h"
#include "ortkit/optimize/candidate_proof.h"
#include "ortkit/optimize/graph_rewrite.h"
#include "ortkit/optimize/optimize.h"
#include "ortkit/optimize/passes.h"
#include "ortkit/optimize/weight_quantization.h"
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/npz.h"
#include "test_models.h"

namespace ortkit {
namespace {

using testing::ParseModelText;
using testing::TempDir;

std::vector<float> RandomFloats(std::size_t count, std::uint32_t seed, float scale = 0.1f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0, scale);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(gen);
  return v;
}

void AddWeight(onnx::ModelProto& model, const std::string& name, std::vector<std::int64_t> dims, std::uint32_t seed) {
  std::size_t count = 1;
  for (auto d : dims) count *= static_cast<std::size_t>(d);
  const auto values = RandomFloats(count, seed);
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
}

// A two-layer perceptron: MatMul + Add + Relu, then a Gemm (transposed weight, alpha, bias) to 10 scores.
onnx::ModelProto Perceptron() {
  onnx::ModelProto model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    mlp (float[batch, 64] x) => (float[batch, 10] logits) {
      h = MatMul(x, w1)
      hb = Add(h, b1)
      r = Relu(hb)
      logits = Gemm<transB = 1, alpha = 0.5>(r, w2, b2)
    }
  )");
  AddWeight(model, "w1", {64, 128}, 1);
  AddWeight(model, "b1", {128}, 2);
  AddWeight(model, "w2", {10, 128}, 3);
  AddWeight(model, "b2", {10}, 4);
  return model;
}

Tensor Floats(std::vector<std::int64_t> shape, std::uint32_t seed) {
  std::size_t count = 1;
  for (auto d : shape) count *= static_cast<std::size_t>(d);
  return Tensor::FromVector<float>(shape, RandomFloats(count, seed, 1.0f)).value();
}

std::vector<NamedTensor> RunModel(const onnx::ModelProto& model, std::vector<NamedTensor> inputs) {
  auto runtime = Runtime::Create().value();
  auto session = Session::CreateFromBytes(*runtime, model.SerializeAsString(), SessionConfig{});
  EXPECT_TRUE(session.ok()) << session.error().message;
  if (!session.ok()) return {};
  auto outputs = RunSession(**session, RunRequest{inputs, {}});
  EXPECT_TRUE(outputs.ok()) << outputs.error().message;
  return outputs.ok() ? std::move(*outputs) : std::vector<NamedTensor>{};
}

TEST(WeightQuantization, Int8PerChannelRoundTripsWithinHalfAStep) {
  const std::vector<float> w = {0.5f, -2.0f, 0.25f, 1.0f, 0.0f, 0.0f};  // [3, 2]: column 0 up to 0.5, column 1 up to 2
  const Int8Channels q = QuantizeInt8PerChannel(w, 3, 2, /*per_column=*/true, /*reduce_range=*/false);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_FLOAT_EQ(q.scales[0], 0.5f / 127);
  EXPECT_FLOAT_EQ(q.scales[1], 2.0f / 127);
  EXPECT_EQ(q.values[1], -127);
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(q.values[i] * q.scales[i % 2], w[i], q.scales[i % 2] / 2);
  const Int8Channels reduced = QuantizeInt8PerChannel(w, 3, 2, true, /*reduce_range=*/true);
  EXPECT_EQ(reduced.values[1], -63);  // 7 bits
  const Int8Channels rows = QuantizeInt8PerChannel(std::vector<float>(4, 0.0f), 2, 2, /*per_column=*/false, false);
  EXPECT_EQ(rows.scales, (std::vector<float>{1, 1}));  // zeros dequantise to zeros
}

TEST(WeightQuantization, Int4BlocksInMatMulNBitsLayout) {
  const std::int64_t k = 40, n = 3, block = 16;  // a partial last block of 8
  const auto w = RandomFloats(static_cast<std::size_t>(k * n), 7);
  for (const bool symmetric : {false, true}) {
    const Int4Blocks q = QuantizeInt4Blocks(w, k, n, block, symmetric);
    EXPECT_EQ(q.blocks_per_column, 3);
    EXPECT_EQ(q.packed.size(), static_cast<std::size_t>(n * 3 * block / 2));
    EXPECT_EQ(q.scales.size(), static_cast<std::size_t>(n * 3));
    EXPECT_EQ(q.zero_points.size(), symmetric ? 0u : static_cast<std::size_t>(n * 2));
    for (std::int64_t r = 0; r < k; ++r) {
      for (std::int64_t c = 0; c < n; ++c) {
        // Symmetric blocks map the largest magnitude to -8, so the other sign reaches +7 only: a step of clipping.
        const float step = std::abs(q.scales[c * 3 + r / block]) * (symmetric ? 1.01f : 0.51f);
        EXPECT_NEAR(DequantizeInt4(q, r, c), w[r * n + c], step) << r << "," << c << " symmetric " << symmetric;
      }
    }
  }
  // The first element of a block is the low nibble of its first byte.
  const std::vector<float> ramp = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const Int4Blocks r = QuantizeInt4Blocks(ramp, 16, 1, 16, /*symmetric=*/false);
  EXPECT_EQ(r.packed[0], 0x10);  // 0 in the low nibble, 1 in the high one
  EXPECT_FLOAT_EQ(r.scales[0], 1.0f);
}

// A MatMul over a [80, 64] weight (a partial last block for every block size but 16) and one over a small
// weight that stays float. ONNX Runtime's MatMulNBits must compute x times the weight QuantizeInt4Blocks
// packed, as DequantizeInt4 reads it: the packing proven by the runtime itself.
onnx::ModelProto Int4Model() {
  onnx::ModelProto model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    proj (float[batch, seq, 80] x) => (float[batch, seq, 64] y, float[batch, seq, 8] small) {
      y = MatMul(x, w)
      head = Slice(x, starts, ends, axes)
      small = MatMul(head, w_small)
    }
  )");
  AddWeight(model, "w", {80, 64}, 21);
  AddWeight(model, "w_small", {16, 8}, 22);
  for (const auto& [name, value] : {std::pair<const char*, std::int64_t>{"starts", 0}, {"ends", 16}, {"axes", 2}}) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(value);
  }
  return model;
}

TEST(Int4Pass, MatMulNBitsInOnnxRuntimeComputesTheDequantizedWeights) {
  const onnx::ModelProto original = Int4Model();
  const auto w = GraphRewrite::FloatValues(original.graph().initializer(0)).value();
  const std::int64_t k = 80, n = 64;
  for (const std::int64_t block : {16, 32, 64, 128}) {
    SCOPED_TRACE(block);
    onnx::ModelProto model = original;
    OptimizePassContext context;
    context.int4_block = block;
    context.int4_accuracy_level = 0;  // float activations: the kernel's arithmetic is the packed weights' own
    auto result = QuantizeInt4WeightOnly(model, context);
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->rewritten.at("MatMul"), 1);
    EXPECT_EQ(result->produced.at("MatMulNBits"), 1);
    ASSERT_EQ(result->left.size(), 1u);
    EXPECT_NE(result->left[0].find("small weight"), std::string::npos) << result->left[0];
    EXPECT_TRUE(std::any_of(model.opset_import().begin(), model.opset_import().end(),
                            [](const auto& o) { return o.domain() == "com.microsoft" && o.version() == 1; }));
    EXPECT_EQ(model.graph().input_size(), 1);  // the interface is kept
    EXPECT_EQ(model.graph().output(0).name(), "y");
    for (const auto& t : model.graph().initializer()) EXPECT_NE(t.name(), "w") << "the float weight is dropped";
    const auto nbits = std::find_if(model.graph().node().begin(), model.graph().node().end(),
                                    [](const auto& node) { return node.op_type() == "MatMulNBits"; });
    ASSERT_NE(nbits, model.graph().node().end());
    EXPECT_EQ(nbits->domain(), "com.microsoft");
    EXPECT_EQ(IntAttribute(*nbits, "K", 0), k);
    EXPECT_EQ(IntAttribute(*nbits, "N", 0), n);
    EXPECT_EQ(IntAttribute(*nbits, "bits", 0), 4);
    EXPECT_EQ(IntAttribute(*nbits, "block_size", 0), block);
    EXPECT_EQ(IntAttribute(*nbits, "accuracy_level", -1), 0);

    const Tensor x = Floats({2, 3, k}, 23);
    std::vector<NamedTensor> inputs;
    inputs.push_back({"x", x.Clone()});
    const auto out = RunModel(model, std::move(inputs));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].tensor.shape(), (std::vector<std::int64_t>{2, 3, n}));
    const Int4Blocks q = QuantizeInt4Blocks(w, k, n, block, /*symmetric=*/false);
    const auto xs = x.values<float>();
    const auto ys = out[0].tensor.values<float>();
    double worst_packing = 0, worst_float = 0, bound = 0;
    for (std::int64_t row = 0; row < 6; ++row) {
      for (std::int64_t col = 0; col < n; ++col) {
        double dequantized = 0, exact = 0, reach = 0, step = 0;
        for (std::int64_t i = 0; i < k; ++i) {
          const double a = xs[row * k + i];
          dequantized += a * DequantizeInt4(q, i, col);
          exact += a * w[i * n + col];
          step = std::max(step, static_cast<double>(std::abs(q.scales[col * q.blocks_per_column + i / block])));
          reach += std::abs(a);
        }
        const double y = ys[row * n + col];
        worst_packing = std::max(worst_packing, std::abs(y - dequantized));
        worst_float = std::max(worst_float, std::abs(y - exact) / (reach * step));
        bound = std::max(bound, reach * step);
      }
    }
    // The same arithmetic in another order: float rounding only, far below one step of any block.
    EXPECT_LT(worst_packing, 1e-4 * bound) << "MatMulNBits does not read the blocks as packed";
    // Against the float weights: each weight within half a step of its block (a zero point rounds too).
    EXPECT_LE(worst_float, 0.51);
  }
  // The default, accuracy_level 4: int8 activations per block inside the kernel, a little further from float.
  onnx::ModelProto model = original;
  ASSERT_TRUE(QuantizeInt4WeightOnly(model, OptimizePassContext{}).ok());
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Floats({2, 3, k}, 23)});
  std::vector<NamedTensor> float_inputs;
  float_inputs.push_back({"x", inputs[0].tensor.Clone()});
  const auto expected = RunModel(original, std::move(float_inputs));
  const auto actual = RunModel(model, std::move(inputs));
  ASSERT_EQ(actual.size(), 2u);
  const Agreement a = MeasureAgreement(expected[0].tensor, actual[0].tensor, OutputPurpose::kEmbedding);
  EXPECT_GT(a.min_cosine, 0.99);
}

TEST(Int4Pass, NothingToRewriteSaysWhyAndBadBlocksAreRefused) {
  onnx::ModelProto model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    tiny (float[batch, 16] x, float[batch, 16] z) => (float[batch, 8] y, float[batch, batch] g) {
      y = MatMul(x, w)
      g = MatMul(x, zt)
      zt = Transpose(z)
    }
  )");
  AddWeight(model, "w", {16, 8}, 31);
  OptimizePassContext context;
  auto result = QuantizeInt4WeightOnly(model, context);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_FALSE(result->changed());
  const std::string left = fmt::format("{}", fmt::join(result->left, "; "));
  EXPECT_NE(left.find("1 MatMul with a small weight (under 4096 values"), std::string::npos) << left;
  EXPECT_NE(left.find("1 MatMul without a constant float weight"), std::string::npos) << left;
  context.int4_block = 48;
  auto refused = QuantizeInt4WeightOnly(model, context);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--int4-block 48"), std::string::npos) << refused.error().message;
}

// int4 is a default candidate for a decoder's many large MatMuls, not for a small perceptron.
TEST(DefaultCandidates, Int4ForDecodersOnly) {
  onnx::ModelProto decoder = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    step (float[batch, 1, 64] x, float[batch, past, 64] past_key) => (float[batch, 1, 64] y) {
      a = MatMul(x, w1)
      b = MatMul(a, w2)
      c = MatMul(b, w3)
      y = MatMul(c, w4)
    }
  )");
  for (const char* name : {"w1", "w2", "w3", "w4"}) AddWeight(decoder, name, {64, 64}, 41);
  const auto candidates = DefaultCandidates(decoder, "cpu");
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), "int4"), candidates.end());
  EXPECT_TRUE(LikelyInt4Decoder(decoder.graph()));
  decoder.mutable_graph()->mutable_input(1)->set_name("memory");  // no cache, no vocabulary: an encoder
  EXPECT_FALSE(LikelyInt4Decoder(decoder.graph()));
  const auto perceptron = DefaultCandidates(Perceptron(), "cpu");
  EXPECT_EQ(std::find(perceptron.begin(), perceptron.end(), "int4"), perceptron.end());
}

// float16 is for a GPU provider: refused before anything runs, saying why and what to do instead.
TEST(ValidateCandidates, Float16IsRefusedWithoutAGpu) {
  const Status refused = ValidateCandidates({"fuse", "fuse+float16"}, "cpu");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalidArgument);
  const std::string& message = refused.error().message;
  EXPECT_NE(message.find("--passes 'fuse+float16': float16 is for a GPU provider"), std::string::npos) << message;
  const auto providers = Runtime::AvailableProviders();
  if (std::find(providers.begin(), providers.end(), "CUDAExecutionProvider") == providers.end()) {
    EXPECT_NE(message.find("has no CUDA/TensorRT"), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find("--provider is cpu"), std::string::npos) << message;
  }
  EXPECT_NE(message.find("int8-dynamic or int4"), std::string::npos) << message;
  EXPECT_TRUE(ValidateCandidates({"int4", "fuse+int4"}, "cpu").ok());
}

TEST(Int8DynamicPass, RewritesMatMulAndGemmAndStaysClose) {
  onnx::ModelProto model = Perceptron();
  const onnx::ModelProto original = model;
  // The features of the CPU that runs it: without an int8 dot product (VNNI) ONNX Runtime's u8s8 kernels
  // saturate full-range weights, which the pass avoids by reducing their range there.
  OptimizePassContext context;
  context.cpu = DetectCpuFeatures();
  auto result = QuantizeInt8Dynamic(model, context);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->rewritten.at("MatMul"), 1);
  EXPECT_EQ(result->rewritten.at("Gemm"), 1);
  EXPECT_EQ(result->produced.at("MatMulInteger"), 2);
  EXPECT_EQ(result->produced.at("DynamicQuantizeLinear"), 2);
  for (const auto& t : model.graph().initializer()) EXPECT_NE(t.name(), "w1") << "the float weight is dropped";
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Floats({4, 64}, 11)});
  const auto expected = RunModel(original, [&] {
    std::vector<NamedTensor> copy;
    copy.push_back({"x", inputs[0].tensor.Clone()});
    return copy;
  }());
  const auto actual = RunModel(model, std::move(inputs));
  ASSERT_EQ(actual.size(), 1u);
  ASSERT_EQ(expected.size(), 1u);
  const Agreement a = MeasureAgreement(expected[0].tensor, actual[0].tensor, OutputPurpose::kScores);
  EXPECT_GT(a.min_cosine, 0.999);
  EXPECT_EQ(a.Top1Share(), 1.0);
}

TEST(Int8DynamicPass, ReducesRangeWithoutVnniAndLeavesConvolutions) {
  onnx::ModelProto model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    conv (float[1, 8, 16, 16] x) => (float[1, 16, 16, 16] y) {
      y = Conv<pads = [1, 1, 1, 1]>(x, w, b)
    }
  )");
  AddWeight(model, "w", {16, 8, 3, 3}, 5);
  AddWeight(model, "b", {16}, 6);
  OptimizePassContext context;
  context.cpu.architecture = "x86_64";
  context.cpu.avx2 = true;
  onnx::ModelProto matmul_only = model;
  auto left = QuantizeInt8Dynamic(matmul_only, context);
  ASSERT_TRUE(left.ok());
  EXPECT_FALSE(left->changed());
  ASSERT_EQ(left->left.size(), 1u);
  EXPECT_NE(left->left[0].find("Conv left in float"), std::string::npos) << left->left[0];
  auto with_conv = QuantizeInt8DynamicWithConvolutions(model, context);
  ASSERT_TRUE(with_conv.ok()) << with_conv.error().message;
  EXPECT_EQ(with_conv->produced.at("ConvInteger"), 1);
  ASSERT_FALSE(with_conv->notes.empty());
  EXPECT_NE(with_conv->notes[0].find("7 bits"), std::string::npos) << with_conv->notes[0];
  std::vector<NamedTensor> inputs;
  inputs.push_back({"x", Floats({1, 8, 16, 16}, 12)});
  const auto out = RunModel(model, std::move(inputs));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor.shape(), (std::vector<std::int64_t>{1, 16, 16, 16}));
}

TEST(FusePass, SavesTheExtendedLevelAndCountsFusions) {
  onnx::ModelProto model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    skip (float[batch, 8, 32] x, float[batch, 8, 32] skip) => (float[batch, 8, 32] y) {
      s = Add(x, skip)
      y = LayerNormalization<axis = -1>(s, gamma, beta)
    }
  )");
  AddWeight(model, "gamma", {32}, 8);
  AddWeight(model, "beta", {32}, 9);
  TempDir dir;
  const auto path = dir.WriteModel("skip.onnx", model);
  auto runtime = Runtime::Create().value();
  OptimizePassContext context;
  context.runtime = runtime.get();
  context.scratch = dir.path();
  context.unchanged_source = path;
  context.unchanged_model = &model;
  onnx::ModelProto fused;
  auto result = FuseForProvider(fused, context);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->produced.at("SkipLayerNormalization"), 1);
  EXPECT_EQ(result->rewritten.at("LayerNormalization"), 1);
  for (const auto& o : fused.opset_import()) {
    EXPECT_TRUE(o.domain().empty() || o.domain() == "com.microsoft") << "unused import kept: " << o.domain();
  }
  EXPECT_EQ(fused.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
}

TEST(AccuracyGate, ParsesDropsAndRefusesFloors) {
  auto gate = AccuracyGate::Parse("cosine=0.001,top1=0.02");
  ASSERT_TRUE(gate.ok()) << gate.error().message;
  EXPECT_DOUBLE_EQ(gate->cosine, 0.999);
  EXPECT_DOUBLE_EQ(gate->top1, 0.98);
  EXPECT_DOUBLE_EQ(gate->error, AccuracyGate{}.error);
  auto floor = AccuracyGate::Parse("cosine=0.999");
  ASSERT_FALSE(floor.ok());
  EXPECT_NE(floor.error().message.find("cosine=0.001"), std::string::npos) << floor.error().message;
  EXPECT_FALSE(AccuracyGate::Parse("recall=0.1").ok());
  EXPECT_FALSE(AccuracyGate::Parse("top1=abc").ok());
  EXPECT_FALSE(AccuracyGate::Parse("top1=-0.1").ok());
}

TEST(CandidateProof, InterfaceChangesNameAFixedDynamicAxis) {
  TensorSpec before{"x", true, DataType::kFloat32, {{-1, "batch"}, {4, ""}}};
  TensorSpec after = before;
  after.dims[0] = {1, ""};
  const auto changes = InterfaceChanges({before}, {}, {after}, {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_NE(changes[0].find("input 'x' axis 0 was dynamic ('batch'), now fixed to 1"), std::string::npos) << changes[0];
  EXPECT_TRUE(InterfaceChanges({before}, {}, {before}, {}).empty());
}

TEST(ChooseFastest, OnlyAProvenCandidateFasterBeyondTheNoise) {
  std::vector<CandidateOutcome> candidates(3);
  candidates[0].name = "fuse";
  candidates[0].state = CandidateOutcome::State::kNotFaster;
  candidates[0].speed_up = {3.0, 0.5, 6.0, false, false};  // the fastest median, but inside the noise
  candidates[1].name = "int8-dynamic";
  candidates[1].state = CandidateOutcome::State::kPassed;
  candidates[1].speed_up = {2.0, 1.9, 2.1, true, false};
  candidates[2].name = "int8-dynamic-conv";
  candidates[2].state = CandidateOutcome::State::kPassed;
  candidates[2].speed_up = {1.5, 1.4, 1.6, true, false};
  EXPECT_EQ(ChooseFastest(candidates), "int8-dynamic");
  EXPECT_EQ(candidates[1].state, CandidateOutcome::State::kChosen);
  EXPECT_NE(candidates[2].reason.find("slower than int8-dynamic"), std::string::npos);
  std::vector<CandidateOutcome> slower(1);
  slower[0].state = CandidateOutcome::State::kPassed;
  slower[0].speed_up = {0.7, 0.6, 0.8, false, true};
  EXPECT_EQ(ChooseFastest(slower), "");
}

// The whole command on a small model: a gate no rounding passes refuses every quantised candidate before
// it is measured, names the metric, and writes nothing.
TEST(OptimizeModelFile, GateFailureIsNeverWritten) {
  TempDir dir;
  const auto model = dir.WriteModel("mlp.onnx", Perceptron());
  auto runtime = Runtime::Create().value();
  OptimizeOptions options;
  options.model = model;
  options.out = dir.path() / "out.onnx";
  options.candidates = {"int8-dynamic"};
  options.gate = AccuracyGate::Parse("cosine=0,top1=0").value();
  options.threads = 1;
  auto report = OptimizeModelFile(*runtime, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->candidates.size(), 1u);
  const CandidateOutcome& c = report->candidates[0];
  EXPECT_EQ(c.state, CandidateOutcome::State::kRefused) << c.reason;
  EXPECT_NE(c.reason.find("per-row cosine"), std::string::npos) << c.reason;
  EXPECT_FALSE(report->written);
  EXPECT_FALSE(std::filesystem::exists(options.out));
  EXPECT_TRUE(report->Failed());
  const nlohmann::json json = *report;
  EXPECT_EQ(json["candidates"][0]["state"], "refused");
  EXPECT_FALSE(json["candidates"][0]["proof"]["passed"].get<bool>());
}

// A proven candidate carries its provenance; with --dry-run nothing is written whatever is chosen.
TEST(OptimizeModelFile, DryRunProvesAndMeasuresWithoutWriting) {
  TempDir dir;
  const auto model = dir.WriteModel("mlp.onnx", Perceptron());
  auto runtime = Runtime::Create().value();
  OptimizeOptions options;
  options.model = model;
  options.dry_run = true;
  options.threads = 1;
  options.measure.rounds = 2;
  options.measure.runs_per_round = 3;
  auto report = OptimizeModelFile(*runtime, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->candidates.size(), 2u);  // fuse, int8-dynamic
  EXPECT_EQ(report->candidates[1].name, "int8-dynamic");
  const CandidateOutcome& int8 = report->candidates[1];
  ASSERT_TRUE(int8.proof.has_value());
  EXPECT_TRUE(int8.proof->Passed()) << int8.proof->FirstFailure();
  EXPECT_TRUE(int8.proof->dynamic_quantization);
  ASSERT_TRUE(int8.latency.has_value());
  EXPECT_EQ(int8.latency->round_p50_ms.size(), 2u);
  EXPECT_EQ(report->trials.size(), 2u);  // batch 1, then batch 3
  EXPECT_FALSE(report->written);
  EXPECT_NE(report->candidates[0].state, CandidateOutcome::State::kFailed) << report->candidates[0].reason;
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

onnx::ModelProto ConvBlock() {
  onnx::ModelProto model = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    block (float[batch, 4, 8, 8] x) => (float[batch, 10] logits) {
      y = Conv<pads = [1, 1, 1, 1]>(x, w, b)
      r = Relu(y)
      s = Add(r, x8)
      p = GlobalAveragePool(s)
      f = Flatten(p)
      logits = Gemm<transB = 1>(f, fc, fcb)
    }
  )");
  AddWeight(model, "w", {8, 4, 3, 3}, 21);
  AddWeight(model, "b", {8}, 22);
  AddWeight(model, "fc", {10, 8}, 23);
  AddWeight(model, "fcb", {10}, 24);
  // x8: the input widened to 8 channels by a second convolution, so that Add reads two activations.
  auto* widen = model.mutable_graph()->add_node();
  widen->set_op_type("Conv");
  widen->add_input("x");
  widen->add_input("w8");
  widen->add_output("x8");
  AddWeight(model, "w8", {8, 4, 1, 1}, 25);
  // Keep the graph in topological order: the widening convolution first.
  auto* nodes = model.mutable_graph()->mutable_node();
  std::rotate(nodes->rbegin(), nodes->rbegin() + 1, nodes->rend());
  return model;
}

void WriteSamples(const std::filesystem::path& dir, int count, const std::string& input = "x") {
  std::filesystem::create_directories(dir);
  for (int i = 0; i < count; ++i) {
    std::vector<NamedTensor> sample;
    sample.push_back({input, Floats({1, 4, 8, 8}, 100 + i)});
    ASSERT_TRUE(WriteNpz(dir / ("sample_" + std::to_string(i) + ".npz"), sample).ok());
  }
}

TEST(Calibration, HistogramRangesCutOutliers) {
  // 1000 values in the middle bins, one outlier at the top.
  std::vector<double> counts(100, 0);
  counts[40] = 500;
  counts[60] = 500;
  counts[99] = 1;
  const TensorRange minmax = RangeFromHistogram(counts, -1, 1, CalibrationMethod::kPercentile, 100);
  EXPECT_NEAR(minmax.max, 1, 1e-6);
  const TensorRange cut = RangeFromHistogram(counts, -1, 1, CalibrationMethod::kPercentile, 99.5);
  EXPECT_NEAR(cut.max, 0.22, 1e-5) << "the outlier's bin is cut";
  EXPECT_NEAR(cut.min, -0.2, 1e-5);
  std::vector<double> magnitudes(2048, 0);
  for (int i = 0; i < 512; ++i) magnitudes[i] = 1000 - i;
  magnitudes[2047] = 1;
  const TensorRange entropy = RangeFromHistogram(magnitudes, 0, 2048, CalibrationMethod::kEntropy, 0);
  EXPECT_LT(entropy.max, 1024) << "a lone far outlier does not set the threshold";
  EXPECT_GE(entropy.max, 400);
  EXPECT_EQ(entropy.min, -entropy.max);
}

TEST(Calibration, SamplesAreListedAndEveryInputMustBeInThem) {
  TempDir dir;
  WriteSamples(dir.path() / "samples", 3);
  auto samples = CalibrationSamples::List({dir.path() / "samples"});
  ASSERT_TRUE(samples.ok()) << samples.error().message;
  EXPECT_EQ(samples->size(), 3u);
  const onnx::ModelProto model = ConvBlock();
  const TensorSpec x{"x", true, DataType::kFloat32, {{-1, "batch"}, {4, ""}, {8, ""}, {8, ""}}};
  EXPECT_TRUE(samples->Read(0, {x}, model).ok());
  WriteSamples(dir.path() / "wrong", 1, "pixels");
  auto wrong = CalibrationSamples::List({dir.path() / "wrong"});
  ASSERT_TRUE(wrong.ok());
  auto read = wrong->Read(0, {x}, model);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("sample_0.npz': tensor 'pixels' is not an input of the model (inputs: x)"),
            std::string::npos)
      << read.error().message;
  std::filesystem::create_directories(dir.path() / "empty");
  auto empty = CalibrationSamples::List({dir.path() / "empty"});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("holds no sample"), std::string::npos);
  EXPECT_FALSE(CalibrationSamples::List({dir.path() / "missing"}).ok());
}

TEST(Int8StaticPass, QdqAroundTheComputeCalibratedAndClose) {
  TempDir dir;
  const onnx::ModelProto original = ConvBlock();
  const auto path = dir.WriteModel("block.onnx", original);
  WriteSamples(dir.path() / "samples", 4);
  auto samples = CalibrationSamples::List({dir.path() / "samples"}).value();
  auto runtime = Runtime::Create().value();
  OptimizePassContext context;
  context.runtime = runtime.get();
  context.scratch = dir.path();
  context.unchanged_source = path;
  context.unchanged_model = &original;
  context.calibration = &samples;
  context.cpu.architecture = "x86_64";
  context.cpu.avx512_vnni = true;
  onnx::ModelProto model;
  auto result = QuantizeInt8Static(model, context);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->rewritten.at("Conv"), 2);
  EXPECT_EQ(result->rewritten.at("Relu"), 1) << "folded into the Conv's uint8 output";
  EXPECT_EQ(result->rewritten.at("Add"), 1);
  EXPECT_EQ(result->rewritten.at("Gemm"), 1);
  EXPECT_GT(result->produced.at("QuantizeLinear"), 3);
  bool int32_bias = false;
  for (const auto& t : model.graph().initializer()) int32_bias |= t.data_type() == onnx::TensorProto::INT32;
  EXPECT_TRUE(int32_bias);
  std::vector<NamedTensor> a, b;
  a.push_back({"x", Floats({2, 4, 8, 8}, 7)});
  b.push_back({"x", Floats({2, 4, 8, 8}, 7)});
  const auto expected = RunModel(original, std::move(a));
  const auto actual = RunModel(model, std::move(b));
  ASSERT_EQ(actual.size(), 1u);
  const Agreement agreement = MeasureAgreement(expected[0].tensor, actual[0].tensor, OutputPurpose::kScores);
  EXPECT_GT(agreement.min_cosine, 0.99);
}

}  // namespace
}  // namespace ortkit
