// A corpus of broken model files, each through the real `check` path (RunCheck with an ONNX Runtime
// environment): every one must end as one specific diagnosis whose message names the specifics
// (byte counts, the field, the input, node or tensor), never a crash.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ortkit/check/check.h"
#include "ortkit/runtime/runtime.h"
#include "test_models.h"

namespace ortkit {
namespace {

// Text containment with the whole text in the failure message.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in: " << text;
}

class BrokenFiles : public ::testing::Test {
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

  CheckReport Check(const std::filesystem::path& path) const {
    CheckOptions options;
    options.model_path = path;
    return RunCheck(runtime_, options);
  }

  CheckReport CheckBytes(const std::string& name, std::string_view bytes) const {
    return Check(dir_.Write(name, bytes));
  }

  static Runtime* runtime_;
  testing::TempDir dir_;
};

Runtime* BrokenFiles::runtime_ = nullptr;

const LayerReport* FindLayer(const CheckReport& report, std::string_view name) {
  for (const auto& layer : report.layers) {
    if (layer.name == name) return &layer;
  }
  return nullptr;
}

// The diagnoses of `code` anywhere in the report.
std::vector<Diagnosis> WithCode(const CheckReport& report, std::string_view code) {
  std::vector<Diagnosis> out;
  for (const auto& d : report.AllDiagnoses()) {
    if (d.code == code) out.push_back(d);
  }
  return out;
}

std::string Codes(const CheckReport& report) {
  std::string out;
  for (const auto& d : report.AllDiagnoses()) out += d.code + ": " + d.message + "\n";
  return out;
}

// The file layer's single diagnosis: a broken file is one finding, not a cascade.
Diagnosis FileFinding(const CheckReport& report) {
  const LayerReport* file = FindLayer(report, "file");
  EXPECT_NE(file, nullptr);
  EXPECT_FALSE(report.Passed());
  if (file == nullptr || file->diagnoses.size() != 1) {
    ADD_FAILURE() << "expected exactly one file-layer diagnosis, got:\n" << Codes(report);
    return {};
  }
  for (const char* later : {"checker", "shape-inference", "rules"}) {
    const LayerReport* layer = FindLayer(report, later);
    EXPECT_TRUE(layer != nullptr && layer->state == LayerReport::State::kSkipped) << later;
  }
  return file->diagnoses.front();
}

// A small real model: header fields, two named nodes, one float initializer of 64×64 stored as
// raw_data (16 KiB), and the opset import last, as protobuf writes fields in number order.
onnx::ModelProto RealModel() {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17], producer_name: "ortkit-test">
    agraph (float[N, 64] x) => (float[N, 64] y) { h = MatMul(x, w) y = Relu(h) }
  )");
  model.mutable_graph()->mutable_node(0)->set_name("matmul_0");
  model.mutable_graph()->mutable_node(1)->set_name("relu_1");
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(64);
  w->add_dims(64);
  std::string raw(64 * 64 * sizeof(float), '\0');
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7 + 3);
  w->set_raw_data(raw);
  return model;
}

// Byte offsets of the parts of RealModel()'s serialisation, from the protobuf layout.
struct Layout {
  std::string bytes;
  std::size_t graph_offset = 0;      ///< the graph field's tag
  std::size_t graph_length = 0;      ///< its declared payload length
  std::size_t graph_payload = 0;     ///< first byte of the payload
  std::size_t raw_data = 0;          ///< first byte of the initializer's raw data
  std::size_t relu_op_type_end = 0;  ///< just past "Relu" in node #1
  std::size_t opset_offset = 0;      ///< the opset_import field's tag (the last field)
};

