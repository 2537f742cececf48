// What changes the served copies besides an explicit load: the repository's files under --model-control
// poll (content digests, files that must stop changing first, models that come and go, a repository that
// disappears), file overrides of a load, the unload-first reload policy and the check run on new files.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/model_repository.h"
#include "ortkit/serve/repository_poller.h"
#include "test_models.h"

namespace ortkit::serve {
namespace {

// y = x + VALUE, with a weight large enough that a copy cut in half is still a file of some size.
std::string AddModel(float value) {
  std::string weights;
  for (int i = 0; i < 4096; ++i) weights += (i ? ", " : "") + std::to_string(value);
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, 4] x) => (float[batch, 4] y) {
  w = Constant<value = float[4096] {)" +
                           weights + R"(}>()
  first = Slice(w, starts, ends)
  y = Add(x, first)
}
)";
  auto model = testing::ParseModelText(text.c_str());
  auto* graph = model.mutable_graph();
  for (const auto& [name, v] : {std::pair<const char*, long long>{"starts", 0}, {"ends", 4}}) {
    auto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(v);
  }
  return model.SerializeAsString();
}

InferRequest Request(const std::string& model) {
  InferRequest r;
  r.model_name = model;
  r.inputs.push_back({"x", Tensor::FromVector<float>({1, 4}, std::vector<float>(4, 10.0f)).value()});
  return r;
}

// What `model` answers for x = 10 (-1 when it does not answer).
float Answer(InferenceCore& core, const std::string& model) {
  auto answer = core.Infer(Request(model)).get();
  return answer.ok() ? answer->outputs[0].tensor.values<float>()[0] : -1.0f;
}

bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 300; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

const ModelIndexEntry* Row(const std::vector<ModelIndexEntry>& index, const std::string& name) {
  for (const auto& e : index) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

class ServePoll : public ::testing::Test {
 protected:
  void SetUp() override {
    auto runtime = Runtime::Create();
    ASSERT_TRUE(runtime.ok());
    runtime_ = std::move(runtime).value();
    Put("a/1/model.onnx", AddModel(1));
    Put("b/model.onnx", AddModel(1));
  }
  void Put(const std::string& relative, const std::string& bytes) {
    std::filesystem::create_directories((dir_.path() / relative).parent_path());
    dir_.Write(relative, bytes);
  }
  // A core serving every model of the repository, as `ortkit serve --model-control poll` starts.
  std::unique_ptr<InferenceCore> Start(CoreOptions options = CoreOptions{2}) {
    options.repository = dir_.path();
    ModelSelection selection;
    selection.repository = dir_.path().string();
    selection.control = ModelControlMode::kPoll;
    std::vector<std::string> notes;
    auto sources = ResolveModelSources(selection, {}, &notes);
    EXPECT_TRUE(sources.ok());
    auto core = InferenceCore::Create(*runtime_, std::move(sources).value(), options);
    EXPECT_TRUE(core.ok()) << core.error().message;
    return std::move(core).value();
  }
  std::unique_ptr<RepositoryPoller> Poller(InferenceCore& core) {
    return std::make_unique<RepositoryPoller>(core, dir_.path(), std::chrono::milliseconds(50),
                                              [this](const std::string& line) {
                                                std::lock_guard lock(log_mutex_);
                                                log_.push_back(line);
                                              });
  }
  std::string Log() {
    std::lock_guard lock(log_mutex_);
    std::string all;
    for (const auto& line : log_) all += line + "\n";
    return all;
  }
  testing::TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  std::mutex log_mutex_;
  std::vector<std::string> log_;
};

TEST(DigestModelFolder, SaysWhetherAnyByteChangedWhateverTheTimestamps) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "m" / "1");
  dir.Write("m/1/model.onnx", "abcdef");
  dir.Write("m/config.json", "{}");
  const auto first = DigestModelFolder(dir.path() / "m");
  ASSERT_TRUE(first.ok());
  // Rewritten with the same bytes: the same digest, although its timestamp moved.
  dir.Write("m/1/model.onnx", "abcdef");
  EXPECT_EQ(*DigestModelFolder(dir.path() / "m"), *first);
  // A temporary file of a copy in progress (rsync's .NAME.XXXXXX) is not part of the model.
  dir.Write("m/1/.model.onnx.Gx81Qa", "partial");
  EXPECT_EQ(*DigestModelFolder(dir.path() / "m"), *first);
  // One byte changed, size and timestamp kept: a different digest.
  const auto stamp = std::filesystem::last_write_time(dir.path() / "m/1/model.onnx");
  dir.Write("m/1/model.onnx", "abcdeF");
  std::filesystem::last_write_time(dir.path() / "m/1/model.onnx", stamp);
  EXPECT_NE(*DigestModelFolder(dir.path() / "m"), *first);
  dir.Write("m/1/model.onnx", "abcdef");
  dir.Write("m/1/model.onnx.data", "weights");  // external data beside the model counts
  EXPECT_NE(*DigestModelFolder(dir.path() / "m"), *first);
  EXPECT_FALSE(DigestModelFolder(dir.path() / "nowhere").ok());
}

