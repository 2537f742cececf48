// The serving configuration file: defaults, every key, and errors that name the key and value.
#include <gtest/gtest.h>

#include "ortkit/serve/model_config.h"
#include "ortkit/serve/model_repository.h"
#include "test_models.h"

namespace ortkit::serve {
namespace {

TEST(ServeModelConfig, EmptyObjectGivesTheDocumentedDefaults) {
  auto c = ParseModelConfig("{}", "c.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->instances, 1);
  EXPECT_EQ(c->batching.max_batch_size, 16);
  EXPECT_EQ(c->batching.max_queue_delay_us, 500);
  EXPECT_EQ(c->batching.max_queue_size, 256);
  EXPECT_FALSE(c->bucketing.enabled);
  EXPECT_EQ(c->session.intra_op_threads, 1);
}

TEST(ServeModelConfig, ReadsEveryKeyOfTheSharedContract) {
  const char* text = R"({
    "name": "encoder", "instances": 2,
    "session": {"provider": "cpu", "intra_op_threads": 2, "inter_op_threads": 1, "execution_mode": "parallel",
                "optimization_level": 1},
    "batching": {"enabled": true, "max_batch_size": 32, "max_queue_delay_us": 250, "preferred_batch_sizes": [16, 8],
                 "max_queue_size": 10, "timeout_us": 5000, "priority_levels": 3},
    "bucketing": {"dim": "seq_len", "boundaries": [16, 32, 64], "mask_input": "attention_mask"},
    "warmup": {"dims": {"batch": [1, 8], "seq_len": [16, 128]}},
    "tuning": {"why": "written by bench --tune"}
  })";
  auto c = ParseModelConfig(text, "c.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->name, "encoder");
  EXPECT_EQ(c->instances, 2);
  EXPECT_FALSE(c->session.sequential_execution);
  EXPECT_EQ(c->ToSessionConfig().optimization_level, OptimizationLevel::kBasic);
  EXPECT_EQ(c->batching.preferred_batch_sizes, (std::vector<int>{8, 16}));
  EXPECT_EQ(c->batching.timeout_us, 5000);
  EXPECT_EQ(c->batching.priority_levels, 3);
  ASSERT_TRUE(c->bucketing.enabled);
  EXPECT_EQ(c->bucketing.BucketFor(5), 16);
  EXPECT_EQ(c->bucketing.BucketFor(17), 32);
  EXPECT_EQ(c->bucketing.BucketFor(64), 64);
  EXPECT_EQ(c->bucketing.BucketFor(100), 100);  // above the last boundary: its own bucket
  EXPECT_EQ(c->warmup.dims.at("seq_len"), (std::vector<std::int64_t>{16, 128}));
  // Round trip through the JSON the server reports.
  auto again = ParseModelConfig(ModelConfigToJson(*c), "again");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->bucketing.boundaries, c->bucketing.boundaries);
}

TEST(ServeModelConfig, MultipleOfAndNullBucketing) {
  auto c = ParseModelConfig(R"({"bucketing": {"dim": "s", "multiple_of": 16}})", "c.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->bucketing.BucketFor(1), 16);
  EXPECT_EQ(c->bucketing.BucketFor(33), 48);
  auto off = ParseModelConfig(R"({"bucketing": null})", "c.json");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->bucketing.enabled);
}

TEST(ServeModelConfig, ErrorsNameTheFileTheKeyAndTheValue) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {R"({"batching": {"max_batch_size": -3}})",
       "c.json: batching.max_batch_size (--max-batch-size): expected an integer from 0 to 65536, got -3"},
      {R"({"batching": {"max_batch_sise": 3}})", "batching.max_batch_sise: unknown key"},
      {R"({"instances": "two"})", "instances: expected an integer, got \"two\""},
      {R"({"session": {"provider": "tpu"}})", "unknown execution provider 'tpu'"},
      {R"({"session": {"execution_mode": "fast"}})", "expected \"sequential\" or \"parallel\""},
      {R"({"bucketing": {"dim": "s", "boundaries": [32, 16]}})", "strictly ascending"},
      {R"({"bucketing": {"dim": "s"}})", "exactly one of \"boundaries\""},
      {R"({"bucketing": {"dim": "s", "multiple_of": 0}})",
       "c.json: bucketing.multiple_of: expected a positive integer (lengths pad up to a multiple of it), got 0"},
      {R"({"bucketing": {"dim": "s", "multiple_of": -16}})", "bucketing.multiple_of: expected a positive integer"},
      {R"({"batching": {"max_batch_size": 4, "preferred_batch_sizes": [8]}})", "8 is larger than max_batch_size 4"},
      {R"({"batching": {"timeout_us": 9223372036854775807}})",
       "c.json: batching.timeout_us (--timeout-us): expected an integer from 0 to 3600000000, got 9223372036854775807"},
      {R"({"batching": {"timeout_us": 1e16}})", "batching.timeout_us: expected an integer, got 1e+16"},
      {R"({"batching": {"max_queue_size": 4294967296}})",
       "batching.max_queue_size (--max-queue-size): expected an integer from 1 to 1000000, got 4294967296"},
      {R"({"batching": {"max_batch_size": 0, "preferred_batch_sizes": [100000]}})",
       "batching.preferred_batch_sizes: expected sizes from 1 to 65536, got 100000"},
      {R"({"bucketing": {"dim": "s", "boundaries": [16, 4294967296]}})",
       "bucketing.boundaries: expected lengths from 1 to 2147483647, got 4294967296"},
      {R"({"warmup": {"dims": {"batch": 18446744073709551615}}})", "warmup.dims.batch: expected an integer, got"},
      {R"({"warmup": {"dims": {"batch": [4294967296]}}})",
       "warmup.dims.batch: expected sizes from 1 to 2147483647, got 4294967296"},
      {R"({"instances": 1,})", "c.json: not valid JSON"},
      {R"([1])", "expected a JSON object"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseModelConfig(c.text, "c.json");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find(c.expected), std::string::npos) << parsed.error().message;
  }
}

