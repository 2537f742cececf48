// `check` on models stamped as today's exporters stamp them (IR 10, opset 20): every layer runs, a
// healthy model passes without a warning, and each finding that needs inferred shapes still fires.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <unistd.h>

#include "ortkit/check/check.h"
#include "ortkit/runtime/runtime.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

class CheckToday : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ortkit_check_today_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    runtime_ = std::move(Runtime::Create().value());
  }
  void TearDown() override { fs::remove_all(dir_); }

  CheckReport Check(const std::string& text, const std::function<void(onnx::ModelProto&)>& edit = {}) {
    onnx::ModelProto model = testing::ParseModelText(text);
    if (edit) edit(model);
    const fs::path path = dir_ / "model.onnx";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    EXPECT_TRUE(model.SerializeToOstream(&out));
    out.close();
    CheckOptions options;
    options.model_path = path;
    return RunCheck(runtime_.get(), options);
  }

  static std::vector<std::string> Codes(const CheckReport& report) {
    std::vector<std::string> codes;
    for (const auto& d : report.AllDiagnoses()) codes.push_back(d.code);
    return codes;
  }

  static void ExpectNoLayerSkipped(const CheckReport& report) {
    for (const auto& layer : report.layers) {
      if (layer.name == "external-data") continue;  // skipped for every model without external data
      EXPECT_NE(layer.state, LayerReport::State::kSkipped) << layer.name << ": " << layer.skipped_reason;
    }
  }

  fs::path dir_;
  std::unique_ptr<Runtime> runtime_;
};

