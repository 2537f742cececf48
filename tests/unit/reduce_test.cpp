#include "ortkit/reduce/reduce.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ortkit/core/process.h"
#include "ortkit/reduce/command_check.h"
#include "ortkit/reduce/failure_condition.h"
#include "ortkit/reduce/graph_slice.h"
#include "ortkit/reduce/observation.h"
#include "ortkit/reduce/reproducer.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

// ---- Models: a long chain of cheap nodes with the interesting part in the middle.

/// ONNX text of `before` Sin/Tanh nodes from x, the `middle` lines (reading "h", writing "m"), then
/// `after` Neg/Abs nodes (which carry a difference or a NaN unchanged) to y.
std::string ChainText(int before, const std::string& middle, int after, int width = 8) {
  std::string text = fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
    chain (float[2, {}] x) => (float y) {{
)",
                                 width);
  std::string previous = "x";
  for (int i = 0; i < before; ++i) {
    text += fmt::format("      b{} = {} ({})\n", i, i % 2 ? "Tanh" : "Sin", previous);
    previous = fmt::format("b{}", i);
  }
  text += fmt::format("      h = Identity ({})\n{}", previous, middle);
  previous = "m";
  for (int i = 0; i < after; ++i) {
    const std::string out = i + 1 == after ? "y" : fmt::format("a{}", i);
    text += fmt::format("      {} = {} ({})\n", out, i % 2 ? "Abs" : "Neg", previous);
    previous = out;
  }
  return text + "    }\n";
}

/// Nodes named after their first output, as exporters name them.
void NameNodes(onnx::ModelProto& model) {
  for (auto& node : *model.mutable_graph()->mutable_node()) node.set_name("node_" + node.output(0));
}

void AddFloats(onnx::ModelProto& model, const std::string& name, std::vector<std::int64_t> dims,
               std::vector<float> values) {
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

void AddInts(onnx::ModelProto& model, const std::string& name, std::vector<std::int64_t> values) {
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<std::int64_t>(values.size()));
  for (auto v : values) t->add_int64_data(v);
}

onnx::ModelProto ChainModel(const std::string& middle, int width = 8) {
  onnx::ModelProto model = testing::ParseModelText(ChainText(100, middle, 96, width));
  NameNodes(model);
  // Unknown rank: the middle may change the shape.
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  return model;
}

/// LayerNormalization written out op by op, which ONNX Runtime fuses at ORT_ENABLE_ALL; fed values
/// near 1000 with a small spread, the fused kernel rounds differently from the nodes.
onnx::ModelProto DivergingModel() {
  constexpr int kWidth = 64;
  onnx::ModelProto model = ChainModel(R"(
      scaled_h = Mul (h, tenth)
      shifted = Add (scaled_h, thousand)
      mean = ReduceMean <axes = [-1]> (shifted)
      centered = Sub (shifted, mean)
      squared = Pow (centered, two)
      variance = ReduceMean <axes = [-1]> (squared)
      stabilised = Add (variance, epsilon)
      deviation = Sqrt (stabilised)
      normalised = Div (centered, deviation)
      scaled = Mul (normalised, gamma)
      m = Add (scaled, beta)
)",
                                      kWidth);
  AddFloats(model, "tenth", {}, {0.1f});
  AddFloats(model, "thousand", {}, {1000.0f});
  AddFloats(model, "two", {}, {2.0f});
  AddFloats(model, "epsilon", {}, {1e-5f});
  AddFloats(model, "gamma", {kWidth}, std::vector<float>(kWidth, 1.0f));
  AddFloats(model, "beta", {kWidth}, std::vector<float>(kWidth, 0.0f));
  return model;
}

std::vector<NamedTensor> Inputs(const onnx::ModelProto& model) {
  return PrepareReduceInputs(model, InputSources{}).value();
}

class ReduceTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = std::move(Runtime::Create().value()); }

  /// Reduces `model` for `condition` and checks what every kind must hold: the original's node count,
  /// at most max(9, 5%) nodes kept, and the reduced model failing as the original does when run again.
  ReduceReport Reduced(const onnx::ModelProto& model, const std::string& condition, ReduceOptions options = {}) {
    options.condition = ParseFailureCondition(condition).value();
    const auto inputs = Inputs(model);
    auto report = Reduce(*runtime_, model, inputs, options);
    EXPECT_TRUE(report.ok()) << report.error().message;
    if (!report.ok()) return {};
    EXPECT_TRUE(report->original_fails) << report->not_failing;
    EXPECT_EQ(report->original_nodes, static_cast<std::size_t>(model.graph().node_size()));
    const std::size_t bound = std::max<std::size_t>(9, report->original_nodes / 20);
    EXPECT_LE(report->nodes.size(), bound) << ReproScript(*report, "m.onnx", {});
    EXPECT_GE(report->nodes.size(), 1u);
    EXPECT_FALSE(report->budget_ran_out);
    ProbeSettings probe;
    probe.kind = report->condition.kind;
    probe.tolerance = options.tolerance;
    if (probe.kind == FailureKind::kDiverge)
      probe.plan = ParseCrossCheckMode(report->condition.cross_check_mode).value();
    const Observation again = Observe(*runtime_, probe, report->reduced.SerializeAsString(), report->inputs);
    EXPECT_EQ(again.seen, report->condition.kind) << again.message;
    EXPECT_EQ(again.code, report->code);
    return std::move(report).value();
  }

  /// Writes the reproducer and checks every file is there.
  ReproducerFiles Written(const ReduceReport& report) {
    auto files = WriteReproducer(report, dir_.path() / "min.onnx");
    EXPECT_TRUE(files.ok()) << files.error().message;
    if (!files.ok()) return {};
    EXPECT_TRUE(fs::is_regular_file(files->model));
    EXPECT_TRUE(fs::is_regular_file(files->test_data_set / "input_0.pb"));
    EXPECT_EQ(files->npy.size(), report.inputs.size());
    for (const auto& npy : files->npy) EXPECT_TRUE(fs::is_regular_file(npy)) << npy;
    EXPECT_TRUE(fs::is_regular_file(dir_.path() / "min_repro.py"));
    EXPECT_EQ(files->command, "python3 " + (dir_.path() / "min_repro.py").string());
    return std::move(files).value();
  }

  std::unique_ptr<Runtime> runtime_;
  testing::TempDir dir_;
};

TEST_F(ReduceTest, LoadFailureKeepsTheNodeTheRuntimeRefuses) {
  onnx::ModelProto model = ChainModel("      m = Reshape (h, two_unknowns)\n");
  AddInts(model, "two_unknowns", {-1, -1});
  const ReduceReport report = Reduced(model, "load");
  EXPECT_EQ(report.condition.kind, FailureKind::kLoad);
  ASSERT_EQ(report.nodes.size(), 1u) << report.message;
  EXPECT_EQ(report.nodes[0].name, "node_m");
  EXPECT_NE(report.message.find("multiple -1"), std::string::npos) << report.message;
  ASSERT_EQ(report.inputs.size(), 1u);
  EXPECT_EQ(report.inputs[0].name, "h");
  const ReproducerFiles files = Written(report);
  const std::string script = testing::ReadFile(files.script);
  EXPECT_NE(script.find("CONDITION = \"load\""), std::string::npos) << script;
  EXPECT_NE(script.find("multiple -1 dimensions"), std::string::npos) << script;
}

