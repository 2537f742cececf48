// sweep_overhead MODEL [ROUNDS]: what a dynamic-shape sweep costs beyond its runs (bench/sweep_overhead.sh).
//
// On one session, each round times two things side by side:
//   bare   the 12 batch sizes run one after the other with Ort::Session::Run on inputs made beforehand
//   sweep  RunSweep over the same 12 batch sizes (input synthesis, NaN/Inf and dimension checks included)
// and prints the median of each and their ratio. The sweep runs with batch consistency off, because
// the row-alone runs it adds are extra model runs, not overhead; a third column shows it switched on
// for reference. Sessions created: one, whatever the number of shapes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <onnxruntime_cxx_api.h>

#include "ortkit/model/model_file.h"
#include "ortkit/runtime/ort_handles.h"  // the raw session, to compare ortkit's path with
#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/synthesis.h"
#include "ortkit/validate/sweep.h"

namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::int64_t> kBatches = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int Fail(const std::string& what, const ortkit::Error& error) {
  std::fprintf(stderr, "sweep_overhead: %s: %s\n", what.c_str(), error.message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sweep_overhead MODEL.onnx [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  auto load = ortkit::LoadModelFile(argv[1]);
  if (!load.model) {
    std::fprintf(stderr, "sweep_overhead: %s is not a usable model\n", argv[1]);
    return 1;
  }
  const onnx::ModelProto& model = *load.model->proto;
  auto runtime = ortkit::Runtime::Create();
  if (!runtime.ok()) return Fail("starting ONNX Runtime", runtime.error());
  const auto created = Clock::now();
  auto session = ortkit::Session::Create(**runtime, argv[1], ortkit::SessionConfig{});
  if (!session.ok()) return Fail("creating the session", session.error());
  const double create_s = SecondsSince(created);
  auto specs = ortkit::DescribeInputs(**session);
  if (!specs.ok()) return Fail("describing the inputs", specs.error());
  const auto hints = ortkit::AnalyzeInputValues(model);

  // The bare runs' inputs, made outside the timed region.
  std::vector<std::vector<ortkit::NamedTensor>> bare_inputs;
  for (auto batch : kBatches) {
    ortkit::InputPlan plan;
    plan.dims["batch"] = batch;
    auto inputs = ortkit::SynthesizeInputs(*specs, hints, plan);
    if (!inputs.ok()) return Fail("synthesising inputs", inputs.error());
    bare_inputs.push_back(std::move(*inputs));
  }
  Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  Ort::AllocatorWithDefaultOptions allocator;
  const std::string input_name = (*specs)[0].name;
  const std::string output_name = ortkit::OrtSession(**session).GetOutputNameAllocated(0, allocator).get();
  const char* input_names[] = {input_name.c_str()};
  const char* output_names[] = {output_name.c_str()};
  auto bare_round = [&] {
    const auto start = Clock::now();
    for (auto& inputs : bare_inputs) {
      auto& tensor = inputs[0].tensor;
      Ort::Value value =
          Ort::Value::CreateTensor(memory, tensor.data(), tensor.byte_size(), tensor.shape().data(),
                                   tensor.shape().size(), static_cast<ONNXTensorElementDataType>(tensor.type()));
      auto outputs =
          ortkit::OrtSession(**session).Run(Ort::RunOptions{nullptr}, input_names, &value, 1, output_names, 1);
    }
    return SecondsSince(start);
  };

  ortkit::SweepOptions options;
  options.axes = {ortkit::SweepAxis{"batch", kBatches}};
  bool sweep_failed = false;
  auto sweep_round = [&](bool batch_consistency) {
    options.batch_consistency = batch_consistency;
    const auto start = Clock::now();
    auto report = ortkit::RunSweep(**session, model, options);
    const double seconds = SecondsSince(start);
    if (!report.ok() || !report->Passed() || report->cells.size() != kBatches.size()) sweep_failed = true;
    return seconds;
  };

  bare_round();  // warm-up: the first run of each shape plans its memory
  sweep_round(false);
  std::vector<double> bare, sweep, sweep_checked;
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(bare_round());
    sweep.push_back(sweep_round(false));
    sweep_checked.push_back(sweep_round(true));
  }
  if (sweep_failed) {
    std::fprintf(stderr, "sweep_overhead: a sweep cell failed; the figures would not be comparable\n");
    return 1;
  }
  const double bare_s = Median(bare), sweep_s = Median(sweep), checked_s = Median(sweep_checked);
  std::printf("shapes: %zu batch sizes (1..64), sessions created: 1 (%.2f s), rounds: %d, medians:\n", kBatches.size(),
              create_s, rounds);
  std::printf("  sum of the 12 bare runs      %8.1f ms\n", bare_s * 1e3);
  std::printf("  sweep                        %8.1f ms   ratio %.3f (target <= 1.2)\n", sweep_s * 1e3,
              sweep_s / bare_s);
  std::printf("  sweep + batch consistency    %8.1f ms   ratio %.3f (adds 3 row-alone runs per batched cell)\n",
              checked_s * 1e3, checked_s / bare_s);
  return sweep_s / bare_s <= 1.2 ? 0 : 1;
}