TEST(DigestModelFolder, ACacheReadsOnlyWhatChangedAndNeverMissesNewBytes) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "m");
  const auto file = dir.path() / "m" / "model.onnx";
  dir.Write("m/model.onnx", "abcdef");
  DigestCache cache;
  const auto first = DigestModelFolder(dir.path() / "m", &cache);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(cache.files.size(), 1u);
  EXPECT_FALSE(cache.files.begin()->second.settled);  // written just now: read again next time
  // A settled entry with a hash that is not the file's: the cache is used only while the file's times hold.
  auto& entry = cache.files.begin()->second;
  entry.settled = true;
  entry.hash = 42;
  EXPECT_NE(*DigestModelFolder(dir.path() / "m", &cache), *first);  // its times held: the cache's hash used
  // New bytes, the size and modification time set back as `cp -p` would: the status-change time moved.
  const auto stamp = std::filesystem::last_write_time(file);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  dir.Write("m/model.onnx", "abcdeF");
  std::filesystem::last_write_time(file, stamp);
  EXPECT_NE(*DigestModelFolder(dir.path() / "m", &cache), *first);
  EXPECT_EQ(*DigestModelFolder(dir.path() / "m", &cache), *DigestModelFolder(dir.path() / "m"));
  cache.Prune();
  cache.Prune();  // a round in which nothing used the entry: dropped
  EXPECT_TRUE(cache.files.empty());
}

TEST_F(ServePoll, AChangedModelIsReloadedOnlyOnceItsFilesStopChanging) {
  auto core = Start();
  auto poller = Poller(*core);
  ASSERT_TRUE(core->LoadModels().ok());
  ASSERT_EQ(Answer(*core, "a"), 11.0f);
  poller->PollOnce();  // nothing changed
  EXPECT_EQ(Log(), "");

  // The new copy arrives in chunks, one poll after each: every poll finds the file changed since the last,
  // so none loads it, not even when a chunk leaves a file that would parse.
  const std::string bytes = AddModel(2);
  const auto path = dir_.path() / "a/1/model.onnx";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (std::size_t done = 0; done < bytes.size(); done += 4096) {
    out.write(bytes.data() + done, static_cast<std::streamsize>(std::min<std::size_t>(4096, bytes.size() - done)));
    out.flush();
    poller->PollOnce();
    EXPECT_EQ(Answer(*core, "a"), 11.0f);
    EXPECT_EQ(Log(), "");
  }
  out.close();
  poller->PollOnce();  // the last chunk was seen by the poll before: it has stayed the same for a period now
  ASSERT_TRUE(Eventually([&] { return Answer(*core, "a") == 12.0f; })) << Log();
  EXPECT_NE(Log().find("model 'a': its files changed and stayed the same for 0.05 s: reloaded"), std::string::npos)
      << Log();
  EXPECT_EQ(Row(core->RepositoryIndex(false), "a")->reason, "");
}

TEST_F(ServePoll, ModelsComeAndGoWithTheirFoldersAndAVanishedRepositoryUnloadsNothing) {
  auto core = Start();
  auto poller = Poller(*core);
  ASSERT_TRUE(core->LoadModels().ok());
  Put("c/3/model.onnx", AddModel(5));
  poller->PollOnce();
  EXPECT_EQ(Answer(*core, "c"), -1.0f);
  poller->PollOnce();
  ASSERT_TRUE(Eventually([&] { return Answer(*core, "c") == 15.0f; })) << Log();

  std::filesystem::remove_all(dir_.path() / "b");
  poller->PollOnce();  // gone for one poll: it may be a folder being renamed into place
  EXPECT_EQ(Answer(*core, "b"), 11.0f);
  poller->PollOnce();
  ASSERT_TRUE(Eventually([&] { return Answer(*core, "b") == -1.0f; })) << Log();
  EXPECT_NE(Log().find("model 'b' left the repository: unloaded"), std::string::npos) << Log();

  // The whole repository gone (a mount that blinks): what is served serves on, said once.
  const auto moved = dir_.path().string() + ".away";
  std::filesystem::rename(dir_.path(), moved);
  poller->PollOnce();
  poller->PollOnce();
  std::filesystem::rename(moved, dir_.path());
  EXPECT_EQ(Answer(*core, "a"), 11.0f);
  EXPECT_EQ(Answer(*core, "c"), 15.0f);
  EXPECT_NE(Log().find("serving on what is loaded until it can be read"), std::string::npos) << Log();
  poller->PollOnce();
  EXPECT_NE(Log().find("can be read again"), std::string::npos) << Log();
}