TEST_F(ReduceTest, RunFailureAtTheShapeGivenIsFoundByAuto) {
  onnx::ModelProto model = ChainModel("      m = Reshape (h, three_by_three)\n");
  AddInts(model, "three_by_three", {3, 3});
  ReduceOptions options;
  options.message = "cannot be reshaped";
  const ReduceReport report = Reduced(model, "auto", options);
  EXPECT_EQ(report.condition.kind, FailureKind::kRun);
  EXPECT_EQ(report.node, "node_m");
  ASSERT_EQ(report.nodes.size(), 1u);
  EXPECT_EQ(report.nodes[0].op_type, "Reshape");
  // The input replacing the chain holds what the chain computed: Tanh's values, inside (-1, 1).
  ASSERT_EQ(report.inputs.size(), 1u);
  const auto values = report.inputs[0].tensor.values<float>();
  EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](float v) { return std::abs(v) < 1 && v != 0; }));
  EXPECT_EQ(report.repro.fragments, std::vector<std::string>{"cannot be reshaped"});
  Written(report);
}

TEST_F(ReduceTest, NaNSourceInTheMiddleIsKeptAndItsInputsAreFinite) {
  onnx::ModelProto model = ChainModel(R"(
      below = Sub (h, two)
      m = Sqrt (below)
)");
  AddFloats(model, "two", {}, {2.0f});
  const ReduceReport report = Reduced(model, "nan");
  ASSERT_EQ(report.nodes.size(), 1u);
  EXPECT_EQ(report.nodes[0].op_type, "Sqrt");
  EXPECT_NE(report.message.find("NaN"), std::string::npos) << report.message;
  ASSERT_EQ(report.inputs.size(), 1u);
  EXPECT_EQ(report.inputs[0].name, "below");
  const ReproducerFiles files = Written(report);
  EXPECT_NE(testing::ReadFile(files.script).find("CONDITION = \"nan\""), std::string::npos);
}

TEST_F(ReduceTest, OptLevelDivergenceKeepsTheFusedPattern) {
  const onnx::ModelProto model = DivergingModel();
  ReduceOptions options;
  options.tolerance.atol = 1e-6;
  options.tolerance.rtol = 1e-5;
  const ReduceReport report = Reduced(model, "diverge=opt-levels", options);
  EXPECT_EQ(report.condition.ToString(), "diverge=opt-levels");
  std::vector<std::string> ops;
  for (const auto& n : report.nodes) ops.push_back(n.op_type);
  EXPECT_NE(std::find(ops.begin(), ops.end(), "ReduceMean"), ops.end()) << fmt::format("{}", ops.size());
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "Sin"), ops.end());
  EXPECT_NE(report.message.find("differs between optimisations off and optimisations all"), std::string::npos)
      << report.message;
  ASSERT_FALSE(report.repro.tolerances.empty());
  EXPECT_EQ(report.repro.a.level, OptimizationLevel::kOff);
  EXPECT_EQ(report.repro.b.level, OptimizationLevel::kAll);
  Written(report);
}

TEST_F(ReduceTest, AModelThatDoesNotFailIsReportedNotReduced) {
  const onnx::ModelProto model = ChainModel("      m = Identity (h)\n");
  ReduceOptions options;
  auto report = Reduce(*runtime_, model, Inputs(model), options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->original_fails);
  EXPECT_NE(report->not_failing.find("does not fail"), std::string::npos) << report->not_failing;
  EXPECT_EQ(report->candidates, 0u);
}

TEST_F(ReduceTest, AMessageTheFailureLacksIsNotTheFailure) {
  onnx::ModelProto model = ChainModel("      m = Reshape (h, three_by_three)\n");
  AddInts(model, "three_by_three", {3, 3});
  ReduceOptions options;
  options.condition.kind = FailureKind::kRun;
  options.message = "out of memory";
  auto report = Reduce(*runtime_, model, Inputs(model), options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->original_fails);
  EXPECT_NE(report->not_failing.find("does not contain 'out of memory'"), std::string::npos) << report->not_failing;
}

