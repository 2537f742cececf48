// The size search on models whose dimensions have no names or have limits: a guessed size that fails is
// grown into a requirement, unnamed axes that must be equal become one, extremes are narrowed, and
// nothing the model accepts is called a failure.
#include "ortkit/inputs/shape_search.h"

#include <gtest/gtest.h>

#include "ortkit/validate/sweep.h"
#include "test_models.h"

namespace ortkit {
namespace {

class ShapeSearchTest : public ::testing::Test {
 protected:
  void Load(const char* text) {
    runtime_ = std::move(Runtime::Create().value());
    model_ = testing::ParseModelText(text);
    auto session = Session::CreateFromBytes(*runtime_, model_.SerializeAsString(), SessionConfig{});
    ASSERT_TRUE(session.ok()) << session.error().message;
    session_ = std::move(session).value();
  }
  ShapeSearch Search(const InputPlan& base = {}) {
    return SearchShapes(*session_, DescribeInputs(*session_).value(), AnalyzeInputValues(model_), base, &model_);
  }
  std::unique_ptr<Runtime> runtime_;
  onnx::ModelProto model_;
  std::unique_ptr<Session> session_;
};

TEST_F(ShapeSearchTest, UnnamedAudioAxesAreNamedGrownAndMerged) {
  Load(testing::ModelText("unnamed_audio").c_str());
  const ShapeSearch search = Search();
  ASSERT_TRUE(search.runs);
  EXPECT_EQ(search.specs[0].dims[0].symbol, "x:0");
  EXPECT_EQ(search.specs[0].dims[1].symbol, "x:1");
  EXPECT_EQ(search.specs[1].dims[1].symbol, "x:0") << "the state's batch is the samples' batch";
  ASSERT_EQ(search.findings.size(), 1u);
  EXPECT_EQ(search.findings[0].dim, "x:1");
  EXPECT_EQ(search.findings[0].at_least, 33);
  EXPECT_EQ(search.findings[0].failed_size, 32);
  EXPECT_NE(search.findings[0].error.find("Pad"), std::string::npos) << search.findings[0].error;
  EXPECT_GE(search.Plan().dims.at("x:1"), 33);

  // The sweep runs on both axes from there, every cell passing.
  SweepOptions options;
  auto sweep = RunSweep(*session_, model_, options);
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->axes.size(), 2u);
  EXPECT_EQ(sweep->axes[0].dim, "x:0");
  EXPECT_EQ(sweep->axes[1].dim, "x:1");
  EXPECT_EQ(sweep->axes[1].values.front(), 33);
  EXPECT_TRUE(sweep->Passed());
}

// A model whose unnamed dims are sized by the user keeps the user's sizes: nothing is grown.
TEST_F(ShapeSearchTest, SizesTheUserGaveAreKept) {
  Load(testing::ModelText("unnamed_audio").c_str());
  InputPlan plan;
  plan.dims["x:1"] = 16;
  const ShapeSearch search = Search(plan);
  EXPECT_FALSE(search.runs) << "16 samples cannot take a pad of 32, and the user asked for 16";
  EXPECT_TRUE(search.grown.empty());
}

// An image with unnamed height and width: 224 x 224, each its own axis, the smallest size found.
constexpr const char* kImage = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[?, 3, ?, ?] x) => (float[?, 4, ?, ?] y) {
    shape = Constant <value = int64[4] {4, 3, 5, 5}> ()
    w = ConstantOfShape <value = float[1] {0.01}> (shape)
    y = Conv (x, w)
  }
)";

TEST_F(ShapeSearchTest, ImagesStartAt224AndTheirSmallestSizeIsFound) {
  Load(kImage);
  const ShapeSearch search = Search();
  ASSERT_TRUE(search.runs);
  EXPECT_EQ(search.Plan().dims.at("x:2"), 224);
  EXPECT_EQ(search.Plan().dims.at("x:3"), 224);
  SweepOptions options;
  auto sweep = RunSweep(*session_, model_, options);
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->axes.size(), 3u);
  EXPECT_EQ(sweep->axes[1].values.front(), 5) << "a 5x5 kernel needs 5 rows";
  EXPECT_EQ(sweep->axes[1].values[1], 224);
  EXPECT_TRUE(sweep->Passed());
  ASSERT_GE(sweep->size_findings.size(), 2u);
  EXPECT_EQ(sweep->size_findings[0].at_least, 5);
  EXPECT_EQ(sweep->size_findings[0].failed_size, 4);
}

