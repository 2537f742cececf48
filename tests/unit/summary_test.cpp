#include "ortkit/model/summary.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_models.h"

namespace ortkit {
namespace {

// A ModelFile around `model`, as LoadModelFile would produce it from memory.
ModelFile InMemory(const onnx::ModelProto& model) {
  ModelFile file;
  file.proto = std::make_unique<onnx::ModelProto>(model);
  file.size_bytes = model.ByteSizeLong();
  return file;
}

ModelSummary SummarizeText(std::string_view text) { return Summarize(InMemory(testing::ParseModelText(text))); }

onnx::TensorProto* AddInitializer(onnx::GraphProto* graph, const std::string& name, int data_type,
                                  std::vector<std::int64_t> dims, std::size_t raw_bytes) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(data_type);
  for (auto d : dims) tensor->add_dims(d);
  tensor->set_raw_data(std::string(raw_bytes, '\0'));
  return tensor;
}

TEST(Summarize, DescribesFixedSymbolicAndUnknownDimensions) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 3, ?] x, int64 y, bool flag) => (float[batch, 3, ?] z) { z = Relu(x) }
  )");
  // Set explicitly: the text parser's spelling of "no shape" and "scalar" differs between ONNX versions.
  model.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  model.mutable_graph()->mutable_input(2)->mutable_type()->mutable_tensor_type()->mutable_shape()->clear_dim();
  const ModelSummary s = Summarize(InMemory(model));
  ASSERT_EQ(s.inputs.size(), 3u);
  const TypeSummary& x = s.inputs[0].type;
  EXPECT_EQ(x.kind, TypeSummary::Kind::kTensor);
  EXPECT_EQ(x.element_type, "float32");
  ASSERT_TRUE(x.has_shape);
  ASSERT_EQ(x.shape.size(), 3u);
  EXPECT_EQ(x.shape[0].kind, DimensionSummary::Kind::kSymbolic);
  EXPECT_EQ(x.shape[0].symbol, "batch");
  EXPECT_EQ(x.shape[1].kind, DimensionSummary::Kind::kFixed);
  EXPECT_EQ(x.shape[1].value, 3);
  EXPECT_EQ(x.shape[2].kind, DimensionSummary::Kind::kUnknown);
  EXPECT_EQ(x.ToString(), "float32[batch,3,?]");
  EXPECT_FALSE(s.inputs[1].type.has_shape);
  EXPECT_EQ(s.inputs[1].type.ToString(), "int64[...]");
  EXPECT_EQ(s.inputs[2].type.ToString(), "bool[]");

  nlohmann::json json = s;
  EXPECT_EQ(json["inputs"][0]["type"]["shape"], nlohmann::json::parse(R"(["batch", 3, null])"));
  EXPECT_TRUE(json["inputs"][1]["type"]["shape"].is_null());
  EXPECT_EQ(json["inputs"][2]["type"]["shape"], nlohmann::json::array());
}

TEST(Summarize, DescribesSequenceMapAndOptionalTypes) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N] x) => (float[N] y) { y = Identity(x) }
  )");
  auto* input = model.mutable_graph()->add_input();
  input->set_name("scores");
  auto* map = input->mutable_type()
                  ->mutable_optional_type()
                  ->mutable_elem_type()
                  ->mutable_sequence_type()
                  ->mutable_elem_type()
                  ->mutable_map_type();
  map->set_key_type(onnx::TensorProto::INT64);
  auto* value = map->mutable_value_type()->mutable_tensor_type();
  value->set_elem_type(onnx::TensorProto::FLOAT);
  value->mutable_shape();  // a scalar
  const ModelSummary s = Summarize(InMemory(model));
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[1].type.kind, TypeSummary::Kind::kOptional);
  EXPECT_EQ(s.inputs[1].type.ToString(), "optional(seq(map(int64, float32[])))");
  nlohmann::json json = s.inputs[1].type;
  EXPECT_EQ(json["kind"], "optional");
  EXPECT_EQ(json["element"]["kind"], "sequence");
  EXPECT_EQ(json["element"]["element"]["kind"], "map");
  EXPECT_EQ(json["element"]["element"]["key_type"], "int64");
  EXPECT_EQ(json["element"]["element"]["value"]["element_type"], "float32");
}