Layout LayoutOf(const onnx::ModelProto& model) {
  Layout layout;
  layout.bytes = model.SerializeAsString();
  onnx::ModelProto header;
  header.set_ir_version(model.ir_version());
  header.set_producer_name(model.producer_name());
  layout.graph_offset = header.SerializeAsString().size();
  layout.graph_length = model.graph().ByteSizeLong();
  const std::size_t varint_bytes = layout.graph_length < 128 ? 1 : layout.graph_length < 16384 ? 2 : 3;
  layout.graph_payload = layout.graph_offset + 1 + varint_bytes;
  layout.raw_data = layout.bytes.find(model.graph().initializer(0).raw_data());
  layout.relu_op_type_end = layout.bytes.find("Relu") + 4;
  layout.opset_offset = layout.graph_payload + layout.graph_length;
  return layout;
}

TEST_F(BrokenFiles, TheIntactModelPasses) {
  const auto report = Check(dir_.WriteModel("intact.onnx", RealModel()));
  EXPECT_TRUE(report.Passed()) << Codes(report);
}

TEST_F(BrokenFiles, TruncatedInsideTheHeader) {
  const Layout layout = LayoutOf(RealModel());
  // ir_version takes bytes 0-1; producer_name's tag is byte 2, its length byte 3 ("ortkit-test": 11).
  const auto d = FileFinding(CheckBytes("header.onnx", layout.bytes.substr(0, 6)));
  EXPECT_EQ(d.code, "file.truncated");
  EXPECT_TRUE(Contains(d.message, "(6 bytes)"));
  EXPECT_TRUE(Contains(d.message, "field producer_name at byte 2 declares 11 bytes, but the file ends 2 bytes later"));
}

// Random bytes whose first byte happens to be a ModelProto tag (0x3a: graph, length-delimited)
// followed by a length of about 4 GB are not a cut model: no copy will repair them.
TEST_F(BrokenFiles, RandomBytesWithAnOverlongFirstFieldAreNotOnnx) {
  std::string bytes = "\x3a\x81\xe4\xc9\xc3\x10";  // field 7, length 4,436,749,313
  for (int i = 0; i < 500; ++i) bytes.push_back(static_cast<char>((i * 131 + 17) % 256));
  const auto d = FileFinding(CheckBytes("random.onnx", bytes));
  EXPECT_EQ(d.code, "file.not-onnx") << d.message;
  EXPECT_TRUE(Contains(d.message, "more than protobuf allows")) << d.message;
  std::string small = "\x12\x7f";  // field 2 (producer_name) of 127 bytes as the very first field
  small += std::string(40, 'x');
  const auto first = FileFinding(CheckBytes("first.onnx", small));
  EXPECT_EQ(first.code, "file.not-onnx") << first.message;
  EXPECT_TRUE(Contains(first.message, "as its first field")) << first.message;
}

TEST_F(BrokenFiles, TruncatedInsideTheIrVersion) {
  const Layout layout = LayoutOf(RealModel());
  const auto d = FileFinding(CheckBytes("one-byte.onnx", layout.bytes.substr(0, 1)));
  EXPECT_EQ(d.code, "file.truncated");
  EXPECT_TRUE(Contains(d.message, "(1 bytes)"));
  EXPECT_TRUE(Contains(d.message, "the file ends inside field ir_version at byte 0"));
}

TEST_F(BrokenFiles, TruncatedInsideTheNodeList) {
  const Layout layout = LayoutOf(RealModel());
  const std::size_t cut = layout.relu_op_type_end;
  const auto d = FileFinding(CheckBytes("nodes.onnx", layout.bytes.substr(0, cut)));
  EXPECT_EQ(d.code, "file.truncated");
  EXPECT_TRUE(Contains(d.message, fmt::format("({} bytes)", cut)));
  EXPECT_TRUE(
      Contains(d.message, fmt::format("field graph at byte {} declares {} bytes, but the file ends {} bytes later",
                                      layout.graph_offset, layout.graph_length, cut - layout.graph_payload)));
  EXPECT_TRUE(Contains(d.message, "inside node #1 'relu_1' (Relu)"));
}

