#include "ortkit/validate/sweep.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "test_models.h"

namespace ortkit {
namespace {

class SweepTest : public ::testing::Test {
 protected:
  void Load(const char* text) {
    runtime_ = std::move(Runtime::Create().value());
    model_ = testing::ParseModelText(text);
    auto session = Session::CreateFromBytes(*runtime_, model_.SerializeAsString(), SessionConfig{});
    ASSERT_TRUE(session.ok()) << session.error().message;
    session_ = std::move(session).value();
  }
  SweepReport Sweep(std::vector<std::string> axes) {
    SweepOptions options;
    for (const auto& a : axes) options.axes.push_back(ParseSweepAxis(a).value());
    auto report = RunSweep(*session_, model_, options);
    EXPECT_TRUE(report.ok()) << report.error().message;
    return report.ok() ? std::move(report).value() : SweepReport{};
  }
  std::unique_ptr<Runtime> runtime_;
  onnx::ModelProto model_;
  std::unique_ptr<Session> session_;
};

constexpr const char* kHealthy = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[batch, seq, 4] x) => (float[batch, seq, 4] y) {
    w = Constant <value = float[4, 4] {1,0,0,0, 0,2,0,0, 0,0,3,0, 0,0,0,4}> ()
    m = MatMul (x, w)
    y = Softmax <axis = -1> (m)
  }
)";

// x.view(2, -1): the traced batch of 2 is baked into the Reshape.
constexpr const char* kBakedReshape = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[batch, 3] x) => (float[batch, 3] y) {
    shape = Constant <value = int64[2] {2, -1}> ()
    flat = Reshape (x, shape)
    back = Constant <value = int64[2] {-1, 3}> ()
    y = Reshape (flat, back)
  }
)";

// Rows leak: every row gets the batch mean added.
constexpr const char* kLeakyRows = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[batch, 3] x) => (float[batch, 3] y) {
    mean = ReduceMean <axes = [0], keepdims = 1> (x)
    y = Add (x, mean)
  }
)";

TEST_F(SweepTest, HealthyModelPassesEveryCell) {
  Load(kHealthy);
  auto report = Sweep({"batch=1,3,8", "seq=1,5"});
  EXPECT_TRUE(report.Passed());
  ASSERT_EQ(report.cells.size(), 6u);
  EXPECT_EQ(report.batch_dim, "batch");
  EXPECT_EQ(report.cells[2].dims.at("batch"), 3);
  EXPECT_TRUE(report.cells[2].batch_checked);
  EXPECT_FALSE(report.cells[0].batch_checked);  // batch 1: nothing to compare
}

TEST_F(SweepTest, BakedBatchFailsAtOtherBatchesAndNamesTheReshape) {
  Load(kBakedReshape);
  auto report = Sweep({"batch=1,2,7"});
  ASSERT_EQ(report.cells.size(), 3u);
  EXPECT_EQ(report.cells[1].state, SweepCell::State::kFailed) << "batch 2: row 0 alone cannot be reshaped to [2, -1]";
  EXPECT_EQ(report.cells[2].state, SweepCell::State::kFailed);
  ASSERT_FALSE(report.cells[2].diagnoses.empty());
  EXPECT_NE(report.cells[2].diagnoses[0].message.find("batch=7"), std::string::npos)
      << report.cells[2].diagnoses[0].message;
}

TEST_F(SweepTest, LeakingRowsAreCaught) {
  Load(kLeakyRows);
  auto report = Sweep({"batch=1,4"});
  EXPECT_FALSE(report.Passed());
  ASSERT_FALSE(report.cells[1].diagnoses.empty());
  EXPECT_EQ(report.cells[1].diagnoses[0].code, "sweep.batch-inconsistent");
  EXPECT_EQ(report.cells[1].diagnoses[0].location.output, "y");
  EXPECT_TRUE(report.cells[0].diagnoses.empty());
}

TEST_F(SweepTest, AutoAxesCoverEverySymbolWithExtremes) {
  Load(kHealthy);
  SweepOptions options;
  auto report = RunSweep(*session_, model_, options);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->axes.size(), 2u);
  EXPECT_EQ(report->axes[0].dim, "batch");
  EXPECT_EQ(report->axes[0].values.front(), 1);
  EXPECT_GE(report->axes[0].values.back(), 8);
  EXPECT_EQ(report->axes[1].values.front(), 1);
  EXPECT_TRUE(report->Passed());
}