TEST(ServeModelRepository, ScansFoldersAndReadsTheirConfigs) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "b");
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "empty");
  dir.Write("a/model.onnx", "x");
  dir.Write("b/model.onnx", "x");
  dir.Write("b/config.json", R"({"instances": 3})");
  auto scan = ScanModelRepository(dir.path());
  ASSERT_TRUE(scan.ok()) << scan.error().message;
  const auto& sources = scan->models;
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].name, "a");
  ASSERT_TRUE(sources[1].config.ok());
  EXPECT_EQ(sources[1].config->instances, 3);
  EXPECT_EQ(sources[1].config->name, "b");
  ASSERT_EQ(sources[1].versions.size(), 1u);
  EXPECT_EQ(sources[1].versions[0].version, 1);
  EXPECT_TRUE(scan->notes.empty());
  // A configuration that does not parse stops its own model only.
  dir.Write("a/config.json", R"({"instances": 0})");
  auto bad = ScanModelRepository(dir.path());
  ASSERT_TRUE(bad.ok()) << bad.error().message;
  ASSERT_EQ(bad->models.size(), 2u);
  ASSERT_FALSE(bad->models[0].config.ok());
  EXPECT_NE(bad->models[0].config.error().message.find(
                "a/config.json: instances (--instances): expected an integer from 1 to 256, got 0"),
            std::string::npos)
      << bad->models[0].config.error().message;
  EXPECT_TRUE(bad->models[1].config.ok());
  EXPECT_FALSE(ModelFromFlag("bad name=" + (dir.path() / "a/model.onnx").string(), std::nullopt).ok());
  auto named = ModelFromFlag("enc=" + (dir.path() / "a/model.onnx").string(), std::nullopt);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->name, "enc");
}

