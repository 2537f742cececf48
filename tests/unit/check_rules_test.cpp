// RunCheck with a real ONNX Runtime: each lint category shows up in the "rules" layer of a
// written model file, and graph.opset-too-new follows the opset the installed runtime accepts.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "ortkit/check/check.h"
#include "ortkit/runtime/capabilities.h"
#include "ortkit/runtime/runtime.h"
#include "test_models.h"

namespace ortkit {
namespace {

class CheckRules : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto created = Runtime::Create();
    ASSERT_TRUE(created.ok()) << created.error().message;
    runtime_ = std::move(created).value().release();
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }

  // The rules layer of `ortkit check` on `model` written to a file.
  static const LayerReport* RulesLayer(const CheckReport& report) {
    for (const auto& layer : report.layers) {
      if (layer.name == "rules") return &layer;
    }
    return nullptr;
  }

  CheckReport Check(const onnx::ModelProto& model) {
    CheckOptions options;
    options.model_path = dir_.WriteModel("model.onnx", model);
    return RunCheck(runtime_, options);
  }

  static Runtime* runtime_;
  testing::TempDir dir_;
};

Runtime* CheckRules::runtime_ = nullptr;

struct RuleCase {
  const char* category;
  const char* code;
  const char* text;
};

// One model per rule category; each triggers the named code (and possibly others).
const RuleCase kCases[] = {
    {"batch", "graph.static-batch", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[1, 3, H, W] image) => (float[1, 3, H, W] y) { y = Relu(image) })"},
    {"baked shape", "graph.baked-batch-reshape", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[batch, 16] x) => (float[M, 4, 4] y) <int64[3] target = {2, 4, 4}> { y = Reshape(x, target) })"},
    {"training mode", "graph.training-dropout", R"(
      <ir_version: 8, opset_import: ["" : 13]>
      agraph (float[N, 4] x) => (float[N, 4] y) <bool t = {1}> { y = Dropout(x, , t) })"},
    {"training mode", "graph.training-batchnorm", R"(
      <ir_version: 8, opset_import: ["" : 15]>
      agraph (float[N, 2, 4, 4] x) => (float[N, 2, 4, 4] y)
          <float[2] s = {1.0, 1.0}, float[2] b = {0.0, 0.0}, float[2] m = {0.0, 0.0}, float[2] v = {1.0, 1.0}> {
        y = BatchNormalization<training_mode = 1>(x, s, b, m, v)
      })"},
    {"precision", "graph.float64-mixed", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N, 2] x) => (float[N, 2] y) <float[2] w = {1.0, 2.0}> {
        d = Cast<to = 11>(x)
        f = Cast<to = 1>(d)
        y = Add(f, w)
      })"},
    {"opset", "graph.opset-too-old", R"(
      <ir_version: 3, opset_import: ["" : 6]>
      agraph (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) })"},
    {"opset", "graph.opset-too-new", R"(
      <ir_version: 8, opset_import: ["" : 30]>
      agraph (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) })"},
    {"domains", "graph.custom-domain", R"(
      <ir_version: 8, opset_import: ["" : 17, "acme.ops" : 1]>
      agraph (float[N, 4] x) => (float[N, 4] y) { y = acme.ops.Frobnicate(x) })"},
    {"domains", "graph.unused-opset-import", R"(
      <ir_version: 8, opset_import: ["" : 17, "com.microsoft.nchwc" : 1]>
      agraph (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) })"},
    {"data-dependent sizes", "graph.dynamic-resize", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N, 3, 8, 8] x, float[4] factor) => (float[N, 3, ?, ?] y) { y = Resize(x, , factor) })"},
    {"interface", "graph.unused-input", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N, 4] x, float[N, 4] leftover) => (float[N, 4] y) { y = Relu(x) })"},
    {"interface", "graph.initializer-as-input", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N, 2] x, float[2] w = {1.0, 2.0}) => (float[N, 2] y) { y = Mul(x, w) })"},
    {"structure", "graph.undefined-value", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N] x) => (float[N] y) { y = Add(x, ghost) })"},
    {"structure", "graph.duplicate-name", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N] x) => (float[N] y) {
        y = Relu(x)
        y = Neg(x)
      })"},
    {"structure", "graph.bad-dimension", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[-3, 4] x) => (float[N, 4] y) { y = Relu(x) })"},
    {"structure", "graph.no-outputs", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N] x) => () { y = Relu(x) })"},
    {"dimension names", "shape.dim-name-inconsistent", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[batch, 4] a, float[batch_size, 4] b) => (float[batch, 4] y) { y = Add(a, b) })"},
};

TEST_F(CheckRules, EachCategoryShowsUpInTheRulesLayer) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string(c.category) + " / " + c.code);
    const CheckReport report = Check(testing::ParseModelText(c.text));
    const LayerReport* rules = RulesLayer(report);
    ASSERT_NE(rules, nullptr);
    bool found = false;
    for (const auto& d : rules->diagnoses) found |= d.code == c.code;
    EXPECT_TRUE(found) << "rules layer: " << rules->diagnoses.size() << " diagnoses, none " << c.code;
    if (found) {
      EXPECT_EQ(rules->state, WorstSeverity(rules->diagnoses) == Severity::kError ? LayerReport::State::kFailed
                                                                                  : LayerReport::State::kPassed);
    }
  }
}