TEST_F(SweepTest, AutoAxesStayWithinTheSizesTheModelIsMadeFor) {
  Load(testing::ModelText("position_table").c_str());
  SweepOptions options;
  // Without export.json the sweep finds the limit by running: 256 positions of a 100-row table fail,
  // 100 run. A size requirement, not a failure.
  auto unbounded = RunSweep(*session_, model_, options);
  ASSERT_TRUE(unbounded.ok());
  EXPECT_EQ(unbounded->axes[1].values, (std::vector<std::int64_t>{1, 16, 100}));
  EXPECT_TRUE(unbounded->Passed());
  ASSERT_EQ(unbounded->size_findings.size(), 1u);
  EXPECT_EQ(unbounded->size_findings[0].dim, "seq");
  EXPECT_EQ(unbounded->size_findings[0].at_most, 100);
  EXPECT_EQ(unbounded->size_findings[0].failed_size, 101);
  EXPECT_EQ(unbounded->size_findings[0].input, "x");

  // Sizes the user asks for are swept as asked: a failure there is a failure.
  options.axes = {{"seq", {16, 256}}};
  auto asked = RunSweep(*session_, model_, options);
  ASSERT_TRUE(asked.ok());
  EXPECT_FALSE(asked->Passed());
  options.axes.clear();

  options.max_sizes = {{"seq", 100}};
  auto bounded = RunSweep(*session_, model_, options);
  ASSERT_TRUE(bounded.ok());
  EXPECT_EQ(bounded->axes[1].values, (std::vector<std::int64_t>{1, 16, 100}));
  EXPECT_GE(bounded->axes[0].values.back(), 8);  // batch has no limit
  EXPECT_TRUE(bounded->Passed());
}

// The file declares the output [1, 4] (traced at batch 1), the run returns [batch, 4]: seen once batch varies.
TEST_F(SweepTest, AFixedOutputSizeTheRunDoesNotKeepIsNamed) {
  Load(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[1, 4] y) {
      y = Relu (x)
    }
  )");
  const auto report = Sweep({"N=1,3"});
  ASSERT_EQ(report.cells.size(), 2u);
  EXPECT_EQ(report.cells[0].state, SweepCell::State::kPassed);
  ASSERT_EQ(report.cells[1].diagnoses.size(), 1u);
  const Diagnosis& d = report.cells[1].diagnoses[0];
  EXPECT_EQ(d.code, "runtime.output-shape-differs");
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_NE(d.message.find("declared float32[1, 4] but the run returned float32[3, 4]"), std::string::npos)
      << d.message;
}

// quantize_dynamic's pattern: one scale over the whole batch, so rows differ batched, by a step of the
// quantisation: judged by purpose (per-row cosine), that is rounding, not a finding.
TEST_F(SweepTest, DynamicQuantisationRowsThatDifferByRoundingPass) {
  Load(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 16] x) => (float[batch, 16] y) {
      q, scale, zero = DynamicQuantizeLinear (x)
      y = DequantizeLinear (q, scale, zero)
    }
  )");
  const auto report = Sweep({"batch=1,8"});
  ASSERT_EQ(report.cells.size(), 2u);
  EXPECT_TRUE(report.cells[1].batch_checked);
  EXPECT_GT(report.cells[1].batch_max_abs_error, 0);  // the rows do differ
  EXPECT_TRUE(report.cells[1].diagnoses.empty()) << report.cells[1].diagnoses[0].message;
}

