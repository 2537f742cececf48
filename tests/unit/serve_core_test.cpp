// The inference core with real ONNX Runtime sessions and real threads: batching, splitting,
// bucketing (pad, cut, padding-invariance check), validation errors, metrics.
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <random>

#include <fmt/format.h>

#include "ortkit/serve/bucketing.h"
#include "ortkit/serve/inference_core.h"
#include "ortkit/serve/scheduler.h"
#include "test_models.h"

namespace ortkit::serve {
namespace {

// Padding-invariant with the mask: y = x * mask, pooled = sum over seq of y.
constexpr const char* kMasked = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, seq] x, int64[batch, seq] attention_mask) => (float[batch, seq] y, float[batch] pooled) {
  maskf = Cast<to = 1>(attention_mask)
  y = Mul(x, maskf)
  axes = Constant<value = int64[1] {1}>()
  pooled = ReduceSum<keepdims = 0>(y, axes)
}
)";

// Not padding-invariant: the mean over seq sees the padded zeros.
constexpr const char* kMean = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, seq] x) => (float[batch, seq] y) {
  m = ReduceMean<axes = [1], keepdims = 1>(x)
  y = Add(x, m)
}
)";

// A fixed batch of 1: not batchable.
constexpr const char* kFixed = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[1, 4] x) => (float[1, 4] y) {
  y = Relu(x)
}
)";

class ServeCore : public ::testing::Test {
 protected:
  void SetUp() override {
    auto runtime = Runtime::Create();
    ASSERT_TRUE(runtime.ok());
    runtime_ = std::move(runtime).value();
  }
  std::unique_ptr<InferenceCore> Start(const char* text, ModelConfig config, Status* load = nullptr,
                                       CoreOptions options = CoreOptions{2}) {
    ModelSource source{"m", dir_.WriteModel("m.onnx", testing::ParseModelText(text)), std::move(config)};
    auto core = InferenceCore::Create(*runtime_, {source}, options);
    EXPECT_TRUE(core.ok());
    Status loaded = (*core)->LoadModels();
    if (load != nullptr)
      *load = loaded;
    else
      EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return std::move(core).value();
  }
  testing::TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

InferRequest MaskedRequest(int rows, int length, int seed) {
  std::vector<float> x(rows * length);
  std::vector<std::int64_t> mask(rows * length, 1);
  for (int i = 0; i < rows * length; ++i) x[i] = static_cast<float>(seed * 1000 + i);
  if (length > 1) mask[length - 1] = 0;  // a real masked position in the request itself
  InferRequest r;
  r.model_name = "m";
  r.id = std::to_string(seed);
  r.inputs.push_back({"x", Tensor::FromVector<float>({rows, length}, x).value()});
  r.inputs.push_back({"attention_mask", Tensor::FromVector<std::int64_t>({rows, length}, mask).value()});
  return r;
}

InferRequest Clone(const InferRequest& r) {
  InferRequest c;
  c.model_name = r.model_name;
  c.id = r.id;
  c.outputs = r.outputs;
  for (const auto& in : r.inputs) c.inputs.push_back({in.name, in.tensor.Clone()});
  return c;
}

// Checks the answer against what the model computes for this request alone.
void ExpectMaskedAnswer(const InferRequest& request, const Result<InferResponse>& response) {
  ASSERT_TRUE(response.ok()) << response.error().message;
  const Tensor& x = request.inputs[0].tensor;
  const Tensor& mask = request.inputs[1].tensor;
  ASSERT_EQ(response->id, request.id);
  ASSERT_EQ(response->outputs.size(), 2u);
  const Tensor& y = response->outputs[0].tensor;
  const Tensor& pooled = response->outputs[1].tensor;
  ASSERT_EQ(y.shape(), x.shape());
  ASSERT_EQ(pooled.shape(), std::vector<std::int64_t>{x.shape()[0]});
  const std::int64_t length = x.shape()[1];
  for (std::int64_t r = 0; r < x.shape()[0]; ++r) {
    float sum = 0;
    for (std::int64_t s = 0; s < length; ++s) {
      const float want =
          x.values<float>()[r * length + s] * static_cast<float>(mask.values<std::int64_t>()[r * length + s]);
      ASSERT_EQ(y.values<float>()[r * length + s], want) << "request " << request.id << " row " << r;
      sum += want;
    }
    ASSERT_NEAR(pooled.values<float>()[r], sum, 1e-3 * std::abs(sum)) << "request " << request.id;
  }
}

TEST_F(ServeCore, ConcurrentRequestsOfMixedRowsAndLengthsEachGetTheirOwnAnswer) {
  ModelConfig config;
  config.instances = 2;
  config.batching.max_batch_size = 8;
  config.batching.max_queue_delay_us = 2000;
  config.bucketing.enabled = true;
  config.bucketing.dim = "seq";
  config.bucketing.boundaries = {4, 8, 16};
  auto core = Start(kMasked, config);
  std::vector<InferRequest> requests;
  std::mt19937 random(3);
  for (int i = 0; i < 200; ++i) requests.push_back(MaskedRequest(1 + random() % 11, 1 + random() % 20, i));
  std::vector<std::future<Result<InferResponse>>> answers;
  std::vector<std::thread> clients;
  std::mutex mutex;
  answers.resize(requests.size());
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      for (std::size_t i = t; i < requests.size(); i += 8) {
        InferRequest copy = Clone(requests[i]);  // the core takes ownership; keep the original to check against
        auto future = core->Infer(std::move(copy));
        std::lock_guard lock(mutex);
        answers[i] = std::move(future);
      }
    });
  }
  for (auto& c : clients) c.join();
  for (std::size_t i = 0; i < requests.size(); ++i) ExpectMaskedAnswer(requests[i], answers[i].get());
  const std::string metrics = core->MetricsText();
  EXPECT_NE(metrics.find("ortkit_request_success_total{model=\"m\",version=\"1\"} 200"), std::string::npos) << metrics;
  // Rows > max_batch_size were split, and some batches held several requests.
  const auto count = [&](const std::string& name) {
    const auto at = metrics.find(name + "{model=\"m\",version=\"1\"} ");
    return std::stoll(metrics.substr(metrics.find("} ", at) + 2));
  };
  std::int64_t rows = 0;
  for (const auto& r : requests) rows += r.inputs[0].tensor.shape()[0];
  EXPECT_EQ(count("ortkit_inference_count_total"), rows);
  EXPECT_LT(count("ortkit_execution_count_total"), static_cast<std::int64_t>(requests.size()) + rows / 8);
}