TEST(Summarize, ExcludesInitializersListedAsInputs) {
  const ModelSummary s = SummarizeText(R"(
    <ir_version: 3, opset_import: ["" : 9]>
    agraph (float[2] x, float[2] w, float[2] b) => (float[2] y)
      <float[2] w = {1.0, 2.0}, float[2] b = {0.5, 0.5}>
    { t = Mul(x, w)  y = Add(t, b) }
  )");
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].name, "x");
  EXPECT_EQ(s.initializer_inputs, 2u);
  EXPECT_EQ(s.initializer_count, 2u);
  EXPECT_EQ(s.initializer_bytes, 16u);
}

TEST(Summarize, TotalsInitializerBytesByElementType) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N] x) => (float[N] y) { y = Identity(x) }
  )");
  auto* graph = model.mutable_graph();
  AddInitializer(graph, "f1", onnx::TensorProto::FLOAT, {10, 10}, 400);
  AddInitializer(graph, "f2", onnx::TensorProto::FLOAT, {5}, 20);
  AddInitializer(graph, "i64", onnx::TensorProto::INT64, {3}, 24);
  AddInitializer(graph, "h", onnx::TensorProto::FLOAT16, {7, 2}, 28);
  auto* text = graph->add_initializer();
  text->set_name("labels");
  text->set_data_type(onnx::TensorProto::STRING);
  text->add_dims(2);
  text->add_string_data("cat");
  text->add_string_data("horse");
  const ModelSummary s = Summarize(InMemory(model));
  EXPECT_EQ(s.initializer_count, 5u);
  EXPECT_EQ(s.initializer_bytes, 400u + 20 + 24 + 28 + 8);
  ASSERT_EQ(s.initializer_totals.size(), 4u);
  EXPECT_EQ(s.initializer_totals[0].element_type, "float32");
  EXPECT_EQ(s.initializer_totals[0].count, 2u);
  EXPECT_EQ(s.initializer_totals[0].bytes, 420u);
  EXPECT_EQ(s.initializer_totals[1].element_type, "float16");
  EXPECT_EQ(s.initializer_totals[1].bytes, 28u);
  EXPECT_EQ(s.initializer_totals[2].element_type, "int64");
  EXPECT_EQ(s.initializer_totals[2].bytes, 24u);
  EXPECT_EQ(s.initializer_totals[3].element_type, "string");
  EXPECT_EQ(s.initializer_totals[3].bytes, 8u);
}

TEST(Summarize, KeepsTheTenLargestInitializersLargestFirst) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N] x) => (float[N] y) { y = Identity(x) }
  )");
  // 15 tensors of 1..15 floats, added in a scrambled order; two of equal size to pin the tie-break.
  for (int n : {7, 3, 15, 1, 12, 9, 4, 14, 2, 11, 6, 13, 5, 10, 8}) {
    AddInitializer(model.mutable_graph(), "w" + std::to_string(n), onnx::TensorProto::FLOAT, {n},
                   static_cast<std::size_t>(n) * 4);
  }
  AddInitializer(model.mutable_graph(), "a_tie", onnx::TensorProto::INT32, {13}, 52);
  const ModelSummary s = Summarize(InMemory(model));
  ASSERT_EQ(s.largest_initializers.size(), ModelSummary::kLargestInitializers);
  std::vector<std::string> names;
  for (const auto& i : s.largest_initializers) names.push_back(i.name);
  EXPECT_EQ(names, (std::vector<std::string>{"w15", "w14", "a_tie", "w13", "w12", "w11", "w10", "w9", "w8", "w7"}));
  EXPECT_EQ(s.largest_initializers[0].bytes, 60u);
  EXPECT_EQ(s.largest_initializers[0].shape, (std::vector<std::int64_t>{15}));
  EXPECT_EQ(s.largest_initializers[2].element_type, "int32");
  EXPECT_EQ(s.initializer_count, 16u);
}