// A dynamically quantised model whose rows do depend on each other a little (30% of the batch's mean is
// added to each): beyond rounding, but each row keeps its direction. Said, with the quantisation's part in
// it, as a warning.
TEST_F(SweepTest, DynamicQuantisationExplainsRowsThatDifferWhenBatched) {
  Load(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 16] x) => (float[batch, 16] y) <float share = {0.3}> {
      mean = ReduceMean <axes = [0], keepdims = 1> (x)
      part = Mul (mean, share)
      mixed = Add (x, part)
      q, scale, zero = DynamicQuantizeLinear (mixed)
      y = DequantizeLinear (q, scale, zero)
    }
  )");
  const auto report = Sweep({"batch=1,8"});
  ASSERT_EQ(report.cells.size(), 2u);
  ASSERT_FALSE(report.cells[1].diagnoses.empty());
  const Diagnosis& d = report.cells[1].diagnoses[0];
  EXPECT_EQ(d.code, "sweep.batch-inconsistent");
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_NE(d.message.find("per-row cosine"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("dynamically quantised"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("one request at a time"), std::string::npos) << d.message;
}

// A decoder step's mask spans the cache and the new tokens: total = past + seq.
constexpr const char* kCacheAndMask = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[batch, past] cache, float[batch, seq] tokens, float[batch, total] mask) => (float[batch, total] y) {
    both = Concat <axis = 1> (cache, tokens)
    y = Mul (both, mask)
  }
)";

TEST_F(SweepTest, DimensionsThatAreSumsAreComputedNotSwept) {
  Load(kCacheAndMask);
  SweepOptions options;
  auto independent = RunSweep(*session_, model_, options);
  ASSERT_TRUE(independent.ok());
  EXPECT_FALSE(independent->Passed());  // total swept on its own: shapes no decoder step has

  options.base.dim_sums = {{"total", {"past", "seq"}}};
  auto summed = RunSweep(*session_, model_, options);
  ASSERT_TRUE(summed.ok());
  std::vector<std::string> swept;
  for (const auto& axis : summed->axes) swept.push_back(axis.dim);
  EXPECT_EQ(swept, (std::vector<std::string>{"batch", "past", "seq"}));
  EXPECT_TRUE(summed->Passed());
  // A past of 0 (the first step) is a size like any other.
  TensorSpec mask{"mask", true, DataType::kFloat32, {{-1, "batch"}, {-1, "total"}}};
  InputPlan plan;
  plan.dims = {{"batch", 1}, {"past", 0}, {"seq", 6}};
  plan.dim_sums = options.base.dim_sums;
  EXPECT_EQ(ResolveShape(mask, plan).value(), (std::vector<std::int64_t>{1, 6}));
}

TEST_F(SweepTest, UnknownDimensionIsAnError) {
  Load(kHealthy);
  SweepOptions options;
  options.axes.push_back(ParseSweepAxis("sequence=1,2").value());
  auto report = RunSweep(*session_, model_, options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message.find("sequence"), std::string::npos) << report.error().message;
  EXPECT_FALSE(ParseSweepAxis("batch=1,x").ok());
  EXPECT_FALSE(ParseSweepAxis("batch").ok());
}

// Four dynamic axes, each alone given a large size of 64 or 256: together 64 x 256 x 256 x 256 floats, 4 GiB.
// The largest cell (every axis at its largest) is kept within the budget, and the report says what was shrunk.
TEST_F(SweepTest, AutoAxesKeepTheLargestCellWithinTheBudgetForAnyNumberOfAxes) {
  Load(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[a, b, c, d] x) => (float[a, b, c, d] y) {
      y = Relu (x)
    }
  )");
  SweepOptions options;
  auto report = RunSweep(*session_, model_, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->axes.size(), 4u);
  std::int64_t largest = 4;  // float32 bytes
  for (const auto& axis : report->axes) {
    EXPECT_EQ(axis.values.front(), 1) << axis.dim;
    EXPECT_GT(axis.values.back(), 4) << axis.dim;  // a large size is still swept on every axis
    largest *= axis.values.back();
  }
  EXPECT_LE(static_cast<std::uint64_t>(largest) * 64, options.memory_budget_bytes);
  const bool said = std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& note) {
    return note.find("stays within the memory budget of 1.0 GiB") != std::string::npos &&
           note.find("'b' up to") != std::string::npos && note.find("(alone 256)") != std::string::npos;
  });
  EXPECT_TRUE(said) << ::testing::PrintToString(report->notes);
  EXPECT_TRUE(report->Passed());

  // One axis alone keeps the large size it had: nothing to shrink, nothing said.
  const std::vector<TensorSpec> one = {
      TensorSpec{"x", true, DataType::kFloat32, {DimSpec{-1, "batch"}, DimSpec{64, ""}}}};
  std::vector<std::string> notes;
  const auto axes = ChooseAutoAxes(one, InputPlan{}, options.memory_budget_bytes, {}, {}, {}, &notes);
  ASSERT_EQ(axes.size(), 1u);
  EXPECT_EQ(axes[0].values, (std::vector<std::int64_t>{1, 4, 64}));
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