// A batch of one request is answered from the runtime's own outputs (views, no copy): the
// answer stays valid after the core and its sessions are gone.
TEST_F(ServeCore, AnAnswerOutlivesTheCoreThatComputedIt) {
  ModelConfig config;
  config.batching.max_batch_size = 8;
  auto core = Start(kMasked, config);
  const InferRequest request = MaskedRequest(3, 5, 7);
  Result<InferResponse> answer = core->Infer(Clone(request)).get();
  core.reset();
  ExpectMaskedAnswer(request, answer);
}

// The value of `name`{model="m",...} in the core's metrics text.
double MetricValue(const InferenceCore& core, const std::string& name) {
  const std::string text = core.MetricsText();
  const auto at = text.find("\n" + name + "{model=\"m\"");
  if (at == std::string::npos) return -1;
  const auto value = text.find("} ", at);
  return std::stod(text.substr(value + 2));
}

TEST_F(ServeCore, AnswersOfABatchOfSeveralAreTheirOwnRowsAndOutliveTheCore) {
  ModelConfig config;
  // The four requests below have 6 rows. An idle instance may take the first (1 row) alone; the
  // other three (5 rows) then fill a batch and run at once. The long delay only matters when the
  // submitting thread is descheduled on a loaded machine: 300 ms once let a third run in.
  config.batching.max_batch_size = 5;
  config.batching.max_queue_delay_us = 5'000'000;
  auto core = Start(kMasked, config);
  std::vector<InferRequest> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(MaskedRequest(1 + i % 2, 5, 20 + i));
  // An idle instance takes the first request alone; the others then wait for it and run as one batch.
  // On a loaded machine the submitting thread can be descheduled long enough for the instance to be idle
  // again before the third request comes: then that round is tried again (a few rounds, not forever).
  std::vector<Result<InferResponse>> answers;
  double executions = 0;
  for (int round = 0; round < 5; ++round) {
    const double before = MetricValue(*core, "nv_inference_exec_count");
    std::vector<std::future<Result<InferResponse>>> pending;
    for (const auto& r : requests) pending.push_back(core->Infer(Clone(r)));
    answers.clear();
    for (auto& p : pending) answers.push_back(p.get());
    executions = MetricValue(*core, "nv_inference_exec_count") - before;
    if (executions <= 2) break;
  }
  EXPECT_LE(executions, 2);
  core.reset();  // the answers hold their batch's outputs (rows at offsets in it), not the core
  for (std::size_t i = 0; i < requests.size(); ++i) ExpectMaskedAnswer(requests[i], answers[i]);
}

