// Fixes found by running `ortkit validate` over ONNX's backend test cases (tests/cases/conformance.sh,
// docs/conformance.md): each test rebuilds the situation of the failing case with a real session
// and real test-case files, and the last ones load Debian's copy of the case itself when it is
// installed.

#include <filesystem>
#include <memory>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/diagnose/runtime_messages.h"
#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/test_case.h"
#include "ortkit/validate/reference.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

// Tensors are move-only, so no braced list of them.
template <typename... Ts>
std::vector<Tensor> List(Ts&&... tensors) {
  std::vector<Tensor> out;
  (out.push_back(std::forward<Ts>(tensors)), ...);
  return out;
}

class ConformanceFixes : public ::testing::Test {
 protected:
  static Runtime& SharedRuntime() {
    static const std::unique_ptr<Runtime> runtime = std::move(Runtime::Create().value());
    return *runtime;
  }

  /// Writes `text` as dir/model.onnx and opens a session on it.
  void Open(const char* text) {
    const fs::path model = dir_.WriteModel("model.onnx", testing::ParseModelText(text));
    auto session = Session::Create(SharedRuntime(), model, SessionConfig{});
    ASSERT_TRUE(session.ok()) << session.error().message;
    session_ = std::move(session).value();
    inputs_ = DescribeInputs(*session_).value();
    outputs_ = DescribeOutputs(*session_).value();
  }

  /// Writes dir/test_data_set_N with unnamed protos (matched by position, as in ONNX's older test data).
  void WriteDataSet(int n, std::vector<Tensor> inputs, std::vector<Tensor> outputs) {
    std::vector<NamedTensor> in;
    std::vector<NamedTensor> out;
    for (auto& t : inputs) in.push_back({"", std::move(t)});
    for (auto& t : outputs) out.push_back({"", std::move(t)});
    const Status written = WriteTestDataSet(dir_.path() / ("test_data_set_" + std::to_string(n)), in, out);
    ASSERT_TRUE(written.ok()) << written.error().message;
  }

  testing::TempDir dir_;
  std::unique_ptr<Session> session_;
  std::vector<TensorSpec> inputs_;
  std::vector<TensorSpec> outputs_;
};

// bfloat16 bit patterns of 1, 2, -0.5 and 3.
const std::vector<std::uint16_t> kBFloat16Bits = {0x3F80, 0x4000, 0xBF00, 0x4040};

// node/test_cast_BFLOAT16_to_FLOAT: ONNX 1.12 stores the bfloat16 input as uint16 (numpy has no
// bfloat16); the run was refused with "input is uint16[3, 4] but the model expects bfloat16".
TEST_F(ConformanceFixes, Uint16ReferenceForBFloat16InputIsReadAsItsBits) {
  Open(R"(<ir_version: 8, opset_import: ["" : 17]> g (bfloat16[4] x) => (float[4] y) { y = Cast <to = 1> (x) })");
  WriteDataSet(0, List(Tensor::FromVector<std::uint16_t>({4}, kBFloat16Bits).value()),
               List(Tensor::FromVector<float>({4}, {1.0f, 2.0f, -0.5f, 3.0f}).value()));
  auto cases = ReadReference(dir_.path(), inputs_, outputs_);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ((*cases)[0].inputs[0].tensor.type(), DataType::kBFloat16);
  EXPECT_DOUBLE_EQ((*cases)[0].inputs[0].tensor.AsDouble(2), -0.5);
  const ReferenceReport report = ValidateAgainst(*session_, *cases, ToleranceRules{});
  ASSERT_TRUE(report.cases[0].ran) << report.cases[0].run_error;
  EXPECT_TRUE(report.Passed()) << report.ToJson().dump(2);
  EXPECT_EQ(report.cases[0].comparison.outputs[0].max_abs_error, 0.0);
}

// node/test_cast_FLOAT_to_BFLOAT16: the expected bfloat16 output, stored as uint16, was a type mismatch.
TEST_F(ConformanceFixes, Uint16ReferenceForBFloat16OutputIsComparedAsBFloat16) {
  Open(R"(<ir_version: 8, opset_import: ["" : 17]> g (float[4] x) => (bfloat16[4] y) { y = Cast <to = 16> (x) })");
  WriteDataSet(0, List(Tensor::FromVector<float>({4}, {1.0f, 2.0f, -0.5f, 3.0f}).value()),
               List(Tensor::FromVector<std::uint16_t>({4}, kBFloat16Bits).value()));
  auto cases = ReadReference(dir_.path(), inputs_, outputs_);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  const ReferenceReport report = ValidateAgainst(*session_, *cases, ToleranceRules{});
  ASSERT_TRUE(report.cases[0].ran) << report.cases[0].run_error;
  const OutputComparison& y = report.cases[0].comparison.outputs[0];
  EXPECT_TRUE(y.type_match) << y.problem;
  EXPECT_TRUE(y.passed) << y.problem;
  EXPECT_EQ(y.expected_desc, "bfloat16[4]");
}

