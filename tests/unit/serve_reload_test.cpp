// The core's model control with real sessions and threads: load and unload by name from a
// repository, the index's states and reasons, config overrides, and reloads while requests run.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "ortkit/serve/inference_core.h"
#include "test_models.h"

namespace ortkit::serve {
namespace {

// y = x + 1 (version 1) and y = x + 2 (version 2): an answer says which copy computed it.
constexpr const char* kAddOne = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, 4] x) => (float[batch, 4] y) {
  one = Constant<value = float[1] {1}>()
  y = Add(x, one)
}
)";
constexpr const char* kAddTwo = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, 4] x) => (float[batch, 4] y) {
  two = Constant<value = float[1] {2}>()
  y = Add(x, two)
}
)";

class ServeReload : public ::testing::Test {
 protected:
  void SetUp() override {
    auto runtime = Runtime::Create();
    ASSERT_TRUE(runtime.ok());
    runtime_ = std::move(runtime).value();
    std::filesystem::create_directories(dir_.path() / "a" / "1");
    std::filesystem::create_directories(dir_.path() / "b");
    Write("a/1/model.onnx", kAddOne);
    Write("b/model.onnx", kAddOne);
  }
  void Write(const std::string& relative, const char* text) {
    std::filesystem::create_directories((dir_.path() / relative).parent_path());
    dir_.WriteModel(relative, testing::ParseModelText(text));
  }
  // A core over the repository with nothing loaded (--model-control explicit).
  std::unique_ptr<InferenceCore> Start() {
    CoreOptions options{2};
    options.repository = dir_.path();
    auto core = InferenceCore::Create(*runtime_, {}, options);
    EXPECT_TRUE(core.ok()) << core.error().message;
    EXPECT_TRUE((*core)->LoadModels().ok());
    return std::move(core).value();
  }
  testing::TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

InferRequest Request(const std::string& model, float value) {
  InferRequest r;
  r.model_name = model;
  r.inputs.push_back({"x", Tensor::FromVector<float>({1, 4}, std::vector<float>(4, value)).value()});
  return r;
}

const ModelIndexEntry* Row(const std::vector<ModelIndexEntry>& index, const std::string& name) {
  for (const auto& e : index) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

TEST_F(ServeReload, LoadAndUnloadByNameWithTheIndexSayingEachState) {
  auto core = Start();
  auto index = core->RepositoryIndex(false);
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index[0].name, "a");
  EXPECT_EQ(index[0].state, "");  // never loaded: its name only, as Triton's index
  EXPECT_TRUE(core->RepositoryIndex(true).empty());
  EXPECT_EQ(core->Infer(Request("a", 1)).get().error().kind, ErrorKind::kNotFound);

  ASSERT_TRUE(core->LoadModel("a").ok());
  auto answer = core->Infer(Request("a", 1)).get();
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->outputs[0].tensor.values<float>()[0], 2.0f);
  index = core->RepositoryIndex(true);
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].name, "a");
  EXPECT_EQ(index[0].version, "1");
  EXPECT_EQ(index[0].state, "READY");

  ASSERT_TRUE(core->UnloadModel("a").ok());
  EXPECT_EQ(core->Infer(Request("a", 1)).get().error().kind, ErrorKind::kNotFound);
  const ModelIndexEntry* a = Row(core->RepositoryIndex(false), "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->state, "UNAVAILABLE");
  EXPECT_EQ(a->reason, "unloaded");
  // A repository model that is not served unloads as a no-op; one that is nowhere is unknown.
  EXPECT_TRUE(core->UnloadModel("b").ok());
  EXPECT_EQ(core->UnloadModel("nowhere").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(core->LoadModel("nowhere").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(core->LoadModel("../a").error().kind, ErrorKind::kInvalidArgument);
}

TEST_F(ServeReload, AConfigOverrideReplacesTheFilesAndABadOneIsRefused) {
  auto core = Start();
  ASSERT_TRUE(core->LoadModel("b", std::string(R"({"instances": 2, "batching": {"max_batch_size": 4}})")).ok());
  auto config = core->Config("b");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->instances, 2);
  EXPECT_EQ(config->batching.max_batch_size, 4);
  for (const char* bad : {"{not json", R"({"instances": -1})", R"({"no_such_key": 1})", "[]"}) {
    Status refused = core->LoadModel("b", std::string(bad));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().kind, ErrorKind::kInvalidArgument) << bad << ": " << refused.error().message;
  }
  EXPECT_EQ(core->Config("b")->instances, 2);  // the refused loads changed nothing
}

TEST_F(ServeReload, AFailedReloadLeavesTheOldCopyServingAndSaysWhyInTheIndex) {
  auto core = Start();
  ASSERT_TRUE(core->LoadModel("a").ok());
  dir_.Write("a/1/model.onnx", "not an onnx model");
  Status failed = core->LoadModel("a");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("model 'a' version 1"), std::string::npos) << failed.error().message;
  auto answer = core->Infer(Request("a", 1)).get();
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->outputs[0].tensor.values<float>()[0], 2.0f);
  const ModelIndexEntry* a = Row(core->RepositoryIndex(false), "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->state, "READY");
  EXPECT_NE(a->reason.find("the last load failed"), std::string::npos) << a->reason;
  // ortkit check's layers read the new files first: the diagnosis of its file layer, with cause and fix.
  EXPECT_NE(a->reason.find("ortkit check's file layer"), std::string::npos) << a->reason;
  EXPECT_NE(a->reason.find("[file.text-file]; cause: "), std::string::npos) << a->reason;
  // A good copy again: served, and the reason gone.
  Write("a/1/model.onnx", kAddTwo);
  ASSERT_TRUE(core->LoadModel("a").ok());
  EXPECT_EQ(core->Infer(Request("a", 1)).get()->outputs[0].tensor.values<float>()[0], 3.0f);
  EXPECT_EQ(Row(core->RepositoryIndex(false), "a")->reason, "");
}

TEST_F(ServeReload, EveryRequestInFlightDuringReloadsIsAnsweredByOneCopyOrTheOther) {
  auto core = Start();
  // Requests wait in the queue for a batch to fill: each swap finds some queued.
  ASSERT_TRUE(core->LoadModel("a", std::string(R"({"batching": {"max_queue_delay_us": 3000}})")).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, failed{0}, wrong{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&] {
      while (!stop) {
        auto answer = core->Infer(Request("a", 10)).get();
        if (!answer.ok()) {
          ++failed;
          ADD_FAILURE() << answer.error().message;
          continue;
        }
        const float y = answer->outputs[0].tensor.values<float>()[0];
        if (y != 11.0f && y != 12.0f) ++wrong;
        ++answered;
      }
    });
  }
  // Alternates a new version folder (2: x + 2) with its removal (back to 1: x + 1), and one
  // broken version in between that must fail without a refused request.
  for (int reload = 0; reload < 8; ++reload) {
    if (reload % 2 == 0) {
      Write("a/2/model.onnx", kAddTwo);
    } else {
      std::filesystem::remove_all(dir_.path() / "a" / "2");
    }
    ASSERT_TRUE(core->LoadModel("a", std::string(R"({"batching": {"max_queue_delay_us": 3000}})")).ok());
    if (reload == 4) {
      dir_.Write("a/2/model.onnx", "broken");
      EXPECT_FALSE(core->LoadModel("a").ok());
      std::filesystem::remove_all(dir_.path() / "a" / "2");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  for (auto& c : clients) c.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(answered.load(), 20);
}

}  // namespace
}  // namespace ortkit::serve