TEST_F(ServeCore, ValidationErrorsNameTheInput) {
  auto core = Start(kMasked, ModelConfig{});
  InferRequest wrong_type = MaskedRequest(1, 4, 1);
  wrong_type.inputs[1].tensor = Tensor::Zeros(DataType::kFloat32, {1, 4}).value();
  auto r = core->Infer(std::move(wrong_type)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(r.error().message.find("input 'attention_mask' has datatype FP32 but the model expects INT64"),
            std::string::npos)
      << r.error().message;

  InferRequest mismatch = MaskedRequest(1, 4, 1);
  mismatch.inputs[1].tensor = Tensor::Zeros(DataType::kInt64, {1, 5}).value();
  r = core->Infer(std::move(mismatch)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("dimension 'seq' is 4 in input 'x' but 5 in input 'attention_mask'"),
            std::string::npos)
      << r.error().message;

  InferRequest missing = MaskedRequest(1, 4, 1);
  missing.inputs.pop_back();
  r = core->Infer(std::move(missing)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("input 'attention_mask'"), std::string::npos);

  InferRequest unknown = MaskedRequest(1, 4, 1);
  unknown.model_name = "nope";
  r = core->Infer(std::move(unknown)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);

  InferRequest some = MaskedRequest(2, 3, 1);
  some.outputs = {"pooled"};
  r = core->Infer(std::move(some)).get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].name, "pooled");
}

// Two inputs whose rows the converter named apart: the model runs only when they are equal, and a request
// that sizes them apart is refused by the core with that reason, before the runtime sees it.
TEST_F(ServeCore, AxesThatMustBeEqualUnderTwoNamesAreCheckedUpFront) {
  constexpr const char* kTwoNames = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[unk__330, 21] a, float[unk__331, 21] b) => (float[unk__332, 42] y) {
      y = Concat<axis = 1>(a, b)
    }
  )";
  auto core = Start(kTwoNames, ModelConfig{});
  auto request = [](std::int64_t rows_a, std::int64_t rows_b) {
    InferRequest r;
    r.model_name = "m";
    r.inputs.push_back({"a", Tensor::Zeros(DataType::kFloat32, {rows_a, 21}).value()});
    r.inputs.push_back({"b", Tensor::Zeros(DataType::kFloat32, {rows_b, 21}).value()});
    return r;
  };
  auto apart = core->Infer(request(3, 4)).get();
  ASSERT_FALSE(apart.ok());
  EXPECT_EQ(apart.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(apart.error().message.find("input 'a' axis 0 is 3 but input 'b' axis 0 is 4: the model runs only when "
                                       "they are equal"),
            std::string::npos)
      << apart.error().message;
  auto equal = core->Infer(request(3, 3)).get();
  ASSERT_TRUE(equal.ok()) << equal.error().message;
  EXPECT_EQ(equal->outputs[0].tensor.shape(), (std::vector<std::int64_t>{3, 42}));
}

// The advice named run's and bench's flags (--dim, --shape, --input), which serve does not have.
TEST_F(ServeCore, AWarmUpTooLargeNamesTheConfigurationsWarmupDims) {
  ModelConfig config;
  config.warmup.dims = {{"batch", {100000}}, {"seq", {100000}}};
  Status load;
  auto core = Start(kMasked, config, &load);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.error().kind, ErrorKind::kInvalidArgument);
  const std::string& message = load.error().message;
  EXPECT_NE(message.find("warm-up inputs for batch=100000, seq=100000 would take 111.8 GiB (the largest, "
                         "'attention_mask' int64[100000, 100000], 74.5 GiB)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("give smaller sizes in the configuration's warmup.dims"), std::string::npos) << message;
  EXPECT_EQ(message.find("--dim"), std::string::npos) << message;
  EXPECT_EQ(message.find("--input"), std::string::npos) << message;
}

// Strings (the protocol's BYTES) are refused at load, with what to serve instead.
TEST_F(ServeCore, AStringModelIsRefusedWithWhatToDoInstead) {
  constexpr const char* kStringIn = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (string[N] x) => (float[N] y) {
  y = Cast<to = 1>(x)
}
)";
  Status load;
  auto core = Start(kStringIn, ModelConfig{}, &load);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(load.error().message.find("input 'x' is a string tensor (string[N]), and ortkit serve handles numeric "
                                      "and boolean tensors only: tokenise or encode the text before the model"),
            std::string::npos)
      << load.error().message;
}