// Triton's layout: numeric version folders, the policy choosing among them; NAME/model.onnx is version 1.
TEST(ServeModelRepository, ReadsVersionFoldersAndSelectsThemByPolicy) {
  testing::TempDir dir;
  for (const char* folder : {"m/1", "m/2", "m/10", "m/03", "m/latest", "m/4"}) {
    std::filesystem::create_directories(dir.path() / folder);
  }
  for (const char* file : {"m/1/model.onnx", "m/2/model.onnx", "m/10/model.onnx", "m/03/model.onnx",
                           "m/latest/model.onnx", "m/model.onnx"}) {
    dir.Write(file, "x");
  }
  std::vector<std::string> notes;
  auto model = ScanRepositoryModel(dir.path(), "m", &notes);
  ASSERT_TRUE(model.ok()) << model.error().message;
  std::vector<std::int64_t> versions;
  for (const auto& v : model->versions) versions.push_back(v.version);
  EXPECT_EQ(versions, (std::vector<std::int64_t>{1, 2, 10}));  // "03", "latest": not versions; 4: no model.onnx
  EXPECT_EQ(model->versions[2].model, dir.path() / "m/10/model.onnx");
  const std::string all = notes.empty() ? "" : notes[0] + "\n" + notes.back();
  ASSERT_EQ(notes.size(), 2u) << all;
  EXPECT_NE(all.find("version folder 4 holds no model.onnx"), std::string::npos) << all;
  EXPECT_NE(all.find("m/model.onnx is passed over: the model has version folders"), std::string::npos) << all;

  auto latest = SourcesOfModel(*model, {});
  ASSERT_TRUE(latest.ok()) << latest.error().message;
  ASSERT_EQ(latest->size(), 1u);
  EXPECT_EQ((*latest)[0].version, 10);
  model->config->version_policy = {VersionPolicy::Kind::kLatest, 2, {}};
  EXPECT_EQ(SourcesOfModel(*model, {})->size(), 2u);
  model->config->version_policy = {VersionPolicy::Kind::kAll, 1, {}};
  EXPECT_EQ(SourcesOfModel(*model, {})->size(), 3u);
  model->config->version_policy = {VersionPolicy::Kind::kSpecific, 1, {2, 7}};
  ASSERT_EQ(SourcesOfModel(*model, {})->size(), 1u);
  EXPECT_EQ(SourcesOfModel(*model, {}).value()[0].version, 2);
  model->config->version_policy = {VersionPolicy::Kind::kSpecific, 1, {7}};
  auto none = SourcesOfModel(*model, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "model 'm': its version_policy (specific [7]) selects none of its versions (1, 2, 10)");

  std::filesystem::remove_all(dir.path() / "m");
  std::filesystem::create_directories(dir.path() / "m");
  dir.Write("m/model.onnx", "x");  // the flat layout: version 1
  auto flat = ScanRepositoryModel(dir.path(), "m", &notes);
  ASSERT_TRUE(flat.ok());
  ASSERT_EQ(flat->versions.size(), 1u);
  EXPECT_EQ(flat->versions[0].version, 1);
  EXPECT_EQ(flat->versions[0].folder, dir.path() / "m");
  EXPECT_EQ(ScanRepositoryModel(dir.path(), "absent", &notes).error().kind, ErrorKind::kNotFound);
}

TEST(ServeModelConfig, VersionPolicyParsesAsTritonWritesIt) {
  auto latest = ParseModelConfig(R"({"version_policy": {"latest": {"num_versions": 2}}})", "c.json");
  ASSERT_TRUE(latest.ok()) << latest.error().message;
  EXPECT_EQ(latest->version_policy.Describe(), "latest 2");
  auto specific = ParseModelConfig(R"({"version_policy": {"specific": {"versions": [3, 1, 3]}}})", "c.json");
  ASSERT_TRUE(specific.ok()) << specific.error().message;
  EXPECT_EQ(specific->version_policy.Describe(), "specific [1, 3]");
  EXPECT_EQ(ParseModelConfig(R"({"version_policy": {"all": {}}})", "c.json")->version_policy.Describe(), "all");
  // What the config endpoint writes parses back, Triton's max_batch_size included.
  auto round = ParseModelConfig(ModelConfigToJson(*specific), "c.json");
  ASSERT_TRUE(round.ok()) << round.error().message;
  EXPECT_EQ(round->version_policy.Describe(), "specific [1, 3]");
  EXPECT_EQ(ParseModelConfig(R"({"max_batch_size": 4})", "c.json")->batching.max_batch_size, 4);
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {R"({"version_policy": {"latest": {"num_versions": 0}}})",
       "version_policy.latest.num_versions: expected an integer from 1 to 1024, got 0"},
      {R"({"version_policy": {"latest": {}, "all": {}}})", "give exactly one of \"latest\", \"all\" and"},
      {R"({"version_policy": {"newest": {}}})", "version_policy.newest: unknown key"},
      {R"({"version_policy": {"specific": {"versions": []}}})", "expected at least one version number"},
      {R"({"version_policy": {"specific": {"versions": [0]}}})",
       "expected an integer from 1 to 999999999999999999, got 0"},
      {R"({"version_policy": "latest"})", "version_policy: expected an object"},
      {R"({"max_batch_size": 4, "batching": {"max_batch_size": 8}})", "max_batch_size: 4 disagrees with"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseModelConfig(c.text, "c.json");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.error().message.find(c.expected), std::string::npos) << parsed.error().message;
  }
}