TEST_F(BrokenFiles, TruncatedInsideAnInitializersRawData) {
  const Layout layout = LayoutOf(RealModel());
  const std::size_t cut = layout.raw_data + 5000;
  const auto d = FileFinding(CheckBytes("weights.onnx", layout.bytes.substr(0, cut)));
  EXPECT_EQ(d.code, "file.truncated");
  EXPECT_TRUE(Contains(d.message, fmt::format("KiB, {} bytes)", cut)));
  EXPECT_TRUE(Contains(
      d.message, fmt::format("field graph at byte {} declares {} bytes", layout.graph_offset, layout.graph_length)));
  EXPECT_TRUE(Contains(d.message, "inside initializer #0 'w' (its raw data declares 16384 bytes, 5000 present)"));
}

TEST_F(BrokenFiles, OneByteShort) {
  const Layout layout = LayoutOf(RealModel());
  const std::size_t cut = layout.bytes.size() - 1;
  // The opset import ("" : 17) is the last field: its tag, length 4, then domain "" and version 17.
  const auto d = FileFinding(CheckBytes("short.onnx", layout.bytes.substr(0, cut)));
  EXPECT_EQ(d.code, "file.truncated");
  EXPECT_TRUE(Contains(d.message, fmt::format("KiB, {} bytes)", cut)));
  EXPECT_TRUE(
      Contains(d.message, fmt::format("field opset_import at byte {} declares 4 bytes, but the file ends 3 bytes later",
                                      layout.opset_offset)));
}

TEST_F(BrokenFiles, RandomBytes) {
  std::mt19937 generator(20240531);  // mt19937's output is fixed by the standard: the same bytes everywhere
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(generator() & 0xFF);
  const auto d = FileFinding(CheckBytes("random.onnx", bytes));
  EXPECT_EQ(d.code, "file.not-onnx");
  EXPECT_TRUE(Contains(d.message, "(4.0 KiB, 4096 bytes) is not an ONNX model"));
  EXPECT_TRUE(Contains(d.message, "it starts with protobuf field"));
}

TEST_F(BrokenFiles, ZeroLength) {
  const auto d = FileFinding(CheckBytes("empty.onnx", ""));
  EXPECT_EQ(d.code, "file.empty");
  EXPECT_TRUE(Contains(d.message, "empty.onnx' is empty (0 bytes)"));
}

TEST_F(BrokenFiles, GitLfsPointer) {
  const std::string pointer =
      "version https://git-lfs.github.com/spec/v1\n"
      "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
      "size 553437328\n";
  const auto d = FileFinding(CheckBytes("lfs.onnx", pointer));
  EXPECT_EQ(d.code, "file.git-lfs-pointer");
  EXPECT_TRUE(Contains(d.message, fmt::format("is a {}-byte Git LFS pointer", pointer.size())));
  EXPECT_TRUE(Contains(d.message, "the real file is 553437328 bytes"));
}

TEST_F(BrokenFiles, HtmlPage) {
  const std::string page =
      "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please log in</body></html>\n";
  const auto d = FileFinding(CheckBytes("page.onnx", page));
  EXPECT_EQ(d.code, "file.html-page");
  EXPECT_TRUE(Contains(d.message, fmt::format("({} bytes) is an HTML page", page.size())));
}

TEST_F(BrokenFiles, JsonErrorDocument) {
  const std::string json = R"({"error": {"code": 401, "message": "Access to model denied"}})";
  const auto d = FileFinding(CheckBytes("error.onnx", json));
  EXPECT_EQ(d.code, "file.json-document");
  EXPECT_TRUE(Contains(d.message, fmt::format("({} bytes) is a JSON document", json.size())));
}

TEST_F(BrokenFiles, ZipFileHeader) {
  std::string zip("PK\x03\x04\x14\x00\x00\x00\x08\x00", 10);
  zip += "archive/data.pkl";
  const auto d = FileFinding(CheckBytes("checkpoint.onnx", zip));
  EXPECT_EQ(d.code, "file.not-onnx");
  EXPECT_TRUE(Contains(d.message, fmt::format("({} bytes) is a zip archive", zip.size())));
}

// ---- graph rules: the file parses, the graph is wrong.