// What each rule's finding is about, in words its message and its fix must both use: a message that says
// one thing and a fix that says another ("drop the import" beside "register a custom-op library") fails here.
struct Subject {
  const char* code;
  std::vector<std::string> words;  // any one of them, ignoring case
};
const Subject kSubjects[] = {
    {"graph.static-batch", {"batch"}},
    {"graph.baked-batch-reshape", {"batch"}},
    {"graph.training-dropout", {"training", "eval"}},
    {"graph.training-batchnorm", {"training", "eval"}},
    {"graph.float64-mixed", {"float64", "double"}},
    {"graph.opset-too-old", {"opset"}},
    {"graph.opset-too-new", {"opset"}},
    {"graph.custom-domain", {"custom-op", "onnxruntime-extensions", "contrib"}},
    {"graph.unused-opset-import", {"nothing is needed"}},
    {"graph.dynamic-resize", {"scale", "size"}},
    {"graph.unused-input", {"input"}},
    {"graph.initializer-as-input", {"initializer"}},
    {"graph.undefined-value", {"produce"}},
    {"graph.duplicate-name", {"written"}},
    {"graph.bad-dimension", {"dimension"}},
    {"graph.no-outputs", {"output"}},
    {"shape.dim-name-inconsistent", {"name"}},
};

bool UsesAny(std::string text, const std::vector<std::string>& words) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::any_of(words.begin(), words.end(),
                     [&](const std::string& w) { return text.find(w) != std::string::npos; });
}

TEST_F(CheckRules, EachFindingsMessageAndFixShareTheirSubject) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.code);
    const auto* subject = std::find_if(std::begin(kSubjects), std::end(kSubjects),
                                       [&](const Subject& s) { return std::string_view(s.code) == c.code; });
    ASSERT_NE(subject, std::end(kSubjects)) << "give " << c.code << " its subject in kSubjects";
    const CheckReport report = Check(testing::ParseModelText(c.text));
    const LayerReport* rules = RulesLayer(report);
    ASSERT_NE(rules, nullptr);
    for (const auto& d : rules->diagnoses) {
      if (d.code != c.code) continue;
      EXPECT_TRUE(UsesAny(d.message, subject->words)) << "message: " << d.message;
      EXPECT_TRUE(UsesAny(d.fix, subject->words)) << "fix: " << d.fix;
    }
  }
}

TEST_F(CheckRules, CycleShowsUpInTheRulesLayer) {
  // The text syntax cannot write a cycle: a = Relu(b), b = Neg(a), built by hand.
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("loop");
  for (auto [op, in, out] : {std::tuple{"Relu", "b", "a"}, std::tuple{"Neg", "a", "b"}}) {
    auto* node = graph->add_node();
    node->set_name(op);
    node->set_op_type(op);
    node->add_input(in);
    node->add_output(out);
  }
  auto* output = graph->add_output();
  output->set_name("a");
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  const CheckReport report = Check(model);
  const LayerReport* rules = RulesLayer(report);
  ASSERT_NE(rules, nullptr);
  EXPECT_EQ(rules->state, LayerReport::State::kFailed);
  ASSERT_FALSE(rules->diagnoses.empty());
  EXPECT_EQ(rules->diagnoses.front().code, "graph.cycle");
  EXPECT_FALSE(report.Passed());
}

TEST_F(CheckRules, AModelTheRuntimeAcceptsIsNotTooNew) {
  const int max_opset = ProbeMaxSupportedOpset(*runtime_);
  const CheckReport report = Check(testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) })"));
  const LayerReport* rules = RulesLayer(report);
  ASSERT_NE(rules, nullptr);
  EXPECT_TRUE(rules->diagnoses.empty()) << rules->diagnoses.front().code << ": " << rules->diagnoses.front().message;
  EXPECT_TRUE(report.Passed()) << "runtime accepts up to opset " << max_opset;
}

TEST_F(CheckRules, ProbeFindsTheHighestOpsetThatLoads) {
  const auto start = std::chrono::steady_clock::now();
  const int max_opset = ProbeMaxSupportedOpset(*runtime_);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // ONNX Runtime 1.29 implements at least opset 21 (ONNX 1.16); the probe starts at 30.
  EXPECT_GE(max_opset, 21);
  EXPECT_LE(max_opset, 30);
  EXPECT_LT(seconds, 10.0);
  // The answer is the boundary: a real model at that opset loads through RunCheck, one above does not.
  auto at = [&](int opset) {
    auto model = testing::ParseModelText(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N, 4] x) => (float[N, 4] y) { y = Identity(x) })");
    model.mutable_opset_import(0)->set_version(opset);
    CheckOptions options;
    options.model_path = dir_.WriteModel("opset" + std::to_string(opset) + ".onnx", model);
    return RunCheck(runtime_, options);
  };
  auto runtime_state = [](const CheckReport& report) {
    for (const auto& layer : report.layers) {
      if (layer.name == "runtime") return layer.state;
    }
    return LayerReport::State::kSkipped;
  };
  EXPECT_EQ(runtime_state(at(max_opset)), LayerReport::State::kPassed);
  if (max_opset < 30) {
    const CheckReport above = at(max_opset + 1);
    EXPECT_EQ(runtime_state(above), LayerReport::State::kFailed);
    bool too_new = false;
    for (const auto& d : above.AllDiagnoses()) too_new |= d.code == "graph.opset-too-new";
    EXPECT_TRUE(too_new);
  }
}

}  // namespace
}  // namespace ortkit