// The exporter's own image size (ultralytics writes imgsz) wins over 224.
TEST_F(ShapeSearchTest, TheExportersImageSizeIsUsed) {
  auto model = testing::ParseModelText(kImage);
  auto* prop = model.add_metadata_props();
  prop->set_key("imgsz");
  prop->set_value("[320, 256]");
  const auto typical = TypicalSizes(
      NameUnnamedAxes({TensorSpec{"x", true, DataType::kFloat32, {DimSpec{}, DimSpec{3, ""}, DimSpec{}, DimSpec{}}}}),
      &model);
  EXPECT_EQ(typical.at("x:2"), 320);
  EXPECT_EQ(typical.at("x:3"), 256);
}

// Text and audio start at the sizes they are used at: 128 tokens, one second of 16 kHz audio.
TEST_F(ShapeSearchTest, TextAndAudioStartAtTypicalLengths) {
  const auto text = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (int64[batch, seq] ids) => (float[batch, seq, 2] y) {
      table = Constant <value = float[3, 2] {1, 2, 3, 4, 5, 6}> ()
      y = Gather (table, ids)
    }
  )");
  const auto ids =
      NameUnnamedAxes({TensorSpec{"ids", true, DataType::kInt64, {DimSpec{-1, "batch"}, DimSpec{-1, "seq"}}}});
  EXPECT_EQ(TypicalSizes(ids, &text, AnalyzeInputValues(text)).at("seq"), 128);

  // Unnamed samples beside a sample-rate input (Silero), and samples named as such (a mel front end).
  const auto silero = NameUnnamedAxes({TensorSpec{"input", true, DataType::kFloat32, {DimSpec{}, DimSpec{}}},
                                       TensorSpec{"sr", true, DataType::kInt64, {}}});
  EXPECT_EQ(TypicalSizes(silero, nullptr).at("input:1"), 16000);
  const auto mel =
      NameUnnamedAxes({TensorSpec{"input", true, DataType::kFloat32, {DimSpec{-1, "batch"}, DimSpec{-1, "samples"}}}});
  EXPECT_EQ(TypicalSizes(mel, nullptr).at("samples"), 16000);
  // A float vector that says nothing of audio keeps its guess.
  const auto plain = NameUnnamedAxes({TensorSpec{"x", true, DataType::kFloat32, {DimSpec{-1, "batch"}, DimSpec{}}}});
  EXPECT_FALSE(TypicalSizes(plain, nullptr).count("x:1"));
}

// A detector runs only where its feature maps line up (SpaceToDepth stands for that here: sizes in
// multiples of 4); the stride the exporter recorded (8) is what the sizes are searched and swept in.
constexpr const char* kStrided = R"(
  <ir_version: 8, opset_import: ["" : 17], metadata_props: ["stride" : "8", "imgsz" : "64"]>
  agraph (float[?, 3, ?, ?] x) => (float[?, 48, ?, ?] y) {
    y = SpaceToDepth <blocksize = 4> (x)
  }
)";

TEST_F(ShapeSearchTest, ImageSizesComeInMultiplesOfTheRecordedStride) {
  Load(kStrided);
  const ShapeSearch search = Search();
  ASSERT_TRUE(search.runs);
  EXPECT_EQ(search.StepOf("x:2"), 8);
  EXPECT_EQ(search.StepOf("x:0"), 1);
  auto stepped = FindSizeBoundary(*session_, search.specs, {}, search.Plan(), "x:2", 64, 1, 8);
  ASSERT_TRUE(stepped.has_value());
  EXPECT_EQ(stepped->at_least, 8);
  EXPECT_EQ(stepped->failed_size, 1);
  EXPECT_NE(stepped->Describe().find("multiples of 8"), std::string::npos) << stepped->Describe();
  auto free = FindSizeBoundary(*session_, search.specs, {}, search.Plan(), "x:2", 64, 1);
  ASSERT_TRUE(free.has_value());
  EXPECT_EQ(free->at_least, 4) << "without the stride, the smallest size that runs";
  EXPECT_EQ(free->failed_size, 3);

  SweepOptions options;
  auto sweep = RunSweep(*session_, model_, options);
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->axes.size(), 3u);
  EXPECT_EQ(sweep->axes[1].values, (std::vector<std::int64_t>{8, 64, 128}));
  EXPECT_TRUE(sweep->Passed());
  EXPECT_TRUE(sweep->size_findings.empty());
}

}  // namespace
}  // namespace ortkit