TEST(Summarize, CountsOperatorsByDomainIncludingCustomOnes) {
  const ModelSummary s = SummarizeText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1, "com.microsoft" : 1]>
    agraph (float[N] x) => (float[N] y) {
      a = Relu(x)
      b = Relu(a)
      c = Add(a, b)
      d = com.example.Scale(c)
      e = com.example.Scale(d)
      f = com.example.Shift(e)
      y = com.microsoft.Gelu(f)
    }
  )");
  EXPECT_EQ(s.node_count, 7u);
  ASSERT_EQ(s.operators.size(), 3u);
  EXPECT_EQ(s.operators.at("ai.onnx"), (std::map<std::string, std::uint64_t>{{"Add", 1}, {"Relu", 2}}));
  EXPECT_EQ(s.operators.at("com.example"), (std::map<std::string, std::uint64_t>{{"Scale", 2}, {"Shift", 1}}));
  EXPECT_EQ(s.operators.at("com.microsoft").at("Gelu"), 1u);
  ASSERT_EQ(s.opsets.size(), 3u);
  EXPECT_EQ(s.opsets[0].domain, "ai.onnx");
  EXPECT_EQ(s.opsets[0].version, 17);
  EXPECT_EQ(s.opsets[1].domain, "com.example");
  nlohmann::json json = s;
  EXPECT_EQ(json["operators"]["com.example"]["Scale"], 2);
}

TEST(Summarize, CountsSubgraphNodesSeparately) {
  const ModelSummary s = SummarizeText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (bool cond, float[N] x) => (float[N] y) {
      t = Relu(x)
      y = If(cond) <
        then_branch = then_graph () => (float[N] a) { p = Neg(t)  a = Abs(p) },
        else_branch = else_graph () => (float[N] b) { b = Sigmoid(t) }
      >
    }
  )");
  EXPECT_EQ(s.node_count, 2u);
  EXPECT_EQ(s.operators.at("ai.onnx").count("Neg"), 0u) << "subgraph nodes belong to the subgraph counts";
  ASSERT_EQ(s.subgraphs.size(), 2u);
  EXPECT_EQ(s.subgraph_nodes, 3u);
  std::map<std::string, std::uint64_t> by_path;
  for (const auto& g : s.subgraphs) by_path[g.path] = g.nodes;
  EXPECT_EQ(by_path, (std::map<std::string, std::uint64_t>{{"#1 If/then_branch", 2}, {"#1 If/else_branch", 1}}));
}

TEST(Summarize, ListsModelLocalFunctions) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    agraph (float[N] x) => (float[N] y) { y = local.Swish(x) }
  )");
  auto* function = model.add_functions();
  function->set_name("Swish");
  function->set_domain("local");
  function->add_input("x");
  function->add_output("y");
  auto* sigmoid = function->add_node();
  sigmoid->set_op_type("Sigmoid");
  sigmoid->add_input("x");
  sigmoid->add_output("s");
  auto* mul = function->add_node();
  mul->set_op_type("Mul");
  mul->add_input("x");
  mul->add_input("s");
  mul->add_output("y");
  const ModelSummary s = Summarize(InMemory(model));
  ASSERT_EQ(s.functions.size(), 1u);
  EXPECT_EQ(s.functions[0].name, "Swish");
  EXPECT_EQ(s.functions[0].domain, "local");
  EXPECT_EQ(s.functions[0].nodes, 2u);
  EXPECT_EQ(s.operators.at("local").at("Swish"), 1u);
}

