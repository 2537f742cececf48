// ortkit perf's request builder: the requests it encodes from a model's metadata, the input plan, --lengths and
// --input-data, read back from their JSON encoding.
#include "ortkit/perf/request_builder.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/tensor/npy.h"
#include "test_models.h"

namespace ortkit::perf {
namespace {

// Encodes as JSON tensors, so that a test reads back what the builder made; sends nothing.
class JsonEncodingClient final : public InferClient {
 public:
  Status CheckReady() override { return OkStatus(); }
  Result<RemoteModel> ModelMetadata() override { return RemoteModel{}; }
  Result<EncodedRequest> Encode(const std::vector<NamedTensor>& inputs,
                                const std::vector<std::string>& outputs) override {
    return EncodeJsonRequest(inputs, outputs);
  }
  InferOutcome Infer(const EncodedRequest&) override { return {"not sent", ""}; }
};

RemoteModel Bert() {
  return ParseModelMetadata(R"({"name":"bert","inputs":[
      {"name":"input_ids","datatype":"INT64","shape":[-1,-1]},
      {"name":"attention_mask","datatype":"INT64","shape":[-1,-1]}],
    "outputs":[{"name":"logits","datatype":"FP32","shape":[-1,-1,4]}]})")
      .value();
}

RequestOptions BertOptions() {
  RequestOptions options;
  options.model = "bert";
  return options;
}

Result<RequestSet> Build(const RequestOptions& options) {
  JsonEncodingClient client;
  return BuildRequests(options, Bert(), client);
}

nlohmann::json Body(const EncodedRequest& request) { return nlohmann::json::parse(request.body); }

TEST(PerfRequests, OneSynthesisedRequestWithoutLengths) {
  RequestOptions options = BertOptions();
  options.plan.dims["batch"] = 2;
  options.plan.dims["seq_len"] = 3;
  auto set = Build(options);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->lengths.min, 1);
  EXPECT_EQ(set->lengths.max, 1);
  ASSERT_EQ(set->by_length.size(), 1u);
  const auto body = Body(set->by_length[0]);
  ASSERT_EQ(body["inputs"].size(), 2u);
  EXPECT_EQ(body["inputs"][0]["name"], "input_ids");
  EXPECT_EQ(body["inputs"][0]["shape"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(body["inputs"][1]["name"], "attention_mask");
  EXPECT_EQ(body["inputs"][1]["data"], nlohmann::json::array({1, 1, 1, 1, 1, 1}));  // a mask of ones
  ASSERT_EQ(body["outputs"].size(), 1u);
  EXPECT_EQ(body["outputs"][0]["name"], "logits");
}

TEST(PerfRequests, OneRequestPerLengthInOrder) {
  RequestOptions options = BertOptions();
  options.lengths = "uniform:3:5";
  auto set = Build(options);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->lengths.min, 3);
  EXPECT_EQ(set->lengths.max, 5);
  ASSERT_EQ(set->by_length.size(), 3u);
  for (std::int64_t length = 3; length <= 5; ++length) {
    const auto body = Body(set->by_length[static_cast<std::size_t>(length - 3)]);
    EXPECT_EQ(body["inputs"][0]["shape"], nlohmann::json::array({1, length}));
    EXPECT_EQ(body["inputs"][1]["shape"], nlohmann::json::array({1, length}));
  }
}

TEST(PerfRequests, SameOptionsBuildTheSameBytes) {
  RequestOptions options = BertOptions();
  options.lengths = "fixed:8";
  options.plan.seed = 7;
  auto first = Build(options);
  auto second = Build(options);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->by_length[0].body, second->by_length[0].body);
}

TEST(PerfRequests, GivenTensorsAreSentAsTheyAreAndTheRestSynthesised) {
  testing::TempDir dir;
  ASSERT_TRUE(
      WriteNpy(dir.path() / "attention_mask.npy", Tensor::FromVector<std::int64_t>({1, 4}, {1, 1, 0, 0}).value()).ok());
  RequestOptions options = BertOptions();
  options.plan.dims["seq_len"] = 4;
  options.input_data = dir.path().string();
  auto set = Build(options);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->by_length.size(), 1u);
  const auto body = Body(set->by_length[0]);
  EXPECT_EQ(body["inputs"][0]["name"], "input_ids");
  EXPECT_EQ(body["inputs"][0]["shape"], nlohmann::json::array({1, 4}));
  EXPECT_EQ(body["inputs"][1]["name"], "attention_mask");
  EXPECT_EQ(body["inputs"][1]["data"], nlohmann::json::array({1, 1, 0, 0}));
}

TEST(PerfRequests, RefusesWhatTheModelCannotTake) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteNpy(dir.path() / "pixels.npy", Tensor::FromVector<float>({1}, {0.5f}).value()).ok());
  RequestOptions stray = BertOptions();
  stray.input_data = dir.path().string();
  auto not_an_input = Build(stray);
  ASSERT_FALSE(not_an_input.ok());
  EXPECT_EQ(not_an_input.error().message,
            "--input-data " + dir.path().string() + ": tensor 'pixels' is not an input of model 'bert'");

  RequestOptions file_and_lengths = stray;
  file_and_lengths.lengths = "uniform:2:4";
  auto combined = Build(file_and_lengths);
  ASSERT_FALSE(combined.ok());
  EXPECT_NE(combined.error().message.find("cannot be combined with --input-data"), std::string::npos);

  RequestOptions no_such_dim = BertOptions();
  no_such_dim.lengths = "fixed:4";
  no_such_dim.length_dim = "dim2";
  auto missing_dim = Build(no_such_dim);
  ASSERT_FALSE(missing_dim.ok());
  EXPECT_EQ(missing_dim.error().message.rfind("--length-dim dim2: no input of model 'bert' has a dynamic dimension", 0),
            0u);
  EXPECT_NE(missing_dim.error().message.find("int64[batch, seq_len]"), std::string::npos);

  RequestOptions bad_plan = BertOptions();
  bad_plan.plan.dims["height"] = 3;
  EXPECT_FALSE(Build(bad_plan).ok());
}

}  // namespace
}  // namespace ortkit::perf