bool Has(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

TEST_F(CheckToday, AHealthyDynamoStyleModelPassesEveryLayerWithoutAWarning) {
  const CheckReport report = Check(R"(
    <ir_version: 10, opset_import: ["" : 20], producer_name: "pytorch", producer_version: "2.15.0">
    block (float[batch, seq, 12] x) => (float[batch, seq, 4] y) {
      g = Gelu (x)
      a, b, c = Split <axis = -1, num_outputs = 3> (g)
      tail = Shape <start = -1> (x)
      s = Add (a, b)
      y = Mul (s, c)
    }
  )");
  ExpectNoLayerSkipped(report);
  EXPECT_TRUE(report.Passed());
  EXPECT_EQ(report.CountOf(Severity::kWarning), 0) << ::testing::PrintToString(Codes(report));
  EXPECT_EQ(report.CountOf(Severity::kError), 0) << ::testing::PrintToString(Codes(report));
}

TEST_F(CheckToday, InferenceFailureIsReportedOnOpset20) {
  const CheckReport report = Check(R"(
    <ir_version: 10, opset_import: ["" : 20]>
    bad (float[batch, 3] a, float[4, 5] b) => (float[batch, 5] y) {
      g = Gelu (a)
      y = MatMul (g, b)
    }
  )");
  EXPECT_TRUE(Has(Codes(report), "shape.inference-failed")) << ::testing::PrintToString(Codes(report));
}

TEST_F(CheckToday, ADynamicOutputThatBecomesFixedIsReportedOnOpset20) {
  const CheckReport report = Check(R"(
    <ir_version: 10, opset_import: ["" : 20]>
    baked (float[batch, 8] x) => (float[batch, 8] y) {
      shape = Constant <value = int64[2] {1, 8}> ()
      g = Gelu (x)
      y = Reshape (g, shape)
    }
  )");
  ExpectNoLayerSkipped(report);
  EXPECT_TRUE(Has(Codes(report), "shape.output-dim-fixed")) << ::testing::PrintToString(Codes(report));
}

// ONNX 1.23 names every dimension it cannot size ("unk__0"), where 1.12 left it blank
// (shape.output-dim-unknown): the finding is now shape.output-dim-unrelated, a warning for such names.
TEST_F(CheckToday, AnOutputDimensionWithoutSizeIsReportedOnOpset20) {
  const CheckReport report = Check(R"(
    <ir_version: 10, opset_import: ["" : 20]>
    nz (float[batch, 8] x) => (int64[2, ?] y) {
      g = Gelu (x)
      y = NonZero (g)
    }
  )");
  bool found = false;
  for (const auto& d : report.AllDiagnoses()) {
    if (d.code != "shape.output-dim-unrelated") continue;
    found = true;
    EXPECT_EQ(d.severity, Severity::kWarning);
    EXPECT_NE(d.message.find("'unk__0'"), std::string::npos) << d.message;
  }
  EXPECT_TRUE(found) << ::testing::PrintToString(Codes(report));
}

TEST_F(CheckToday, AnExporterGeneratedOutputNameIsReportedOnOpset20) {
  const CheckReport report = Check(R"(
    <ir_version: 10, opset_import: ["" : 20]>
    gen (float[batch, 8] x, int64[2] shape) => (float[unk__0, 8] y) {
      g = Gelu (x)
      y = Reshape (g, shape)
    }
  )");
  EXPECT_TRUE(Has(Codes(report), "shape.output-dim-unrelated")) << ::testing::PrintToString(Codes(report));
}

// Two unrelated dims of one output are one finding naming both, and its fix speaks to every exporter.
TEST_F(CheckToday, UnrelatedOutputDimensionsAreOneFindingPerOutput) {
  const CheckReport report = Check(R"(
    <ir_version: 10, opset_import: ["" : 20]>
    gen (float[batch, 8] x, int64[2] shape) => (float[unk__1, unk__2] y) {
      y = Reshape (x, shape)
    }
  )");
  int count = 0;
  for (const auto& d : report.AllDiagnoses()) {
    if (d.code != "shape.output-dim-unrelated") continue;
    ++count;
    EXPECT_NE(d.message.find("dimension 0 is 'unk__1', dimension 1 is 'unk__2'"), std::string::npos) << d.message;
    EXPECT_NE(d.fix.find("paddle2onnx"), std::string::npos) << d.fix;
    EXPECT_NE(d.fix.find("tf2onnx"), std::string::npos) << d.fix;
  }
  EXPECT_EQ(count, 1) << ::testing::PrintToString(Codes(report));
}

// torch.export names a grown cache 'past_len + seq_len': arithmetic over input dims is related to them.
TEST_F(CheckToday, AnOutputDimensionThatIsASumOfInputDimensionsIsRelated) {
  const std::string text = R"(
    <ir_version: 10, opset_import: ["" : 20]>
    grow (float[past_len, 8] past, float[seq_len, 8] x) => (float[total, 8] y) {
      y = Concat <axis = 0> (past, x)
    }
  )";
  const auto named = [](const std::string& param) {
    return [param](onnx::ModelProto& model) {
      model.mutable_graph()
          ->mutable_output(0)
          ->mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->mutable_dim(0)
          ->set_dim_param(param);
    };
  };
  EXPECT_FALSE(Has(Codes(Check(text, named("past_len + seq_len"))), "shape.output-dim-unrelated"));
  EXPECT_FALSE(Has(Codes(Check(text, named("((32*past_len)//past_len)"))), "shape.output-dim-unrelated"));
  // An expression over a name no input has is still unrelated.
  EXPECT_TRUE(Has(Codes(Check(text, named("past_len + other_len"))), "shape.output-dim-unrelated"));
}

TEST_F(CheckToday, InconsistentDimensionNamesAreReportedOnOpset20) {
  const CheckReport report = Check(R"(
    <ir_version: 10, opset_import: ["" : 20]>
    two (float[batch, 4] a, float[batch_size, 4] b) => (float[batch, 4] y) {
      s = Add (a, b)
      y = Gelu (s)
    }
  )");
  ExpectNoLayerSkipped(report);
  EXPECT_TRUE(Has(Codes(report), "shape.dim-name-inconsistent")) << ::testing::PrintToString(Codes(report));
}

}  // namespace
}  // namespace ortkit