TEST(RecogniseProducer, KnowsTheCommonExporters) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pytorch", "pytorch"},
      {"PyTorch", "pytorch"},
      {"tf2onnx", "tf2onnx"},
      {"keras2onnx", "keras2onnx"},
      {"PaddlePaddle", "paddle2onnx"},
      {"skl2onnx", "skl2onnx"},
      {"OnnxMLTools", "onnxmltools"},
      {"spox", "spox"},
      {"onnxscript", "onnxscript"},
      {"backend-test", "onnx.helper"},
      {"onnxruntime.transformers", "onnxruntime"},
      {"onnx.quantize", "onnxruntime"},
  };
  for (const auto& [producer, family] : cases) {
    const ProducerFamily* found = RecogniseProducer(producer);
    ASSERT_NE(found, nullptr) << producer;
    EXPECT_EQ(found->family, family) << producer;
  }
  EXPECT_EQ(RecogniseProducer("OpenVINO"), nullptr);
  EXPECT_EQ(RecogniseProducer(""), nullptr);
  EXPECT_EQ(RecogniseProducer("pytorch-fork"), nullptr);
}

TEST(Summarize, ReportsProducerMetadataAndNewerVersions) {
  const ModelSummary s = SummarizeText(R"(
    <ir_version: 99, opset_import: ["" : 42], producer_name: "OpenVINO", producer_version: "2024.1",
     domain: "org.example", model_version: 7, doc_string: "A model from the future",
     metadata_props: ["license" : "MIT", "author" : "someone"]>
    agraph (float[N] x) => (float[N] y) { y = FutureOp(x) }
  )");
  EXPECT_EQ(s.ir_version, 99);
  EXPECT_EQ(s.producer_name, "OpenVINO");
  EXPECT_EQ(s.producer_version, "2024.1");
  EXPECT_EQ(s.producer_family, "unknown");
  EXPECT_EQ(s.domain, "org.example");
  EXPECT_EQ(s.model_version, 7);
  EXPECT_EQ(s.doc_string, "A model from the future");
  ASSERT_EQ(s.metadata.size(), 2u);
  EXPECT_EQ(s.metadata[0], (std::pair<std::string, std::string>{"license", "MIT"}));
  EXPECT_EQ(s.opsets[0].version, 42);
  EXPECT_EQ(s.operators.at("ai.onnx").at("FutureOp"), 1u);
}

TEST(Summarize, ListsExternalDataFiles) {
  testing::TempDir dir;
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[4] x) => (float[4] y) { t = Add(x, w1)  y = Add(t, w2) }
  )");
  auto add_external = [&](const std::string& name, const std::string& location, int offset, int length) {
    auto* tensor = model.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    tensor->add_dims(4);
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add_entry = [&](const std::string& key, const std::string& value) {
      auto* entry = tensor->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add_entry("location", location);
    add_entry("offset", std::to_string(offset));
    if (length >= 0) add_entry("length", std::to_string(length));
  };
  add_external("w1", "weights.bin", 0, 16);
  add_external("w2", "weights.bin", 16, -1);  // no length: its declared size (16 bytes) counts
  add_external("w3", "absent.bin", 0, 16);
  dir.Write("weights.bin", std::string(40, '\x01'));
  ModelLoad load = LoadModelFile(dir.WriteModel("model.onnx", model));
  ASSERT_NE(load.model, nullptr);
  const ModelSummary s = Summarize(*load.model);
  ASSERT_EQ(s.external_files.size(), 2u);
  EXPECT_EQ(s.external_files[0].location, "weights.bin");
  EXPECT_EQ(s.external_files[0].tensors, 2u);
  EXPECT_EQ(s.external_files[0].bytes, 32u);
  ASSERT_TRUE(s.external_files[0].file_bytes.has_value());
  EXPECT_EQ(*s.external_files[0].file_bytes, 40u);
  EXPECT_EQ(s.external_files[1].location, "absent.bin");
  EXPECT_FALSE(s.external_files[1].file_bytes.has_value());
  EXPECT_EQ(s.initializer_bytes, 48u) << "external tensors count by their declared shape";
  EXPECT_TRUE(s.largest_initializers[0].external);
  nlohmann::json json = s;
  EXPECT_TRUE(json["external_data"][1]["file_bytes"].is_null());
}

