#include "ortkit/model/export_record.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "json_schema.h"
#include "test_models.h"

// export.json is written by the Python companion (python/ortkit_export/record.py) and read by ReadExportRecord;
// docs/schema/export.schema.json stands between them. tests/python/test_export.py holds what the companion
// writes to the schema; these tests hold the reader to it: the examples below are valid records, the reader
// takes every field it reads from them as written, and the names it reads are the schema's.

namespace ortkit {
namespace {

// A finished `ortkit export hf --exporter torchscript` whose framework failed on data set 1, with an exporter
// warning about the user's code, one about the framework's internals and a finding of the companion's own.
constexpr const char* kFinishedRecord = R"json({
  "format_version": 1, "created_by": "ortkit_export 0.1.0", "framework": "torch",
  "framework_version": "2.15.0", "exporter": "torch.onnx.export (TorchScript)", "exporter_version": "2.15.0",
  "onnx_version": "1.23.2", "python_version": "3.11.2", "opset": 17,
  "inputs": [{"name": "input_ids", "dtype": "int64", "shape": [2, 16]},
             {"name": "attention_mask", "dtype": "int64", "shape": [2, 16]}],
  "dynamic_axes": {"input_ids": {"0": "batch", "1": "seq_len"}},
  "command": ["/opt/ortkit/python/ortkit_export/__main__.py", "hf", "ckpt", "--out", "out"],
  "exporter_kind": "torchscript", "opset_requested": 17, "module": "/work/ckpt", "module_was_training": true,
  "training": false, "eval_enforced": true, "constant_folding": true,
  "hf": {"checkpoint": "/work/ckpt", "task": "text-generation-with-past", "part": null, "model_type": "gpt2",
         "architecture": "GPT2LMHeadModel", "transformers_version": "5.24.0", "route": "ortkit wrapper"},
  "dim_limits": {"seq_len": 64, "past_len": 64}, "dim_sums": {"total_len": ["past_len", "seq_len"]},
  "external_data": false,
  "second_data_set_error": "RuntimeError at {'input_ids': [3, 24]}: shape '[2, 16]' is invalid",
  "output_dynamic_axes": {"logits": {"0": "batch"}},
  "warnings": [
    {"category": "TracerWarning", "message": "Converting a tensor to a Python boolean might cause the trace to be incorrect",
     "file": "/work/model.py", "line": 12, "source": "if x.sum() > 0:", "code": "export.traced-branch"},
    {"category": "DeprecationWarning", "message": "You are using the legacy TorchScript-based ONNX export",
     "file": "/venv/site-packages/torch/onnx/__init__.py", "line": 281, "source": "", "code": null},
    {"category": "", "code": "export.dim-specialized", "file": "/work/model.py", "line": 3, "source": "",
     "message": "input 'input_ids' axis 1 was asked to be dynamic ('seq_len') but the exported graph fixes it to 16",
     "fix": "keep sizes as tensors", "input": "input_ids", "axis": 1, "value": 16}],
  "data_sets": [{"folder": "test_data_set_0", "inputs": {"input_ids": {"dtype": "int64", "shape": [2, 16]}},
                 "outputs": {"logits": {"dtype": "float32", "shape": [2, 16, 100]}}}],
  "inputs_dropped": ["attention_mask"], "onnx_checker": "passed",
  "outputs": [{"name": "logits", "dtype": "float32", "shape": [2, 16, 100]}]
})json";

// A PyTorch export in training mode that failed once the record was begun: no results, the error.
constexpr const char* kFailedRecord = R"json({
  "format_version": 1, "created_by": "ortkit_export 0.1.0", "framework": "torch",
  "framework_version": "2.15.0", "exporter": "torch.onnx.export (torch.export)", "exporter_version": "2.15.0",
  "onnx_version": "1.23.2", "python_version": "3.11.2", "opset": 18,
  "inputs": [{"name": "x", "dtype": "float32", "shape": [2, 8]}], "dynamic_axes": {}, "command": null,
  "exporter_kind": "dynamo", "opset_requested": 18, "module": null, "module_was_training": true,
  "training": true, "eval_enforced": false, "constant_folding": true, "external_data": false,
  "error": {"code": "export.unsupported-operator", "message": "PyTorch's exporter has no ONNX translation for aten::foo",
            "fix": "replace aten::foo", "location": {"file": "/home/me/model.py", "line": 12, "source": "y = foo(x)"}}
})json";

// What ReadExportRecord takes from export.json, by the schema object it is in: "" the record itself, then
// $defs/warning and $defs/error.
const std::map<std::string, std::set<std::string>> kRead = {
    {"",
     {"framework", "framework_version", "exporter", "exporter_version", "opset", "training", "eval_enforced",
      "module_was_training", "inputs_dropped", "second_data_set_error", "dim_limits", "dim_sums", "warnings", "error"}},
    {"warning", {"category", "message", "file", "line", "source", "code", "fix", "input"}},
    {"error", {"code", "message", "fix", "location"}},
};

