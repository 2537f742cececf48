#include "ortkit/tensor/synthesis.h"

#include <cmath>

#include <gtest/gtest.h>

#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/runtime/run.h"
#include "test_models.h"

namespace ortkit {
namespace {

// An embedding lookup with a 5-row table, a mask, and an If whose condition compares a scalar.
constexpr const char* kEmbedding = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (int64[batch, seq] input_ids, int64[batch, seq] attention_mask, int64 mode) => (float[batch, seq, 3] y, float[batch, seq] m) {
    table = Constant <value = float[5, 3] {0,1,2, 3,4,5, 6,7,8, 9,10,11, 12,13,14}> ()
    emb = Gather (table, input_ids)
    two = Constant <value = int64 {2}> ()
    is_two = Equal (mode, two)
    y = If (is_two) <
      then_branch = g1 () => (float[batch, seq, 3] a) { a = Identity (emb) },
      else_branch = g2 () => (float[batch, seq, 3] b) { b = Neg (emb) }
    >
    m = Cast <to = 1> (attention_mask)
  }
)";

class SynthesisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = std::move(Runtime::Create().value());
    model_ = testing::ParseModelText(kEmbedding);
    path_ = dir_.WriteModel("embedding.onnx", model_);
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

TEST_F(SynthesisTest, HintsFollowTheGraph) {
  auto hints = AnalyzeInputValues(model_);
  ASSERT_TRUE(hints.count("input_ids"));
  EXPECT_EQ(hints["input_ids"].kind, ValueHint::Kind::kIndices);
  EXPECT_EQ(hints["input_ids"].index_limit, 5);
  EXPECT_EQ(hints["attention_mask"].kind, ValueHint::Kind::kOnes);
  EXPECT_EQ(hints["mode"].kind, ValueHint::Kind::kChoice);
  EXPECT_EQ(hints["mode"].choice, 2);
}

// The TorchScript export of a Transformers causal LM: logits of the last `logits_to_keep` positions.
TEST(SynthesisHints, LogitsToKeepIsZeroForEveryPosition) {
  auto hints = AnalyzeInputValues(testing::ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 17]>
    lm (float[batch, seq, 4] hidden, int64 logits_to_keep) => (float[batch, kept, 4] y) {
      minus = Neg (logits_to_keep)
      start = Unsqueeze (minus, zero)
      zero = Constant <value = int64[1] {0}> ()
      end = Constant <value = int64[1] {9223372036854775807}> ()
      axis = Constant <value = int64[1] {1}> ()
      y = Slice (hidden, start, end, axis)
    }
  )"));
  ASSERT_TRUE(hints.count("logits_to_keep"));
  EXPECT_EQ(hints["logits_to_keep"].kind, ValueHint::Kind::kChoice);
  EXPECT_EQ(hints["logits_to_keep"].choice, 0);
}

TEST_F(SynthesisTest, SynthesisedInputsRunAndStayInRange) {
  InputPlan plan;
  plan.dims = {{"batch", 3}, {"seq", 50}};
  ASSERT_TRUE(ValidatePlan(plan, specs_).ok());
  auto inputs = SynthesizeInputs(specs_, AnalyzeInputValues(model_), plan);
  ASSERT_TRUE(inputs.ok()) << inputs.error().message;
  const Tensor& ids = (*inputs)[0].tensor;
  EXPECT_EQ(ids.shape(), (std::vector<std::int64_t>{3, 50}));
  for (auto v : ids.values<std::int64_t>()) ASSERT_TRUE(v >= 0 && v < 5) << v;
  auto outputs = RunSession(*session_, RunRequest{*inputs, {}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().message;
  // mode == 2 takes the then-branch: y is the embedding itself (non-negative table values).
  for (float v : (*outputs)[0].tensor.values<float>()) ASSERT_GE(v, 0);
  for (float v : (*outputs)[1].tensor.values<float>()) ASSERT_EQ(v, 1);
}

TEST_F(SynthesisTest, SameSeedSameInputs) {
  InputPlan plan;
  auto a = SynthesizeInputs(specs_, AnalyzeInputValues(model_), plan).value();
  auto b = SynthesizeInputs(specs_, AnalyzeInputValues(model_), plan).value();
  EXPECT_EQ(
      std::vector<std::int64_t>(a[0].tensor.values<std::int64_t>().begin(), a[0].tensor.values<std::int64_t>().end()),
      std::vector<std::int64_t>(b[0].tensor.values<std::int64_t>().begin(), b[0].tensor.values<std::int64_t>().end()));
}

TEST_F(SynthesisTest, PlanErrorsNameTheFlag) {
  InputPlan plan;
  plan.dims = {{"sequence", 4}};
  auto status = ValidatePlan(plan, specs_);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("--dim sequence=4"), std::string::npos);
  EXPECT_NE(status.error().message.find("batch, seq"), std::string::npos) << status.error().message;
  plan.dims.clear();
  plan.shapes = {{"input_ids", {2}}};
  EXPECT_FALSE(ValidatePlan(plan, specs_).ok());
}

TEST_F(SynthesisTest, RunNamesTheInputOnMismatch) {
  auto inputs = SynthesizeInputs(specs_, AnalyzeInputValues(model_), InputPlan{}).value();
  inputs[0].tensor = Tensor::Zeros(DataType::kFloat32, {1, 16}).value();
  auto outputs = RunSession(*session_, RunRequest{inputs, {}});
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.error().message.find("input 'input_ids' is float32[1, 16] but the model expects int64[batch, seq]"),
            std::string::npos)
      << outputs.error().message;
  inputs.pop_back();
  outputs = RunSession(*session_, RunRequest{inputs, {}});
  ASSERT_FALSE(outputs.ok());
}