// A sweep's passing cells with `sizes` and the output 'y' of dimension 0 at `seen`, for ExplainOutputDim.
SweepReport Runs(const std::vector<std::map<std::string, std::int64_t>>& sizes, const std::vector<std::int64_t>& seen) {
  SweepReport report;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    SweepCell cell;
    cell.sizes = sizes[i];
    cell.output_shapes["y"] = {seen[i], 3};
    report.cells.push_back(cell);
  }
  return report;
}

TEST(ExplainOutputDim, TheRunsSayHowADimensionBehaves) {
  using Kind = OutputDimBehaviour::Kind;
  const std::vector<std::map<std::string, std::int64_t>> grid = {{{"batch", 1}, {"samples", 512}},
                                                                 {{"batch", 1}, {"samples", 16000}},
                                                                 {{"batch", 4}, {"samples", 512}},
                                                                 {{"batch", 4}, {"samples", 16000}}};
  auto follows = ExplainOutputDim(Runs(grid, {1, 1, 4, 4}), "y", 0);
  EXPECT_EQ(follows.kind, Kind::kFollows);
  EXPECT_EQ(follows.axis, "batch");
  EXPECT_EQ(follows.Describe(), "follows 'batch' (1, 1, 4, 4 in 4 runs)");
  auto scaled = ExplainOutputDim(Runs(grid, {3, 3, 9, 9}), "y", 0);
  EXPECT_EQ(scaled.kind, Kind::kFollows);
  EXPECT_EQ(scaled.Describe(), "follows 2 x 'batch' + 1 (3, 3, 9, 9 in 4 runs)");
  // A front end's frames: (samples - 512) / 160 + 1, no affine function of the samples.
  auto frames = ExplainOutputDim(Runs(grid, {1, 97, 1, 97}), "y", 0);
  EXPECT_EQ(frames.kind, Kind::kGrows) << frames.Describe();
  EXPECT_EQ(frames.axis, "samples");
  auto grows =
      ExplainOutputDim(Runs({{{"samples", 512}}, {{"samples", 16000}}, {{"samples", 256000}}}, {1, 97, 1597}), "y", 0);
  EXPECT_EQ(grows.kind, Kind::kGrows) << grows.Describe();
  EXPECT_EQ(grows.axis, "samples");
  EXPECT_TRUE(grows.Explained());
  auto fixed = ExplainOutputDim(Runs(grid, {2, 2, 2, 2}), "y", 0);
  EXPECT_EQ(fixed.kind, Kind::kFixed);
  EXPECT_EQ(fixed.Describe(), "is 2 in all 4 runs");
  // Runs at the same sizes that disagree, or a size that rises and falls: nothing explains it.
  auto disagree = ExplainOutputDim(Runs({{{"n", 1}}, {{"n", 4}}, {{"n", 4}}}, {1, 3, 2}), "y", 0);
  EXPECT_EQ(disagree.kind, Kind::kVaries) << disagree.Describe();
  EXPECT_FALSE(disagree.Explained());
  auto rise_and_fall = ExplainOutputDim(Runs({{{"n", 1}}, {{"n", 4}}, {{"n", 64}}}, {1, 5, 2}), "y", 0);
  EXPECT_EQ(rise_and_fall.kind, Kind::kVaries) << rise_and_fall.Describe();
  // One run, or runs at one size: nothing to tell apart.
  EXPECT_EQ(ExplainOutputDim(Runs({{{"n", 4}}}, {4}), "y", 0).kind, Kind::kUnjudged);
  EXPECT_EQ(ExplainOutputDim(Runs({{{"n", 4}}, {{"n", 4}}}, {4, 4}), "y", 0).kind, Kind::kUnjudged);
  // A failed cell says nothing about sizes.
  SweepReport failed = Runs(grid, {1, 1, 4, 5});
  failed.cells[3].state = SweepCell::State::kFailed;
  EXPECT_EQ(ExplainOutputDim(failed, "y", 0).kind, Kind::kFollows);
}

}  // namespace
}  // namespace ortkit