TEST_F(ServeCore, BucketingIsRefusedForAModelThatChangesUnderPadding) {
  ModelConfig config;
  config.bucketing.enabled = true;
  config.bucketing.dim = "seq";
  config.bucketing.multiple_of = 16;
  Status load;
  auto core = Start(kMean, config, &load);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(load.error().message.find("bucketing refused: output 'y' changes when inputs are padded along 'seq'"),
            std::string::npos)
      << load.error().message;
  EXPECT_NE(load.error().message.find("max abs error"), std::string::npos);
  EXPECT_NE(load.error().message.find("no mask input"), std::string::npos);

  config.bucketing.dim = "sequence";
  auto other = Start(kMean, config, &load);
  ASSERT_FALSE(load.ok());
  EXPECT_NE(load.error().message.find("'sequence' is not a symbolic dimension"), std::string::npos);
}

TEST_F(ServeCore, AFixedBatchModelServesWithBatchingOff) {
  auto core = Start(kFixed, ModelConfig{});
  auto config = core->Config("m");
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->batching.enabled);
  InferRequest r;
  r.model_name = "m";
  r.inputs.push_back({"x", Tensor::FromVector<float>({1, 4}, {-1, 2, -3, 4}).value()});
  auto answer = core->Infer(std::move(r)).get();
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  auto y = answer->outputs[0].tensor.values<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()), (std::vector<float>{0, 2, 0, 4}));
  auto metadata = core->Metadata("m", "1");
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->inputs[0].shape, (std::vector<std::int64_t>{1, 4}));
  EXPECT_FALSE(core->Metadata("m", "2").ok());
}

TEST_F(ServeCore, ShutdownAnswersEveryAcceptedRequestAndRejectsLaterOnes) {
  ModelConfig config;
  config.batching.max_queue_delay_us = 1000000;  // only draining makes these run soon
  config.batching.max_batch_size = 64;
  auto core = Start(kMasked, config);
  std::vector<std::future<Result<InferResponse>>> answers;
  std::vector<InferRequest> requests;
  for (int i = 0; i < 50; ++i) requests.push_back(MaskedRequest(1, 4, i));
  for (auto& r : requests) answers.push_back(core->Infer(Clone(r)));
  core->Shutdown();
  for (std::size_t i = 0; i < answers.size(); ++i) ExpectMaskedAnswer(requests[i], answers[i].get());
  auto late = core->Infer(MaskedRequest(1, 4, 99)).get();
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().kind, ErrorKind::kUnavailable);
}