// A 69-byte model with a dimension of 2^31 made `run` allocate 8 GiB without a word.
TEST_F(SynthesisTest, RefusesInputsOverTheMemoryBudgetBeforeAllocating) {
  TensorSpec huge{"x", true, DataType::kFloat32, {DimSpec{std::int64_t{1} << 31, ""}}};
  auto refused = SynthesizeInputs({huge}, {}, InputPlan{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("would take 8.0 GiB (the largest, 'x' float32[2147483648], 8.0 GiB)"),
            std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("limit of 2.0 GiB"), std::string::npos) << refused.error().message;
  // Overflowing products are refused too, not wrapped.
  TensorSpec overflow{"z", true, DataType::kFloat32, {DimSpec{INT64_MAX / 2, ""}, DimSpec{INT64_MAX / 2, ""}}};
  EXPECT_FALSE(SynthesizeInputs({overflow}, {}, InputPlan{}).ok());
  InputPlan small;
  small.max_bytes = 1 << 20;
  TensorSpec fits{"x", true, DataType::kFloat32, {DimSpec{1 << 18, ""}}};
  EXPECT_TRUE(SynthesizeInputs({fits}, {}, small).ok());
  fits.dims[0].value += 1;
  EXPECT_FALSE(SynthesizeInputs({fits}, {}, small).ok());
}

// The additive form, as Transformers writes it: (1 - mask) * the float's lowest value, added to the scores.
TEST(MaskSynthesis, AMaskSubtractedFromOneIsAllOnes) {
  auto runtime = Runtime::Create().value();
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 20]>
    attend (float[batch, seq] scores, int64[batch, seq] m) => (float[batch, seq] probs) {
      mf = Cast <to = 1> (m)
      one = Constant <value = float {1}> ()
      inverted = Sub (one, mf)
      lowest = Constant <value = float {-3.4e38}> ()
      bias = Mul (inverted, lowest)
      biased = Add (scores, bias)
      probs = Softmax <axis = -1> (biased)
    }
  )");
  auto hints = AnalyzeInputValues(model);
  ASSERT_TRUE(hints.count("m"));
  EXPECT_EQ(hints["m"].kind, ValueHint::Kind::kOnes) << hints["m"].reason;
  testing::TempDir dir;
  auto session = Session::Create(*runtime, dir.WriteModel("attend.onnx", model), SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  auto inputs = SynthesizeInputs(DescribeInputs(**session).value(), hints, InputPlan{});
  ASSERT_TRUE(inputs.ok()) << inputs.error().message;
  auto outputs = RunSession(**session, RunRequest{*inputs, {}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().message;
  for (float v : (*outputs)[0].tensor.values<float>()) ASSERT_FALSE(std::isnan(v));
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

// Attention with the `mask == 0` pattern of today's transformer exports: masked positions get -inf
// before the Softmax. All zeros masks every position and a healthy model emits NaN; the mask must
// be all ones, whatever its name (a 2-D tensor compared with 0 is a mask).
constexpr const char* kMaskedAttention = R"(
  <ir_version: 10, opset_import: ["" : 20]>
  attend (float[batch, seq] scores, int64[batch, seq] %s) => (float[batch, seq] probs) {
    zero = Constant <value = int64 {0}> ()
    masked = Equal (%s, zero)
    minus_inf = Constant <value = float {-inf}> ()
    biased = Where (masked, minus_inf, scores)
    probs = Softmax <axis = -1> (biased)
  }
)";

TEST(MaskSynthesis, AMaskComparedWithZeroIsAllOnesAndTheModelGivesNoNaN) {
  auto runtime = Runtime::Create().value();
  for (const char* name : {"attention_mask", "keep"}) {
    SCOPED_TRACE(name);
    std::string replaced = kMaskedAttention;
    for (std::size_t at; (at = replaced.find("%s")) != std::string::npos;) replaced.replace(at, 2, name);
    const onnx::ModelProto model = testing::ParseModelText(replaced);
    auto hints = AnalyzeInputValues(model);
    ASSERT_TRUE(hints.count(name));
    EXPECT_EQ(hints[name].kind, ValueHint::Kind::kOnes) << hints[name].reason;

    testing::TempDir dir;
    auto session = Session::Create(*runtime, dir.WriteModel("attend.onnx", model), SessionConfig{});
    ASSERT_TRUE(session.ok()) << session.error().message;
    const auto specs = DescribeInputs(**session).value();
    auto inputs = SynthesizeInputs(specs, hints, InputPlan{});
    ASSERT_TRUE(inputs.ok()) << inputs.error().message;
    auto outputs = RunSession(**session, RunRequest{*inputs, {}});
    ASSERT_TRUE(outputs.ok()) << outputs.error().message;
    for (float v : (*outputs)[0].tensor.values<float>()) ASSERT_FALSE(std::isnan(v));
  }
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

// ONNX Runtime's STFT divides by frame_step: a synthesised 0 killed the process with SIGFPE
// (`ortkit convert` on ONNX's test_stft, second seed). Integer scalars are never 0.
TEST(ScalarSynthesis, IntegerScalarsAreNeverZeroAndSTFTRunsAtEverySeed) {
  auto runtime = Runtime::Create().value();
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    stft (float[1, 128, 1] signal, int64 frame_step, int64 frame_length) => (float[1, a, b, 2] output) {
      output = STFT (signal, frame_step, , frame_length)
    }
  )");
  testing::TempDir dir;
  auto session = Session::Create(*runtime, dir.WriteModel("stft.onnx", model), SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  const auto specs = DescribeInputs(**session).value();
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    InputPlan plan;
    plan.seed = seed;
    auto inputs = SynthesizeInputs(specs, AnalyzeInputValues(model), plan);
    ASSERT_TRUE(inputs.ok()) << inputs.error().message;
    ASSERT_GE((*inputs)[1].tensor.values<std::int64_t>()[0], 1) << "seed " << seed;
    auto outputs = RunSession(**session, RunRequest{*inputs, {}});
    EXPECT_TRUE(outputs.ok()) << outputs.error().message;
  }
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

// Booleans are true (a mask keeps every position, a Loop condition lets the loop run) and strings are whole
// numbers written as text, which a Cast from string parses; every seed gives the same kind of values.
TEST(BoolAndStringSynthesis, BooleansAreTrueAndStringsAreNumbersAsText) {
  const TensorSpec flags{"flags", true, DataType::kBool, {DimSpec{3, ""}, DimSpec{5, ""}}};
  const TensorSpec words{"words", true, DataType::kString, {DimSpec{40, ""}}};
  const TensorSpec word{"word", true, DataType::kString, {}};
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    InputPlan plan;
    plan.seed = seed;
    auto inputs = SynthesizeInputs({flags, words, word}, {}, plan);
    ASSERT_TRUE(inputs.ok()) << inputs.error().message;
    for (std::int64_t i = 0; i < (*inputs)[0].tensor.element_count(); ++i)
      EXPECT_EQ((*inputs)[0].tensor.AsDouble(i), 1) << "seed " << seed;
    for (const auto& s : (*inputs)[1].tensor.strings()) {
      ASSERT_EQ(s.size(), 1u) << s;
      EXPECT_TRUE(s[0] >= '0' && s[0] <= '3') << s;
    }
    const std::string& scalar = (*inputs)[2].tensor.strings()[0];
    EXPECT_TRUE(scalar == "1" || scalar == "2" || scalar == "3") << scalar;  // a count or a step is never 0
  }
}

// --shape and --dim size synthesised inputs: for an input read from a file they are refused, not ignored.
TEST(FileInputSizes, ShapeAndDimFlagsForAFileInputAreRefused) {
  const std::vector<TensorSpec> specs = {
      TensorSpec{"x", true, DataType::kFloat32, {DimSpec{-1, "batch"}, DimSpec{-1, "seq_len"}, DimSpec{64, ""}}},
      TensorSpec{"mask", true, DataType::kInt64, {DimSpec{-1, "batch"}, DimSpec{-1, "seq_len"}}}};
  PreparedInputs prepared;
  prepared.tensors.push_back({"x", Tensor::Zeros(DataType::kFloat32, {2, 5, 64}).value()});
  prepared.sources.push_back({"x", "file in/x.npy", true});
  prepared.tensors.push_back({"mask", Tensor::Zeros(DataType::kInt64, {2, 5}).value()});
  prepared.sources.push_back({"mask", "synthesised: a mask: all ones", false});

  InputPlan plan;
  EXPECT_TRUE(CheckSizesOfFileInputs(plan, specs, prepared).ok());
  plan.dims["batch"] = 2;  // what the file holds: nothing to refuse
  EXPECT_TRUE(CheckSizesOfFileInputs(plan, specs, prepared).ok());
  plan.dims["batch"] = 3;
  auto refused = CheckSizesOfFileInputs(plan, specs, prepared);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(refused.error().message,
            "--dim batch=3: input 'x' is read from a file in/x.npy (float32[2, 5, 64]), where dimension 0 ('batch') "
            "is 2; --shape and --dim size synthesised inputs, not inputs read from files");
  plan.dims.clear();
  plan.shapes["x"] = {3, 5, 64};
  refused = CheckSizesOfFileInputs(plan, specs, prepared);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--shape x=[3, 5, 64]: input 'x' is read from a file in/x.npy"),
            std::string::npos)
      << refused.error().message;
  plan.shapes = {{"mask", {2, 5}}};  // a synthesised input takes its --shape
  EXPECT_TRUE(CheckSizesOfFileInputs(plan, specs, prepared).ok());
}

}  // namespace
}  // namespace ortkit