// The reinterpretation is for bfloat16 model values only: a uint16 input stays uint16, and a
// uint16 reference for a float16 output is still a type mismatch.
TEST_F(ConformanceFixes, Uint16ReferenceIsNotReinterpretedForOtherTypes) {
  Open(R"(<ir_version: 8, opset_import: ["" : 17]> g (uint16[4] x) => (float16[4] y) { y = Cast <to = 10> (x) })");
  WriteDataSet(0, List(Tensor::FromVector<std::uint16_t>({4}, {1, 2, 3, 4}).value()),
               List(Tensor::FromVector<std::uint16_t>({4}, {0x3C00, 0x4000, 0x4200, 0x4400}).value()));
  auto cases = ReadReference(dir_.path(), inputs_, outputs_);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  EXPECT_EQ((*cases)[0].inputs[0].tensor.type(), DataType::kUInt16);
  EXPECT_EQ((*cases)[0].expected[0].tensor.type(), DataType::kUInt16);
  const ReferenceReport report = ValidateAgainst(*session_, *cases, ToleranceRules{});
  ASSERT_TRUE(report.cases[0].ran) << report.cases[0].run_error;
  EXPECT_FALSE(report.cases[0].comparison.outputs[0].type_match);
}

// Every data set keeps its folder's name as its label, in order.
TEST_F(ConformanceFixes, DataSetsAreLabelledByTheirFolders) {
  Open(R"(<ir_version: 8, opset_import: ["" : 17]> g (float[2] x) => (float[2] y) { y = Relu(x) })");
  for (int n = 0; n < 3; ++n) {
    WriteDataSet(n, List(Tensor::FromVector<float>({2}, {-1.0f, float(n)}).value()),
                 List(Tensor::FromVector<float>({2}, {0.0f, float(n)}).value()));
  }
  auto cases = ReadReference(dir_.path(), inputs_, outputs_);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 3u);
  for (int n = 0; n < 3; ++n) EXPECT_EQ((*cases)[n].label, "test_data_set_" + std::to_string(n));
  EXPECT_TRUE(ValidateAgainst(*session_, *cases, ToleranceRules{}).Passed());
}

// node/test_cast_FLOAT_to_STRING: ONNX Runtime prints 0.6048455 as "0.60484552"; the report said
// "worst at [0, 1]: expected 0, got 0" because string elements were read as numbers.
TEST(ConformanceFixesCompare, StringMismatchReportsTheStrings) {
  const Tensor expected = Tensor::FromStrings({3}, {"0.9767611", "0.6048455", "0.7392636"}).value();
  const Tensor actual = Tensor::FromStrings({3}, {"0.9767611", "0.60484552", "0.73926359"}).value();
  const OutputComparison c = CompareTensors("output", expected, actual, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(c.strings);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.problem, "2 of 3 strings differ");
  EXPECT_EQ(c.worst_position, std::vector<std::int64_t>{1});
  EXPECT_EQ(c.worst_expected_string, "0.6048455");
  EXPECT_EQ(c.worst_actual_string, "0.60484552");
  const nlohmann::json j = c.ToJson();
  EXPECT_EQ(j["worst"]["expected"], "0.6048455");
  EXPECT_EQ(j["worst"]["actual"], "0.60484552");
}

// A case that does not run carries a diagnosis code in JSON, so scripts need not parse the message.
TEST_F(ConformanceFixes, CaseThatFailsToRunHasADiagnosisInJson) {
  Open(
      R"(<ir_version: 8, opset_import: ["" : 17]> g (float[N] x, int64[2] s) => (float[A, B] y) { y = Reshape(x, s) })");
  WriteDataSet(0,
               List(Tensor::FromVector<float>({6}, {1, 2, 3, 4, 5, 6}).value(),
                    Tensor::FromVector<std::int64_t>({2}, {4, 2}).value()),
               List(Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}).value()));
  auto cases = ReadReference(dir_.path(), inputs_, outputs_);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  const ReferenceReport report = ValidateAgainst(*session_, *cases, ToleranceRules{});
  ASSERT_FALSE(report.cases[0].ran);
  const nlohmann::json j = report.ToJson();
  EXPECT_EQ(j["cases"][0]["diagnosis"]["code"], "runtime.shape-mismatch") << j.dump(2);
  EXPECT_NE(j["cases"][0]["diagnosis"]["message"].get<std::string>().find("{6}"), std::string::npos) << j.dump(2);
}

// Debian's copy of the backend test cases, when installed.

// node/test_gru_batchwise: the refusal of layout = 1 fell back to runtime.load-failed.
TEST_F(ConformanceFixes, BatchwiseRecurrentNodeIsNotImplemented) {
  const fs::path model = kTestData / "node/test_gru_batchwise/model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is not installed (libonnx-testdata)";
  auto session = Session::Create(SharedRuntime(), model, SessionConfig{});
  ASSERT_FALSE(session.ok());
  const Diagnosis d = TranslateRuntimeError(session.error().message);
  EXPECT_EQ(d.code, "runtime.not-implemented") << d.message;
  EXPECT_NE(d.message.find("layout = 1"), std::string::npos) << d.message;
}

TEST_F(ConformanceFixes, BackendCaseCastBFloat16ToFloatPasses) {
  const fs::path folder = kTestData / "node/test_cast_BFLOAT16_to_FLOAT";
  if (!fs::exists(folder)) GTEST_SKIP() << folder << " is not installed (libonnx-testdata)";
  auto session = Session::Create(SharedRuntime(), folder / "model.onnx", SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  auto cases = ReadReference(folder, DescribeInputs(**session).value(), DescribeOutputs(**session).value());
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  const ReferenceReport report = ValidateAgainst(**session, *cases, ToleranceRules{});
  EXPECT_TRUE(report.Passed()) << report.ToJson().dump(2);
}

}  // namespace
}  // namespace ortkit