// Every other property the schema lists: written for people and other tools. ortkit reads the model's inputs,
// outputs, dimensions and opset from model.onnx itself, and the references from test_data_set_K.
const std::map<std::string, std::set<std::string>> kNotRead = {
    {"",
     {"format_version", "created_by", "onnx_version", "python_version", "inputs", "dynamic_axes", "command",
      "exporter_kind", "opset_requested", "module", "constant_folding", "hf", "external_data", "output_dynamic_axes",
      "data_sets", "onnx_checker", "outputs"}},
    {"warning", {"axis", "value"}},
    {"error", {}},
};

nlohmann::json ReadJson(const std::string& relative) {
  std::ifstream in(testing::SourcePath(relative));
  EXPECT_TRUE(in.good()) << relative << " is missing";
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

const nlohmann::json& Section(const nlohmann::json& schema, const std::string& name) {
  return name.empty() ? schema : schema["$defs"][name];
}

std::vector<nlohmann::json> Examples() {
  return {nlohmann::json::parse(kFinishedRecord), nlohmann::json::parse(kFailedRecord)};
}

// The record as ReadExportRecord understood it, under export.json's names.
nlohmann::json AsRead(const nlohmann::json& written) {
  testing::TempDir dir;
  auto record = ReadExportRecord(dir.Write("export.json", written.dump()));
  EXPECT_TRUE(record.ok()) << record.error().message;
  if (!record.ok()) return nullptr;
  nlohmann::json json = {{"framework", record->framework},
                         {"framework_version", record->framework_version},
                         {"exporter", record->exporter},
                         {"exporter_version", record->exporter_version},
                         {"opset", record->opset},
                         {"training", record->training},
                         {"eval_enforced", record->eval_enforced},
                         {"module_was_training", record->module_was_training},
                         {"inputs_dropped", record->inputs_dropped},
                         {"second_data_set_error", record->second_data_set_error},
                         {"dim_limits", record->dim_limits},
                         {"dim_sums", record->dim_sums},
                         {"warnings", nlohmann::json::array()}};
  for (const auto& w : record->warnings) {
    json["warnings"].push_back({{"category", w.category},
                                {"message", w.message},
                                {"file", w.file},
                                {"line", w.line},
                                {"source", w.source},
                                {"code", w.code.empty() ? nlohmann::json() : nlohmann::json(w.code)},
                                {"fix", w.fix},
                                {"input", w.input}});
  }
  if (record->error)
    json["error"] = {{"code", record->error->code}, {"message", record->error->message}, {"fix", record->error->fix}};
  if (record->error_line) {
    json["error"]["location"] = {
        {"file", record->error_line->file}, {"line", record->error_line->line}, {"source", record->error_line->source}};
  }
  return json;
}

TEST(ExportRecordSchema, TheExamplesAreValidRecords) {
  const nlohmann::json schema = ReadJson("docs/schema/export.schema.json");
  ASSERT_FALSE(schema.is_discarded()) << "the schema is not valid JSON";
  EXPECT_EQ(testing::SchemaKeywordsUnchecked(schema), std::set<std::string>{});
  for (const auto& example : Examples()) {
    const auto errors = testing::SchemaErrors(example, schema);
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  }
  // The check itself notices what the schema refuses.
  nlohmann::json unknown = Examples()[0];
  unknown["opset_version"] = 17;
  EXPECT_FALSE(testing::SchemaErrors(unknown, schema).empty());
  nlohmann::json unfinished = Examples()[0];
  unfinished.erase("outputs");
  EXPECT_FALSE(testing::SchemaErrors(unfinished, schema).empty());
  nlohmann::json tensorflow = Examples()[1];
  tensorflow["framework"] = "tensorflow";  // with PyTorch's fields
  EXPECT_FALSE(testing::SchemaErrors(tensorflow, schema).empty());
}

TEST(ExportRecordSchema, EveryPropertyIsReadOrListedAsNotRead) {
  const nlohmann::json schema = ReadJson("docs/schema/export.schema.json");
  ASSERT_FALSE(schema.is_discarded());
  for (const auto& [name, read] : kRead) {
    const nlohmann::json& section = Section(schema, name);
    std::set<std::string> properties;
    for (const auto& property : section["properties"].items()) properties.insert(property.key());
    std::set<std::string> listed = read;
    for (const auto& key : kNotRead.at(name)) {
      EXPECT_EQ(read.count(key), 0u) << key << " is listed as read and as not read";
      listed.insert(key);
    }
    EXPECT_EQ(listed, properties) << "$defs/" << name << ": a property the schema gained or lost";
    for (const std::string key : section.value("required", nlohmann::json::array()))
      EXPECT_EQ(listed.count(key), 1u) << "required '" << key << "' is neither read nor listed as not read";
  }
}

TEST(ExportRecordSchema, TheReaderTakesEachFieldItReadsAsWritten) {
  for (const auto& example : Examples()) {
    const nlohmann::json read = AsRead(example);
    ASSERT_TRUE(read.is_object());
    for (const auto& key : kRead.at("")) {
      if (!example.contains(key) || key == "warnings") continue;
      EXPECT_EQ(read[key], example[key]) << key;
    }
    const auto warnings = example.value("warnings", nlohmann::json::array());
    ASSERT_EQ(read["warnings"].size(), warnings.size());
    for (std::size_t i = 0; i < warnings.size(); ++i) {
      for (const auto& key : kRead.at("warning")) {
        if (!warnings[i].contains(key)) continue;
        EXPECT_EQ(read["warnings"][i][key], warnings[i][key]) << "warning " << i << ": " << key;
      }
    }
  }
  // Every field the reader reads has a value in some example that is not the reader's default.
  for (const auto& key : kRead.at("")) {
    bool read_somewhere = false;
    for (const auto& example : Examples()) {
      if (!example.contains(key)) continue;
      nlohmann::json without = example;
      without.erase(key);
      read_somewhere = read_somewhere || AsRead(without) != AsRead(example);
    }
    EXPECT_TRUE(read_somewhere) << "the reader does not read '" << key << "' under that name";
  }
}

TEST(ExportRecordSchema, TheReaderReadsWarningsAndTheErrorUnderTheSchemasNames) {
  for (const auto& [name, array] : {std::pair{"warning", "warnings"}, std::pair{"error", "error"}}) {
    for (const auto& key : kRead.at(name)) {
      bool read_somewhere = false;
      for (const auto& example : Examples()) {
        if (!example.contains(array)) continue;
        const nlohmann::json as_read = AsRead(example);
        const std::size_t count = example[array].is_array() ? example[array].size() : 1;
        for (std::size_t i = 0; i < count; ++i) {
          nlohmann::json without = example;
          nlohmann::json& object = without[array].is_array() ? without[array][i] : without[array];
          if (!object.contains(key)) continue;
          object.erase(key);
          read_somewhere = read_somewhere || AsRead(without) != as_read;
        }
      }
      EXPECT_TRUE(read_somewhere) << "the reader does not read " << name << " '" << key << "' under that name";
    }
  }
}

// The reader asks for each key by name: Field<T>(json, "key", ...) for the record, Field<T>(w, ...) for a
// warning, Field<T>(*it, ...) for the error, json.find("key") for the objects it walks. A key asked for that
// kRead does not list (and so the schema may not name) fails here, before a companion that never writes it
// leaves the field at its default unnoticed.
TEST(ExportRecordSchema, TheReaderAsksOnlyForWhatTheSchemaNames) {
  const std::string source = testing::ReadFile(testing::SourcePath("src/ortkit/model/export_record.cpp"));
  ASSERT_FALSE(source.empty()) << "src/ortkit/model/export_record.cpp is missing";
  const std::map<std::string, std::string> sections = {{"json", ""}, {"w", "warning"}, {"*it", "error"}};
  std::map<std::string, std::set<std::string>> asked;
  const std::regex field(R"re(Field<.*?>\((json|w|\*it), "(\w+)")re");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), field); it != std::sregex_iterator(); ++it)
    asked[sections.at((*it)[1].str())].insert((*it)[2].str());
  const std::regex find(R"re(json\.find\("(\w+)"\))re");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), find); it != std::sregex_iterator(); ++it)
    asked[""].insert((*it)[1].str());
  const std::regex error_object(R"re(it->find\("(\w+)"\))re");  // objects inside the error (its location)
  for (auto it = std::sregex_iterator(source.begin(), source.end(), error_object); it != std::sregex_iterator(); ++it)
    asked["error"].insert((*it)[1].str());
  ASSERT_GE(asked[""].size(), 10u) << "the reader no longer asks for keys as Field<T>(json, \"key\", ...): "
                                      "update this test to how it reads them";
  EXPECT_EQ(asked, kRead);
}

TEST(ExportRecord, AFailureIsLocatedAtTheUsersLine) {
  testing::TempDir dir;
  const auto path = dir.path() / "export.json";
  std::ofstream(path) << kFailedRecord;
  auto record = ReadExportRecord(path);
  ASSERT_TRUE(record.ok()) << record.error().message;
  ASSERT_TRUE(record->error.has_value());
  EXPECT_EQ(record->error->location.file, "/home/me/model.py:12");
  ASSERT_TRUE(record->error_line.has_value());
  EXPECT_EQ(record->error_line->source, "y = foo(x)");
}

}  // namespace
}  // namespace ortkit
