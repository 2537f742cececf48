// Which models `ortkit serve` serves, from --model/--config pairs or a repository, with the
// command line's overrides applied and checked after.
#include <gtest/gtest.h>

#include <filesystem>

#include "ortkit/serve/model_config.h"
#include "ortkit/serve/model_repository.h"
#include "test_models.h"

namespace ortkit::serve {
namespace {

std::string ErrorOf(const ModelSelection& selection, const ConfigOverrides& overrides = {}) {
  std::vector<std::string> notes;
  auto sources = ResolveModelSources(selection, overrides, &notes);
  return sources.ok() ? std::string("(no error)") : sources.error().message;
}

TEST(ServeModelSources, OverridesReplaceTheConfiguredValues) {
  ModelConfig config;
  config.batching.preferred_batch_sizes = {4, 8, 16};
  ConfigOverrides overrides;
  overrides.instances = 3;
  overrides.max_batch_size = 8;
  overrides.no_bucketing = true;
  config.bucketing.enabled = true;
  overrides.ApplyTo(&config);
  EXPECT_EQ(config.instances, 3);
  EXPECT_EQ(config.batching.max_batch_size, 8);
  EXPECT_EQ(config.batching.preferred_batch_sizes, (std::vector<int>{4, 8}));
  EXPECT_FALSE(config.bucketing.enabled);
  EXPECT_TRUE(config.batching.enabled);                // not set: the configured value stays
  EXPECT_EQ(config.batching.max_queue_delay_us, 500);  // likewise
}

TEST(ServeModelSources, PairsEachConfigWithItsModel) {
  testing::TempDir dir;
  dir.Write("a.onnx", "x");
  dir.Write("b.onnx", "x");
  dir.Write("b.json", R"({"instances": 2})");
  ModelSelection selection;
  selection.models = {"a=" + (dir.path() / "a.onnx").string(), "b=" + (dir.path() / "b.onnx").string()};
  selection.configs = {"b=" + (dir.path() / "b.json").string()};
  std::vector<std::string> notes;
  auto sources = ResolveModelSources(selection, {}, &notes);
  ASSERT_TRUE(sources.ok()) << sources.error().message;
  ASSERT_EQ(sources->size(), 2u);
  EXPECT_EQ((*sources)[0].config.instances, 1);
  EXPECT_EQ((*sources)[1].config.instances, 2);
  EXPECT_TRUE(notes.empty());
}

TEST(ServeModelSources, ErrorsSayWhichFlagsToGive) {
  testing::TempDir dir;
  dir.Write("a.onnx", "x");
  dir.Write("b.onnx", "x");
  const std::string a = "a=" + (dir.path() / "a.onnx").string();
  const std::string b = "b=" + (dir.path() / "b.onnx").string();
  EXPECT_EQ(ErrorOf({}), "give --model NAME=PATH (one or more) or --model-repository DIR");
  EXPECT_EQ(ErrorOf({{a}, {}, dir.path().string()}), "give --model NAME=PATH (one or more) or --model-repository DIR");
  EXPECT_EQ(ErrorOf({{}, {"c.json"}, dir.path().string()}),
            "--config goes with --model; in a repository put DIR/NAME/config.json");
  EXPECT_EQ(ErrorOf({{a, b}, {"c.json"}, ""}), "--config c.json: with several models write --config NAME=FILE");
  EXPECT_EQ(ErrorOf({{a}, {"z=c.json"}, ""}), "--config z=...: no --model of that name");
  ConfigOverrides overrides;
  overrides.instances = 0;
  EXPECT_NE(ErrorOf({{a}, {}, ""}, overrides).find("model 'a': instances (--instances)"), std::string::npos)
      << ErrorOf({{a}, {}, ""}, overrides);
}

TEST(ServeModelSources, RepositoryNotesComeBackAlsoWhenAnOverrideIsRefused) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "good");
  std::filesystem::create_directories(dir.path() / "my model");
  dir.Write("good/model.onnx", "x");
  dir.Write("my model/model.onnx", "x");
  ModelSelection selection;
  selection.repository = dir.path().string();
  ConfigOverrides overrides;
  overrides.instances = 0;
  std::vector<std::string> notes;
  auto sources = ResolveModelSources(selection, overrides, &notes);
  EXPECT_FALSE(sources.ok());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("skipped folder 'my model'"), std::string::npos) << notes[0];
}

TEST(ServeModelSources, ExplicitControlLoadsTheNamedModelsOnly) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b" / "2");
  dir.Write("a/model.onnx", "x");
  dir.Write("b/2/model.onnx", "x");
  ModelSelection selection;
  selection.repository = dir.path().string();
  selection.control = ModelControlMode::kExplicit;
  std::vector<std::string> notes;
  auto none = ResolveModelSources(selection, {}, &notes);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());  // ready with nothing loaded, as Triton's explicit mode
  selection.load_models = {"b"};
  auto b = ResolveModelSources(selection, {}, &notes);
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ((*b)[0].name, "b");
  EXPECT_EQ((*b)[0].version, 2);
  selection.load_models = {"*"};
  EXPECT_EQ(ResolveModelSources(selection, {}, &notes)->size(), 2u);
  selection.load_models = {"a", "nowhere"};
  EXPECT_NE(ErrorOf(selection).find("--load-model nowhere"), std::string::npos) << ErrorOf(selection);
  selection.control = ModelControlMode::kNone;
  EXPECT_NE(ErrorOf(selection).find("--load-model goes with --model-control explicit"), std::string::npos);
  selection.repository.clear();
  selection.load_models.clear();
  selection.models = {"a=" + (dir.path() / "a" / "model.onnx").string()};
  selection.control = ModelControlMode::kExplicit;
  EXPECT_NE(ErrorOf(selection).find("--model-control explicit works on a --model-repository"), std::string::npos);
}

}  // namespace
}  // namespace ortkit::serve