TEST_F(BrokenFiles, NegativeDimension) {
  const auto report = Check(dir_.WriteModel("negative.onnx", testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[-3, 4] x) => (float[N, 4] y) { y = Relu(x) }
  )")));
  const auto found = WithCode(report, "graph.bad-dimension");
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].severity, Severity::kError);
  EXPECT_EQ(found[0].location.input, "x");
  EXPECT_EQ(found[0].location.dimension, "0");
  EXPECT_TRUE(Contains(found[0].message, "input 'x' declares dimension 0 as -3"));
  EXPECT_FALSE(report.Passed());
}

TEST_F(BrokenFiles, AbsurdlyLargeDimension) {
  const auto report = Check(dir_.WriteModel("huge.onnx", testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 4] y, float[N, 9000000000000000] z) { y = Relu(x) z = Identity(x) }
  )")));
  const auto found = WithCode(report, "graph.bad-dimension");
  ASSERT_GE(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].location.output, "z");
  EXPECT_TRUE(Contains(found[0].message, "output 'z' declares dimension 1 as 9000000000000000"));
  EXPECT_FALSE(report.Passed());
}

TEST_F(BrokenFiles, NodeReadsAValueNoOneProduces) {
  auto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 4] y) { h = Relu(x) y = Add(h, ghost) }
  )");
  model.mutable_graph()->mutable_node(1)->set_name("add_ghost");
  const auto report = Check(dir_.WriteModel("undefined.onnx", model));
  const auto found = WithCode(report, "graph.undefined-value");
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].location.node, "add_ghost");
  EXPECT_EQ(found[0].location.tensor, "ghost");
  EXPECT_TRUE(Contains(found[0].message, "node 'add_ghost' (Add) reads 'ghost'"));
  EXPECT_FALSE(report.Passed());
}

TEST_F(BrokenFiles, DuplicateNames) {
  auto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 4] y) { a = Relu(x) a = Sigmoid(x) y = Identity(a) }
  )");
  model.mutable_graph()->mutable_node(0)->set_name("relu_a");
  model.mutable_graph()->mutable_node(1)->set_name("sigmoid_a");
  const auto report = Check(dir_.WriteModel("duplicate.onnx", model));
  const auto found = WithCode(report, "graph.duplicate-name");
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].location.tensor, "a");
  EXPECT_TRUE(Contains(found[0].message, "value 'a'"));
  EXPECT_TRUE(Contains(found[0].message, "relu_a"));
  EXPECT_TRUE(Contains(found[0].message, "sigmoid_a"));
  EXPECT_FALSE(report.Passed());
}

TEST_F(BrokenFiles, Cycle) {
  auto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 4] y) { c = Add(x, d) d = Relu(c) y = Identity(d) }
  )");
  model.mutable_graph()->mutable_node(0)->set_name("add_c");
  model.mutable_graph()->mutable_node(1)->set_name("relu_d");
  const auto report = Check(dir_.WriteModel("cycle.onnx", model));
  const auto found = WithCode(report, "graph.cycle");
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_TRUE(Contains(found[0].message, "'add_c' (Add)"));
  EXPECT_TRUE(Contains(found[0].message, "'relu_d' (Relu)"));
  EXPECT_FALSE(report.Passed());
}

// ---- models that crashed ONNX 1.12's shape inference (found by fuzz/model_fuzzer; the inputs are
// in fuzz/regressions/): the layer now fails cleanly and names the node.

TEST_F(BrokenFiles, OldGemmWithARankOneInputFailsShapeInferenceCleanly) {
  const auto report = Check(dir_.WriteModel("gemm6.onnx", testing::ParseModelText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    agraph (float[2, 3] a, float[4] b, float[4] c) => (float[2, 4] y) { y = Gemm<broadcast = 1>(a, b, c) }
  )")));
  const auto found = WithCode(report, "shape.inference-failed");
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].location.op_type, "Gemm");
  EXPECT_TRUE(Contains(found[0].message, "input 1 has rank 1; Gemm-6 and older need rank 2"));
}