TEST(Summarize, CountsSparseInitializers) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[N] x) => (float[N] y) { y = Identity(x) }
  )");
  auto* sparse = model.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(100);
  sparse->add_dims(100);
  auto* values = sparse->mutable_values();
  values->set_name("embedding");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(3);
  values->set_raw_data(std::string(12, '\0'));
  auto* indices = sparse->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(3);
  indices->set_raw_data(std::string(24, '\0'));
  const ModelSummary s = Summarize(InMemory(model));
  ASSERT_EQ(s.sparse_initializers.size(), 1u);
  EXPECT_EQ(s.sparse_initializers[0].name, "embedding");
  EXPECT_EQ(s.sparse_initializers[0].shape, (std::vector<std::int64_t>{100, 100}));
  EXPECT_EQ(s.sparse_initializers[0].nonzero, 3u);
  EXPECT_EQ(s.sparse_initializers[0].bytes, 36u);
}

// A small subset of JSON Schema (type, enum, const, required, properties, additionalProperties,
// items, $ref into $defs, oneOf): enough to hold the output to every key the schema requires.
void Validate(const nlohmann::json& value, const nlohmann::json& schema, const nlohmann::json& root,
              const std::string& where, std::vector<std::string>* errors) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    if (ref.rfind("#/$defs/", 0) != 0 || !root["$defs"].contains(ref.substr(8))) {
      errors->push_back(where + ": unresolvable $ref " + ref);
      return;
    }
    Validate(value, root["$defs"][ref.substr(8)], root, where, errors);
  }
  if (schema.contains("oneOf")) {
    int matches = 0;
    for (const auto& alternative : schema["oneOf"]) {
      std::vector<std::string> ignored;
      Validate(value, alternative, root, where, &ignored);
      matches += ignored.empty() ? 1 : 0;
    }
    if (matches != 1)
      errors->push_back(where + ": matches " + std::to_string(matches) + " oneOf alternatives: " + value.dump());
  }
  if (schema.contains("type")) {
    const auto types = schema["type"].is_array() ? schema["type"] : nlohmann::json::array({schema["type"]});
    bool matched = false;
    for (const std::string type : types) {
      matched = matched || (type == "object" && value.is_object()) || (type == "array" && value.is_array()) ||
                (type == "string" && value.is_string()) || (type == "integer" && value.is_number_integer()) ||
                (type == "number" && value.is_number()) || (type == "boolean" && value.is_boolean()) ||
                (type == "null" && value.is_null());
    }
    if (!matched) errors->push_back(where + " is " + value.dump() + ", schema type " + schema["type"].dump());
  }
  if (schema.contains("enum")) {
    const auto& allowed = schema["enum"];
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
      errors->push_back(where + " = " + value.dump() + " is not in the enum");
  }
  if (schema.contains("const") && schema["const"] != value)
    errors->push_back(where + " = " + value.dump() + " is not the const");
  if (value.is_object()) {
    for (const std::string key : schema.value("required", nlohmann::json::array())) {
      if (!value.contains(key)) errors->push_back(where + " lacks required key '" + key + "'");
    }
    const auto properties = schema.value("properties", nlohmann::json::object());
    for (const auto& [key, child] : value.items()) {
      if (properties.contains(key)) {
        Validate(child, properties[key], root, where + "." + key, errors);
      } else if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
        Validate(child, schema["additionalProperties"], root, where + "." + key, errors);
      }
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i)
      Validate(value[i], schema["items"], root, where + "[" + std::to_string(i) + "]", errors);
  }
}

void ExpectMatchesSchema(const nlohmann::json& value, const nlohmann::json& schema) {
  std::vector<std::string> errors;
  Validate(value, schema, schema, "$", &errors);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_TRUE(errors.empty()) << all;
}