// A search slowed down (each candidate followed by a pause) stops at the budget with the smallest
// failing model found so far, smaller than the original, and says so.
TEST_F(ReduceTest, ARunOutBudgetKeepsTheSmallestFailingModelSoFar) {
  onnx::ModelProto model = ChainModel("      m = Reshape (h, three_by_three)\n");
  AddInts(model, "three_by_three", {3, 3});
  ReduceOptions options;
  options.condition.kind = FailureKind::kRun;
  // The budget runs out right after the first smaller failing candidate, however slow the machine is.
  options.time_budget = std::chrono::milliseconds(1000);
  const auto original = static_cast<std::size_t>(model.graph().node_size());
  bool slept = false;
  options.on_progress = [&](const ReduceProgress& progress) {
    if (slept || progress.smallest == 0 || progress.smallest >= original) return;
    slept = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  };
  auto report = Reduce(*runtime_, model, Inputs(model), options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->budget_ran_out);
  EXPECT_GE(report->candidates, 2u);
  EXPECT_LT(report->nodes.size(), report->original_nodes);
  EXPECT_GT(report->nodes.size(), 1u);
  ProbeSettings probe;
  probe.kind = FailureKind::kRun;
  const Observation again = Observe(*runtime_, probe, report->reduced.SerializeAsString(), report->inputs);
  EXPECT_EQ(again.seen, FailureKind::kRun) << again.message;
}

// ---- cmd: a check command (python3 and a script written here; no onnx or onnxruntime needed).

/// A checker reading the candidate's bytes: exits 3 printing "found OP" when the model holds the op
/// type OP (protobuf stores it as text) and the inputs folder holds test_data_set_0/input_0.pb; MODE
/// "never" always passes, "sleep" hangs, "crash" kills itself with SIGSEGV instead of exiting 3.
constexpr const char* kCheckerScript = R"PY(
import os, sys, time
model, inputs, op, mode = sys.argv[1:5]
data = open(model, "rb").read()
if mode == "sleep":
    time.sleep(30)
if mode != "never" and op.encode() in data and os.path.isfile(os.path.join(inputs, "test_data_set_0", "input_0.pb")):
    print(f"found {op}", flush=True)
    if mode == "crash":
        os.kill(os.getpid(), 11)
    sys.exit(3)
print("clean")
)PY";

class ReduceCommandTest : public ReduceTest {
 protected:
  std::string Checker() {
    const fs::path script = dir_.path() / "checker.py";
    std::ofstream(script) << kCheckerScript;
    return script.string();
  }
  ReduceOptions Options(const std::string& op, const std::string& mode, ReduceOptions options = {}) {
    options.condition =
        ParseFailureCondition(fmt::format("cmd:python3 '{}' {{model}} {{inputs}} {} {}", Checker(), op, mode)).value();
    return options;
  }
  Result<ReduceReport> Run(const onnx::ModelProto& model, const ReduceOptions& options) {
    return Reduce(*runtime_, model, Inputs(model), options);
  }
};

TEST_F(ReduceCommandTest, ACheckCommandFindsTheNodeItLooksFor) {
  onnx::ModelProto model = ChainModel(R"(
      below = Sub (h, two)
      m = Sqrt (below)
)");
  AddFloats(model, "two", {}, {2.0f});
  auto report = Run(model, Options("Sqrt", "fail"));
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->original_fails) << report->not_failing;
  EXPECT_EQ(report->condition.kind, FailureKind::kCommand);
  EXPECT_EQ(report->original_nodes, 199u);
  EXPECT_LE(report->nodes.size(), 9u);
  EXPECT_TRUE(
      std::any_of(report->nodes.begin(), report->nodes.end(), [](const auto& n) { return n.op_type == "Sqrt"; }));
  EXPECT_TRUE(report->fed_computed);
  EXPECT_GE(report->candidates, 5u);
  EXPECT_NE(report->message.find("exit status 3: found Sqrt"), std::string::npos) << report->message;
  // The reduced model still makes the command fail; the printed command, run, does too.
  CommandCheck check;
  check.argv = report->condition.command;
  auto again = RunCommandCheck(check, report->reduced.SerializeAsString(), report->inputs);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->failed) << again->summary;
  auto files = WriteReproducer(*report, dir_.path() / "min.onnx");
  ASSERT_TRUE(files.ok()) << files.error().message;
  EXPECT_NE(files->command.find((dir_.path() / "min.onnx").string()), std::string::npos) << files->command;
  auto argv = SplitCommandLine(files->command);
  ASSERT_TRUE(argv.ok());
  auto printed = RunProcess(*argv);
  ASSERT_TRUE(printed.ok()) << printed.error().message;
  EXPECT_EQ(printed->exit_code, 3) << printed->out << printed->err;
  auto script = RunProcess({"python3", files->script.string()});
  ASSERT_TRUE(script.ok());
  EXPECT_EQ(script->exit_code, 1) << script->out << script->err;
  EXPECT_NE(script->out.find("reproduced: exit status 3"), std::string::npos) << script->out;
}