TEST_F(BrokenFiles, ScanWithoutItsRequiredAttributeFailsShapeInferenceCleanly) {
  auto model = testing::ParseModelText(R"(
    <ir_version: 3, opset_import: ["" : 8]>
    agraph (float[1, 2] init, float[1, 3, 2] x) => (float[1, 2] y, float[1, 3, 2] z) {
      y, z = Scan <body = body (float[2] sum_in, float[2] next) => (float[2] sum_out, float[2] scan_out) {
        sum_out = Add(sum_in, next)
        scan_out = Identity(sum_out)
      }, num_scan_inputs = 1> (init, init, x)
    }
  )");
  model.mutable_graph()->mutable_node(0)->set_input(0, "");  // no sequence_lens; the parser cannot write an empty input
  auto* attributes = model.mutable_graph()->mutable_node(0)->mutable_attribute();
  attributes->erase(std::remove_if(attributes->begin(), attributes->end(),
                                   [](const onnx::AttributeProto& a) { return a.name() == "num_scan_inputs"; }),
                    attributes->end());
  const auto report = Check(dir_.WriteModel("scan8.onnx", model));
  const auto found = WithCode(report, "shape.inference-failed");
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].location.op_type, "Scan");
  EXPECT_TRUE(Contains(found[0].message, "the required attribute 'num_scan_inputs' is missing"));
  EXPECT_FALSE(WithCode(report, "checker.failed").empty()) << Codes(report);
}

TEST_F(BrokenFiles, ShapeOfAValueNoOneProducesDoesNotCrashDataPropagation) {
  const auto report = Check(dir_.WriteModel("shape.onnx", testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[5] w) => (int64[1] y) { y = Shape(ghost) }
  )")));
  const auto found = WithCode(report, "graph.undefined-value");
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_TRUE(Contains(found[0].message, "(Shape) reads 'ghost'"));
  ASSERT_NE(FindLayer(report, "shape-inference"), nullptr);
  EXPECT_NE(FindLayer(report, "shape-inference")->state, LayerReport::State::kSkipped);
}

// ---- external data: the .onnx file is fine, its side file is not.

// MatMul with w [4, 2] float (32 bytes) stored at `location`, `offset`, `length`.
onnx::ModelProto ExternalModel(const std::string& location, const std::string& offset, const std::string& length) {
  auto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N, 4] x) => (float[N, 2] y) { y = MatMul(x, w) }
  )");
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
  return model;
}

std::vector<Diagnosis> ExternalFindings(const CheckReport& report) {
  const LayerReport* layer = FindLayer(report, "external-data");
  return layer == nullptr ? std::vector<Diagnosis>{} : layer->diagnoses;
}

TEST_F(BrokenFiles, ExternalDataTheIntactModelPasses) {
  dir_.Write("weights.bin", std::string(32, '\0'));
  const auto report = Check(dir_.WriteModel("external.onnx", ExternalModel("weights.bin", "0", "32")));
  EXPECT_TRUE(report.Passed()) << Codes(report);
  ASSERT_NE(FindLayer(report, "external-data"), nullptr);
  EXPECT_EQ(FindLayer(report, "external-data")->state, LayerReport::State::kPassed);
}

TEST_F(BrokenFiles, ExternalDataMissingFile) {
  const auto report = Check(dir_.WriteModel("external.onnx", ExternalModel("weights.bin", "0", "32")));
  const auto found = ExternalFindings(report);
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].code, "external-data.missing-file");
  EXPECT_EQ(found[0].location.tensor, "w");
  EXPECT_TRUE(Contains(found[0].message, "external data file 'weights.bin' (first needed by tensor 'w') is not at"));
  EXPECT_TRUE(Contains(found[0].message, (dir_.path() / "weights.bin").string()));
  EXPECT_FALSE(report.Passed());
}

TEST_F(BrokenFiles, ExternalDataOffsetOutOfRange) {
  dir_.Write("weights.bin", std::string(32, '\0'));
  const auto report = Check(dir_.WriteModel("external.onnx", ExternalModel("weights.bin", "64", "32")));
  const auto found = ExternalFindings(report);
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].code, "external-data.out-of-range");
  EXPECT_TRUE(Contains(found[0].message, "tensor 'w' reads bytes 64..96 of 'weights.bin', which has only 32 bytes"));
  EXPECT_FALSE(report.Passed());
}