// One 3 MB request naming a 1 MiB output 200,000 times made the server build a 200 GB answer.
TEST_F(ServeCore, AnOutputNamedTwiceIsRefusedNamingIt) {
  auto core = Start(kMasked, ModelConfig{});
  InferRequest twice = MaskedRequest(1, 4, 1);
  twice.outputs = {"y", "pooled", "y"};
  auto r = core->Infer(std::move(twice)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(r.error().message, "output 'y' is asked for twice: name each output once");
  InferRequest many = MaskedRequest(1, 4, 1);
  many.outputs.assign(200000, "pooled");
  r = core->Infer(std::move(many)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "output 'pooled' is asked for twice: name each output once");
  EXPECT_EQ(MetricValue(*core, "nv_inference_exec_count"), 0);
}

// The answer's size is known before the run when the model's output dimensions follow from its
// inputs' (here 'batch' and 'seq'): over the limit, nothing runs.
TEST_F(ServeCore, AnAnswerOverTheLimitIsRefusedBeforeItRuns) {
  CoreOptions options{2};
  options.limits.max_answer_bytes = 4096;
  auto core = Start(kMasked, ModelConfig{}, nullptr, options);
  auto r = core->Infer(MaskedRequest(4, 300, 1)).get();  // y: 4 x 300 floats, 4.7 KiB
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(r.error().message.find("the answer would take 4.7 KiB (output 'y' FP32[4, 300] 4.7 KiB), over the "
                                   "server's limit of 4.0 KiB per answer (--max-answer-mb)"),
            std::string::npos)
      << r.error().message;
  EXPECT_EQ(MetricValue(*core, "nv_inference_exec_count"), 0);
  // Asking only for the small output fits.
  InferRequest pooled = MaskedRequest(4, 300, 1);
  pooled.outputs = {"pooled"};
  ASSERT_TRUE(core->Infer(std::move(pooled)).get().ok());
  // The front end's cost counts: as text (25 bytes a value) 2 x 100 floats take 5,000 bytes.
  InferRequest text = MaskedRequest(2, 100, 1);
  text.answer_cost = [](std::string_view, DataType, std::span<const std::int64_t> shape) {
    return std::uint64_t{25} * static_cast<std::uint64_t>(shape[0] * (shape.size() > 1 ? shape[1] : 1));
  };
  r = core->Infer(std::move(text)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("(output 'y' FP32[2, 100] 4.9 KiB as text, its values 800 B)"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("or for binary data"), std::string::npos) << r.error().message;
}

// When the outputs' sizes are known only once the model has run, the answer is weighed before it
// is copied or encoded.
TEST_F(ServeCore, AnAnswerOverTheLimitIsRefusedOnceItsSizeIsKnown) {
  constexpr const char* kWider = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, n] x) => (float[batch, wide] y) {
  y = Concat<axis = 1>(x, x, x, x)
}
)";
  CoreOptions options{2};
  options.limits.max_answer_bytes = 1000;
  auto core = Start(kWider, ModelConfig{}, nullptr, options);
  InferRequest small;
  small.model_name = "m";
  small.inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, {1, 50}).value()});  // y: 800 bytes
  ASSERT_TRUE(core->Infer(std::move(small)).get().ok());
  InferRequest large;
  large.model_name = "m";
  large.inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, {1, 100}).value()});  // y: 1,600 bytes
  auto r = core->Infer(std::move(large)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(r.error().message.find("the answer would take 1.6 KiB (output 'y' FP32[1, 400] 1.6 KiB)"),
            std::string::npos)
      << r.error().message;
}

// Rows beyond max_batch_size split into several runs; [2^40, 0] would have split into 2^36 of
// them (no bytes to send, but hours of runs ahead of every later request). Empty inputs with huge
// dimensions are refused whatever the model.
TEST_F(ServeCore, RequestsAskingForEndlessRunsAreRefused) {
  ModelConfig config;
  config.batching.max_batch_size = 2;
  auto core = Start(kMasked, config);
  auto r = core->Infer(MaskedRequest(2049, 1, 1)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(r.error().message,
            "input 'x' has 2049 rows: model 'm' runs at most 2 rows at a time (batching.max_batch_size) and one "
            "request may take at most 1024 runs, so send at most 2048 rows per request");
  ASSERT_TRUE(core->Infer(MaskedRequest(2048, 1, 1)).get().ok());

  InferRequest empty;
  empty.model_name = "m";
  empty.inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, {std::int64_t{1} << 40, 0}).value()});
  empty.inputs.push_back({"attention_mask", Tensor::Zeros(DataType::kInt64, {std::int64_t{1} << 40, 0}).value()});
  r = core->Infer(std::move(empty)).get();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("input 'x' has shape [1099511627776, 0]: it holds no values"), std::string::npos)
      << r.error().message;
}