TEST_F(ReduceCommandTest, ACrashOfTheCheckedProgramIsAFailureAndTheMessageMustMatch) {
  onnx::ModelProto model = ChainModel("      m = Reshape (h, two_unknowns)\n");
  AddInts(model, "two_unknowns", {-1, -1});
  ReduceOptions options;
  options.message = "found Reshape";
  auto report = Run(model, Options("Reshape", "crash", options));
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->original_fails) << report->not_failing;
  EXPECT_NE(report->message.find("killed by signal 11"), std::string::npos) << report->message;
  // ONNX Runtime refuses the original: the values fed for cut values are synthesised, as for load.
  EXPECT_FALSE(report->fed_computed);
  ASSERT_LE(report->nodes.size(), 9u);
  EXPECT_TRUE(
      std::any_of(report->nodes.begin(), report->nodes.end(), [](const auto& n) { return n.op_type == "Reshape"; }));
  options.message = "out of memory";
  report = Run(model, Options("Reshape", "crash", options));
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->original_fails);
  EXPECT_NE(report->not_failing.find("does not contain 'out of memory'"), std::string::npos) << report->not_failing;
}

TEST_F(ReduceCommandTest, ACommandThatPassesOrTimesOutIsNotAFailure) {
  const onnx::ModelProto model = ChainModel("      m = Sqrt (h)\n");
  auto never = Run(model, Options("Sqrt", "never"));
  ASSERT_TRUE(never.ok()) << never.error().message;
  EXPECT_FALSE(never->original_fails);
  EXPECT_EQ(never->candidates, 0u);
  EXPECT_NE(never->not_failing.find("exit status 0: clean"), std::string::npos) << never->not_failing;
  ReduceOptions options;
  options.command_timeout = std::chrono::milliseconds(500);
  const auto start = std::chrono::steady_clock::now();
  auto slow = Run(model, Options("Sqrt", "sleep", options));
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(slow->original_fails);
  EXPECT_NE(slow->not_failing.find("timed out"), std::string::npos) << slow->not_failing;
}