TEST_F(BrokenFiles, ExternalDataHugeLengthDoesNotOverflow) {
  dir_.Write("weights.bin", std::string(32, '\0'));
  const auto report = Check(dir_.WriteModel("external.onnx", ExternalModel("weights.bin", "8", "9223372036854775807")));
  const auto found = ExternalFindings(report);
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].code, "external-data.out-of-range");
  EXPECT_TRUE(
      Contains(found[0].message, "reads bytes 8..9223372036854775815 of 'weights.bin', which has only 32 bytes"));
}

TEST_F(BrokenFiles, ExternalDataPathEscapes) {
  dir_.Write("weights.bin", std::string(32, '\0'));
  const auto report = Check(dir_.WriteModel("model/external.onnx", ExternalModel("../weights.bin", "0", "32")));
  const auto found = ExternalFindings(report);
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].code, "external-data.path-escapes");
  // An error: ONNX Runtime refuses the path, so a check that stops before the runtime must fail too.
  EXPECT_EQ(found[0].severity, Severity::kError);
  EXPECT_TRUE(
      Contains(found[0].message, "tensor 'w': the external data location '../weights.bin' climbs out with '..'"))
      << found[0].message;
  EXPECT_FALSE(report.Passed());
}

// A symbolic link inside the folder that leads out of it is outside too: the file is neither read
// nor sized (a model must not report on /etc/passwd).
TEST_F(BrokenFiles, ExternalDataSymlinkOutOfTheFolder) {
  dir_.Write("secret.bin", std::string(32, '\0'));
  const auto model = dir_.WriteModel("model/external.onnx", ExternalModel("weights.bin", "0", "32"));
  std::filesystem::create_symlink(dir_.path() / "secret.bin", dir_.path() / "model/weights.bin");
  const auto report = Check(model);
  const auto found = ExternalFindings(report);
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].code, "external-data.path-escapes");
  EXPECT_TRUE(Contains(found[0].message, "leads through a symbolic link to")) << found[0].message;
  EXPECT_FALSE(report.Passed());
  // A link that stays inside the folder is fine.
  std::filesystem::create_directories(dir_.path() / "inside");
  dir_.Write("inside/data.bin", std::string(32, '\0'));
  const auto inside = dir_.WriteModel("inside/external.onnx", ExternalModel("weights.bin", "0", "32"));
  std::filesystem::create_symlink(dir_.path() / "inside/data.bin", dir_.path() / "inside/weights.bin");
  EXPECT_TRUE(ExternalFindings(Check(inside)).empty()) << Codes(Check(inside));
}

TEST_F(BrokenFiles, ExternalDataSizeMismatch) {
  dir_.Write("weights.bin", std::string(32, '\0'));
  const auto report = Check(dir_.WriteModel("external.onnx", ExternalModel("weights.bin", "0", "16")));
  const auto found = ExternalFindings(report);
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].code, "external-data.size-mismatch");
  EXPECT_TRUE(
      Contains(found[0].message, "tensor 'w' has 8 elements of 4 bytes (32 bytes) but its external data length is 16"));
  EXPECT_FALSE(report.Passed());
}

TEST_F(BrokenFiles, ExternalDataMalformedEntry) {
  dir_.Write("weights.bin", std::string(32, '\0'));
  const auto report = Check(dir_.WriteModel("external.onnx", ExternalModel("weights.bin", "-8", "32")));
  const auto found = ExternalFindings(report);
  ASSERT_EQ(found.size(), 1u) << Codes(report);
  EXPECT_EQ(found[0].code, "external-data.bad-location");
  EXPECT_EQ(found[0].location.tensor, "w");
  EXPECT_TRUE(Contains(found[0].message, "tensor 'w'"));
  EXPECT_TRUE(Contains(found[0].message, "offset or length that is not a non-negative integer"));
}

}  // namespace
}  // namespace ortkit