// A notebook's checkpoint folder or a folder named with a space used to stop the whole server.
TEST(ServeModelRepository, PassesOverHiddenAndMisnamedFoldersAndNotesModelsOutside) {
  testing::TempDir dir;
  testing::TempDir elsewhere;
  for (const char* folder : {"good", ".ipynb_checkpoints", "my model", "linked"}) {
    std::filesystem::create_directories(dir.path() / folder);
  }
  dir.Write("good/model.onnx", "x");
  dir.Write(".ipynb_checkpoints/model.onnx", "x");
  dir.Write("my model/model.onnx", "x");
  elsewhere.Write("model.onnx", "x");
  std::filesystem::create_symlink(elsewhere.path() / "model.onnx", dir.path() / "linked/model.onnx");
  auto scan = ScanModelRepository(dir.path());
  ASSERT_TRUE(scan.ok()) << scan.error().message;
  ASSERT_EQ(scan->models.size(), 2u);
  EXPECT_EQ(scan->models[0].name, "good");
  EXPECT_EQ(scan->models[1].name, "linked");
  ASSERT_EQ(scan->notes.size(), 2u);
  const std::string notes = scan->notes[0] + "\n" + scan->notes[1];
  EXPECT_NE(notes.find("skipped folder 'my model'"), std::string::npos) << notes;
  EXPECT_NE(notes.find("contains ' '"), std::string::npos) << notes;
  EXPECT_NE(notes.find("model 'linked' is served from " +
                       std::filesystem::weakly_canonical(elsewhere.path() / "model.onnx").string()),
            std::string::npos)
      << notes;
  EXPECT_EQ(notes.find("ipynb"), std::string::npos) << notes;
}

// Command-line overrides go through the same validation as the file (they used to skip it).
TEST(ServeModelConfig, ValidationCoversValuesSetAfterParsing) {
  auto config = ParseModelConfig("{}", "c.json");
  ASSERT_TRUE(config.ok());
  struct Case {
    void (*set)(ModelConfig&);
    const char* expected;
  };
  const Case cases[] = {
      {[](ModelConfig& c) { c.instances = 0; }, "instances (--instances): expected an integer from 1 to 256, got 0"},
      {[](ModelConfig& c) { c.instances = 100000; }, "got 100000"},
      {[](ModelConfig& c) { c.batching.max_queue_size = 0; }, "batching.max_queue_size (--max-queue-size)"},
      {[](ModelConfig& c) { c.batching.max_queue_size = -1; }, "got -1"},
      {[](ModelConfig& c) { c.batching.max_batch_size = -3; }, "batching.max_batch_size (--max-batch-size)"},
      {[](ModelConfig& c) { c.batching.timeout_us = -1; }, "batching.timeout_us (--timeout-us)"},
      {[](ModelConfig& c) { c.batching.timeout_us = 10'000'000'000'000'000; },
       "batching.timeout_us (--timeout-us): expected an integer from 0 to 3600000000, got 10000000000000000"},
      {[](ModelConfig& c) { c.session.provider = "tpu"; }, "unknown execution provider 'tpu'"},
  };
  for (const auto& c : cases) {
    ModelConfig changed = *config;
    c.set(changed);
    Status status = ValidateModelConfig(changed, "model 'm'");
    ASSERT_FALSE(status.ok()) << c.expected;
    EXPECT_NE(status.error().message.find(c.expected), std::string::npos) << status.error().message;
    EXPECT_EQ(status.error().message.rfind("model 'm': ", 0), 0u) << status.error().message;
  }
  EXPECT_TRUE(ValidateModelConfig(*config, "model 'm'").ok());
}

}  // namespace
}  // namespace ortkit::serve