nlohmann::json ReadSchema() {
  std::ifstream in(testing::SourcePath("docs/schema/inspect.schema.json"));
  EXPECT_TRUE(in.good()) << "docs/schema/inspect.schema.json is missing";
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

TEST(InspectSchema, RealModelHasEveryRequiredKey) {
  const std::filesystem::path path =
      "/usr/share/libonnx-testdata/data/pytorch-converted/test_ConvTranspose2d/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not installed";
  const nlohmann::json schema = ReadSchema();
  ASSERT_FALSE(schema.is_discarded()) << "the schema is not valid JSON";
  ASSERT_TRUE(schema.contains("required"));
  ModelLoad load = LoadModelFile(path);
  ASSERT_NE(load.model, nullptr);
  const nlohmann::json json = Summarize(*load.model);
  ExpectMatchesSchema(json, schema);
}

TEST(InspectSchema, RichFixtureHasEveryRequiredKey) {
  const nlohmann::json schema = ReadSchema();
  ASSERT_FALSE(schema.is_discarded());
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1], producer_name: "pytorch",
     metadata_props: ["k" : "v"]>
    agraph (bool cond, float[N, 4] x) => (float[N, 4] y) <float[4] w = {1.0, 2.0, 3.0, 4.0}> {
      t = Add(x, w)
      u = com.example.Op(t)
      y = If(cond) < then_branch = g1 () => (float[N, 4] a) { a = Relu(u) },
                     else_branch = g2 () => (float[N, 4] b) { b = Neg(u) } >
    }
  )");
  auto* seq = model.mutable_graph()->add_output();
  seq->set_name("pieces");
  seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  auto* function = model.add_functions();
  function->set_name("Op");
  function->set_domain("com.example");
  auto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name("ext");
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(1);
  tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = tensor->add_external_data();
  entry->set_key("location");
  entry->set_value("missing.bin");
  auto* bad = model.mutable_graph()->add_initializer();  // an unreadable entry becomes a note
  bad->set_name("bad");
  bad->set_data_type(onnx::TensorProto::FLOAT);
  bad->set_data_location(onnx::TensorProto::EXTERNAL);
  const ModelSummary s = Summarize(InMemory(model));
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].code, "external-data.bad-location");
  const nlohmann::json json = s;
  ExpectMatchesSchema(json, schema);

  nlohmann::json broken = json;  // the check itself must notice what is missing
  broken.erase("operators");
  broken["inputs"][0]["type"].erase("kind");
  broken["external_data"][0]["file_bytes"] = "40";
  std::vector<std::string> errors;
  Validate(broken, schema, schema, "$", &errors);
  EXPECT_EQ(errors.size(), 3u);
}

}  // namespace
}  // namespace ortkit

namespace ortkit {
namespace {

// paddle2onnx keeps weights in Constant nodes and records no producer: inspect must still say how
// much the model weighs and where it most likely came from.
TEST(SummarizeWithoutProducer, CountsConstantWeightsAndGuessesTheExporter) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 7, opset_import: ["" : 13]>
    paddle (float[N, 4] x) => (float[N, 4] y) {
      w = Constant <value = float[4, 4] {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> ()
      b = Constant <value = float[4] {0, 0, 0, 0}> ()
      m = MatMul (x, w)
      y = Add (m, b)
    }
  )");
  model.mutable_graph()->set_name("Model from PaddlePaddle.");
  ModelSummary s = Summarize(InMemory(model));
  EXPECT_EQ(s.initializer_count, 0u);
  EXPECT_EQ(s.constant_count, 2u);
  EXPECT_EQ(s.constant_bytes, 80u);
  EXPECT_EQ(s.producer_guess, "paddle2onnx (graph named 'Model from PaddlePaddle.')");

  model.mutable_graph()->set_name("g");
  auto* dim =
      model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
  dim->set_dim_param("p2o.DynamicDimension.0");
  EXPECT_EQ(Summarize(InMemory(model)).producer_guess, "paddle2onnx (dimension names 'p2o.*')");
  model.set_producer_name("pytorch");
  EXPECT_EQ(Summarize(InMemory(model)).producer_guess, "");  // a recorded producer is never second-guessed
}

}  // namespace
}  // namespace ortkit