// A timeout of 9.2e15 us (or more) was taken, and its deadline, in nanoseconds, wrapped into the
// past: every such request was answered 503 "waited 5 us ... past its timeout".
TEST_F(ServeCore, TimeoutsPastAnHourAreRefusedNotWrapped) {
  auto core = Start(kMasked, ModelConfig{});
  for (std::int64_t timeout : {std::int64_t{9'223'372'036'854'775}, std::int64_t{3'600'000'001}, INT64_MAX}) {
    InferRequest r = MaskedRequest(1, 4, 1);
    r.timeout_us = timeout;
    auto answer = core->Infer(std::move(r)).get();
    ASSERT_FALSE(answer.ok()) << timeout;
    EXPECT_EQ(answer.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_EQ(answer.error().message,
              fmt::format("timeout {} is out of range: give the queue deadline in microseconds, 1 to 3600000000 (an "
                          "hour), or 0 for the model's own (batching.timeout_us)",
                          timeout));
  }
  InferRequest hour = MaskedRequest(1, 4, 1);
  hour.timeout_us = 3'600'000'000;
  EXPECT_TRUE(core->Infer(std::move(hour)).get().ok());
  // The deadline's arithmetic saturates whatever it is given.
  EXPECT_EQ(DeadlineAfter(Clock::now(), std::chrono::microseconds(INT64_MAX)), TimePoint::max());
  const TimePoint now = Clock::now();
  EXPECT_EQ(DeadlineAfter(now, std::chrono::microseconds(5)), now + std::chrono::microseconds(5));
}

TEST(ServeBucketing, CopyRowsPadsAndCuts) {
  // Two rows of length 3 into a batch of length 5 at rows 1..2, then back out.
  const std::vector<float> src = {1, 2, 3, 4, 5, 6};
  std::vector<float> batch(4 * 5, 0);
  const std::vector<std::int64_t> src_shape{2, 3}, batch_shape{4, 5};
  CopyRows(reinterpret_cast<const std::byte*>(src.data()), src_shape, 0, reinterpret_cast<std::byte*>(batch.data()),
           batch_shape, 1, 2, sizeof(float));
  EXPECT_EQ(batch, (std::vector<float>{0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0}));
  std::vector<float> back(3, 0);
  const std::vector<std::int64_t> back_shape{1, 3};
  CopyRows(reinterpret_cast<const std::byte*>(batch.data()), batch_shape, 2, reinterpret_cast<std::byte*>(back.data()),
           back_shape, 0, 1, sizeof(float));
  EXPECT_EQ(back, (std::vector<float>{4, 5, 6}));
  // Rank 3, cut along the middle axis only.
  std::vector<float> cube(2 * 4 * 2);
  for (std::size_t i = 0; i < cube.size(); ++i) cube[i] = static_cast<float>(i);
  std::vector<float> cut(2 * 2 * 2);
  const std::vector<std::int64_t> cube_shape{2, 4, 2}, cut_shape{2, 2, 2};
  CopyRows(reinterpret_cast<const std::byte*>(cube.data()), cube_shape, 0, reinterpret_cast<std::byte*>(cut.data()),
           cut_shape, 0, 2, sizeof(float));
  EXPECT_EQ(cut, (std::vector<float>{0, 1, 2, 3, 8, 9, 10, 11}));
}

}  // namespace
}  // namespace ortkit::serve

namespace ortkit::serve {
namespace {

// paddle2onnx and old converters name unnamed dimensions "?": each is its own axis. A request of
// [1, 3, 48, 192] to an OCR-style input [-1, 3, ?, ?] is well formed.
TEST(ServePlaceholderDims, EachQuestionMarkIsItsOwnAxis) {
  auto runtime = Runtime::Create().value();
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    ocr (float[N, 3, H, W] x) => (float[N, 3, H, W] y) {
      y = Relu (x)
    }
  )");
  for (int axis : {2, 3}) {
    model.mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(axis)
        ->set_dim_param("?");
    model.mutable_graph()
        ->mutable_output(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(axis)
        ->set_dim_param("?");
  }
  testing::TempDir dir;
  ModelConfig config;
  config.batching.max_queue_delay_us = 20000;  // requests arriving together share a batching window
  ModelSource source{"m", dir.WriteModel("ocr.onnx", model), config};
  auto core = InferenceCore::Create(*runtime, {source}, CoreOptions{2});
  ASSERT_TRUE(core.ok());
  Status loaded = (*core)->LoadModels();
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  InferRequest r;
  r.model_name = "m";
  r.inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, {1, 3, 48, 192}).value()});
  auto answer = (*core)->Infer(std::move(r)).get();
  ASSERT_TRUE(answer.ok()) << answer.error().message;

  // Two lines of other widths at once: batched only where their shapes agree, each answered at its own shape.
  std::vector<std::vector<std::int64_t>> shapes = {{1, 3, 48, 192}, {2, 3, 48, 100}, {1, 3, 32, 192}};
  std::vector<std::future<Result<InferResponse>>> answers;
  for (const auto& shape : shapes) {
    InferRequest line;
    line.model_name = "m";
    line.inputs.push_back({"x", Tensor::Zeros(DataType::kFloat32, shape).value()});
    answers.push_back((*core)->Infer(std::move(line)));
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    auto got = answers[i].get();
    ASSERT_TRUE(got.ok()) << got.error().message;
    ASSERT_EQ(got->outputs.size(), 1u);
    EXPECT_EQ(got->outputs[0].tensor.shape(), shapes[i]);
  }
}

}  // namespace
}  // namespace ortkit::serve