TEST_F(ReduceCommandTest, AProgramThatCannotBeStartedNamesTheFlag) {
  const onnx::ModelProto model = ChainModel("      m = Sqrt (h)\n");
  ReduceOptions options;
  options.condition = ParseFailureCondition("cmd:ortkit-no-such-checker {model}").value();
  auto report = Run(model, options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(report.error().message.find("--fails 'cmd:ortkit-no-such-checker {model}'"), std::string::npos)
      << report.error().message;
}

TEST(ReduceCondition, ACommandIsSplitWithoutAShell) {
  auto parsed = ParseFailureCondition(R"(cmd:python3  'my check.py' --model={model} "a b"'c' {inputs})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->kind, FailureKind::kCommand);
  EXPECT_EQ(parsed->command,
            (std::vector<std::string>{"python3", "my check.py", "--model={model}", "a bc", "{inputs}"}));
  EXPECT_EQ(parsed->ToString(), R"(cmd:python3  'my check.py' --model={model} "a b"'c' {inputs})");
  EXPECT_EQ(FillPlaceholders(parsed->command, "/m.onnx", "/in")[2], "--model=/m.onnx");
  EXPECT_EQ(ShellCommandLine({"python3", "my check.py", "it's"}), R"(python3 'my check.py' 'it'\''s')");
  for (const char* bad : {"cmd:", "cmd:   ", "cmd:python3 'unterminated"}) {
    auto error = ParseFailureCondition(bad);
    ASSERT_FALSE(error.ok()) << bad;
    EXPECT_NE(error.error().message.find("--fails"), std::string::npos) << error.error().message;
  }
}

TEST(ReduceCondition, ParsesEveryFormAndNamesTheFlagOtherwise) {
  EXPECT_EQ(ParseFailureCondition("run")->kind, FailureKind::kRun);
  EXPECT_EQ(ParseFailureCondition("auto")->kind, FailureKind::kAuto);
  EXPECT_EQ(ParseFailureCondition("diverge=opt-levels=off,all")->cross_check_mode, "opt-levels=off,all");
  EXPECT_EQ(ParseFailureCondition("diverge=providers=cpu,cuda")->ToString(), "diverge=providers=cpu,cuda");
  for (const char* bad : {"crash", "diverge", "diverge=models", ""}) {
    auto parsed = ParseFailureCondition(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("--fails"), std::string::npos) << parsed.error().message;
    EXPECT_NE(parsed.error().message.find("diverge=providers=A,B"), std::string::npos) << parsed.error().message;
  }
}

// An If whose branches read a value and an initializer of the main graph: cut out alone, it keeps
// the initializer and takes the value as an input.
TEST(ReduceSlice, SubgraphCapturesBecomeInputsAndInitializers) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    branchy (float[4] x, bool flag) => (float[4] y) {
      doubled = Add (x, x)
      y = If (flag) <
        then_branch = then_graph () => (float[4] t) { t = Mul (doubled, weight) },
        else_branch = else_graph () => (float[4] e) { e = Identity (doubled) }
      >
    }
  )");
  AddFloats(model, "weight", {4}, {1, 2, 3, 4});
  const GraphSlicer slicer(model);
  ASSERT_EQ(slicer.size(), 2u);
  const SliceBoundary boundary = slicer.BoundaryOf({1});
  EXPECT_EQ(boundary.inputs, (std::vector<std::string>{"flag", "doubled"}));
  EXPECT_EQ(boundary.initializers, std::vector<std::string>{"weight"});
  EXPECT_EQ(boundary.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(slicer.AncestorsOf({"y"}), (NodeSubset{0, 1}));
  auto built = slicer.Build({1}, [](const std::string& name) -> std::optional<ValueType> {
    if (name == "flag") return ValueType{onnx::TensorProto::BOOL, {}};
    return ValueType{onnx::TensorProto::FLOAT, {4}};
  });
  ASSERT_TRUE(built.ok()) << built.error().message;
  EXPECT_EQ(built->graph().input_size(), 2);
  EXPECT_EQ(built->graph().input(1).type().tensor_type().shape().dim(0).dim_value(), 4);
  EXPECT_EQ(built->graph().initializer_size(), 1);
  EXPECT_FALSE(slicer.Build({1}, [](const std::string&) { return std::optional<ValueType>{}; }).ok());
}

// Nodes out of order are visited in dependency order.
TEST(ReduceSlice, NodesOutOfOrderAreSortedTopologically) {
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    shuffled (float[4] x) => (float[4] z) {
      z = Relu (y)
      y = Neg (x)
    }
  )");
  const GraphSlicer slicer(model);
  EXPECT_EQ(slicer.node(0).op_type(), "Neg");
  EXPECT_EQ(slicer.node(1).op_type(), "Relu");
  EXPECT_EQ(slicer.ProducerOf("y"), std::optional<std::size_t>{0});
  EXPECT_EQ(slicer.BoundaryOf({1}).inputs, std::vector<std::string>{"y"});
}

}  // namespace
}  // namespace ortkit