TEST_F(ServePoll, ABrokenNewCopyLeavesTheOldOneServingWithTheCheckDiagnosisInTheIndex) {
  CoreOptions options{2};
  options.polled = true;
  auto core = Start(options);
  auto poller = Poller(*core);
  ASSERT_TRUE(core->LoadModels().ok());
  // The API's load and unload are refused in poll mode, as Triton refuses them.
  EXPECT_EQ(core->LoadModel("a").error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(core->UnloadModel("a").error().kind, ErrorKind::kInvalidArgument);

  const std::string bytes = AddModel(2);
  Put("a/1/model.onnx", bytes.substr(0, bytes.size() / 2));  // a copy that stopped half-way
  poller->PollOnce();
  poller->PollOnce();
  ASSERT_TRUE(Eventually([&] { return Log().find("did not load") != std::string::npos; })) << Log();
  EXPECT_EQ(Answer(*core, "a"), 11.0f);
  const ModelIndexEntry* a = Row(core->RepositoryIndex(false), "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->state, "READY");
  EXPECT_NE(a->reason.find("ortkit check's file layer"), std::string::npos) << a->reason;
  EXPECT_NE(a->reason.find("[file.truncated]"), std::string::npos) << a->reason;
  // Once the copy completes, it loads.
  Put("a/1/model.onnx", bytes);
  poller->PollOnce();
  poller->PollOnce();
  ASSERT_TRUE(Eventually([&] { return Answer(*core, "a") == 12.0f; })) << Log();
}

TEST_F(ServePoll, FileOverridesLoadFromTheGivenFilesAloneAndStayInsideTheirFolder) {
  CoreOptions options{2};
  auto core = Start(options);
  ASSERT_TRUE(core->LoadModels().ok());
  LoadRequest load;
  load.config = "{}";
  load.files["2/model.onnx"] = AddModel(7);
  ASSERT_TRUE(core->LoadModel("a", load).ok());
  EXPECT_EQ(Answer(*core, "a"), 17.0f);
  EXPECT_EQ(core->Metadata("a", "")->versions, std::vector<std::string>{"2"});  // the repository's 1 is not used
  // Without files the repository's own copy again.
  ASSERT_TRUE(core->LoadModel("a").ok());
  EXPECT_EQ(Answer(*core, "a"), 11.0f);

  const auto refused = [&](std::map<std::string, std::string> files, std::optional<std::string> config,
                           const std::string& says) {
    LoadRequest bad{std::move(config), std::move(files)};
    Status status = core->LoadModel("a", bad);
    ASSERT_FALSE(status.ok()) << says;
    EXPECT_EQ(status.error().kind, ErrorKind::kInvalidArgument) << status.error().message;
    EXPECT_NE(status.error().message.find(says), std::string::npos) << status.error().message;
  };
  refused({{"1/model.onnx", AddModel(3)}}, std::nullopt, "need the \"config\" parameter");
  for (const char* path : {"../b/model.onnx", "/etc/passwd", "1/../../x", "./model.onnx", "1/.hidden", "", "1//m",
                           "a/b/c/d/model.onnx", "1/mo del.onnx"}) {
    refused({{path, "x"}}, "{}", "file:");
  }
  refused({{"1/weights.bin", "x"}}, "{}", "hold no model.onnx");
  std::map<std::string, std::string> many;
  for (int i = 0; i < 65; ++i) many["f" + std::to_string(i)] = "x";
  refused(many, "{}", "at most 64");
  EXPECT_EQ(Answer(*core, "a"), 11.0f);  // every refusal left the served copy alone
}

TEST_F(ServePoll, UnloadFirstFreesTheServedCopyBeforeLoadingAndAFailureSaysSo) {
  CoreOptions options{2};
  options.reload_policy = ReloadPolicy::kUnloadFirst;
  auto core = Start(options);
  ASSERT_TRUE(core->LoadModels().ok());
  Put("a/1/model.onnx", AddModel(2));
  ASSERT_TRUE(core->LoadModel("a").ok());
  EXPECT_EQ(Answer(*core, "a"), 12.0f);
  // Files that ortkit check refuses are refused before the served copy is unloaded: it serves on.
  Put("a/1/model.onnx", "not a model");
  EXPECT_FALSE(core->LoadModel("a").ok());
  EXPECT_EQ(Answer(*core, "a"), 12.0f);
  // Files that pass the check but that ONNX Runtime refuses (an operator of no known domain): the served
  // copy is gone by then, and the error says why.
  dir_.WriteModel("a/1/model.onnx", testing::ParseModelText(R"(
<ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
agraph (float[batch, 4] x) => (float[batch, 4] y) {
  y = com.example.Mystery(x)
}
)"));
  Status failed = core->LoadModel("a");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("--reload-policy unload-first"), std::string::npos) << failed.error().message;
  auto answer = core->Infer(Request("a")).get();
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(answer.error().message.find("its last load failed"), std::string::npos) << answer.error().message;
  EXPECT_EQ(Row(core->RepositoryIndex(false), "a")->state, "UNAVAILABLE");
}

}  // namespace
}  // namespace ortkit::serve
