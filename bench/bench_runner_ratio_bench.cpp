// Does `ortkit bench` measure faithfully? A raw Ort::Session::Run loop and ortkit's runner
// (RunBenchmark, as `ortkit bench` calls it) on the same session, the same inputs and the same
// session options, side by side in one process. The runner must report at least 0.97 of the raw
// loop's throughput.
//
//   build-X/bench/bench_runner_ratio_bench [MODEL.onnx ...] [--pairs=N] [--runs=N] [google benchmark flags]
//
// Without models it writes demo-encoder and bert-tiny with ../bin/ortkit_make_model next to this
// binary. Two measurements: Google Benchmark cases BM_RawLoop / BM_OrtkitRunner (manual time:
// a block of runs per iteration, runs/s as items_per_second), then the paired summary: raw and
// runner blocks alternating (order swapped every pair, so drift and turbo hit both alike), the
// ratio runner/raw per pair, and the median ratio printed with its spread.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <onnxruntime_cxx_api.h>

#include "ortkit/bench/runner.h"
#include "ortkit/model/model_file.h"
#include "ortkit/runtime/ort_handles.h"  // the raw session, to compare ortkit's path with
#include "ortkit/runtime/run.h"
#include "ortkit/tensor/synthesis.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  std::string name;  ///< "demo-encoder/batch=1"
  std::unique_ptr<ortkit::Session> session;
  std::vector<ortkit::NamedTensor> inputs;
  // The raw loop's view of the same inputs: wrapped once, outside the timed region, as perftest does.
  std::vector<const char*> input_names;
  std::vector<Ort::Value> input_values;
  std::vector<std::string> output_storage;
  std::vector<const char*> output_names;
};

std::unique_ptr<ortkit::Runtime> g_runtime;
std::vector<std::unique_ptr<Case>> g_cases;
int g_block_runs = 200;

void Die(const std::string& message) {
  std::fprintf(stderr, "bench_runner_ratio_bench: %s\n", message.c_str());
  std::exit(2);
}

template <typename T>
T Must(ortkit::Result<T> result, const std::string& what) {
  if (!result.ok()) Die(what + ": " + result.error().message);
  return std::move(result).value();
}

void AddCase(const std::filesystem::path& model, std::int64_t batch, std::int64_t seq_len) {
  auto c = std::make_unique<Case>();
  c->name = fmt::format("{}/batch={}", model.stem().string(), batch);
  ortkit::SessionConfig config;  // the same options for both loops: the session is shared
  config.intra_op_threads = 1;
  config.inter_op_threads = 1;
  c->session = Must(ortkit::Session::Create(*g_runtime, model, config), "loading " + model.string());
  auto load = ortkit::LoadModelFile(model);
  if (!load.model) Die("cannot parse " + model.string());
  auto specs = Must(ortkit::DescribeInputs(*c->session), "describing inputs");
  ortkit::InputPlan plan;
  for (const auto& spec : specs) {
    for (std::size_t d = 0; d < spec.dims.size(); ++d) {
      if (spec.dims[d].fixed() || spec.dims[d].symbol.empty()) continue;
      plan.dims[spec.dims[d].symbol] = d == 0 ? batch : seq_len;
    }
  }
  c->inputs = Must(ortkit::SynthesizeInputs(specs, ortkit::AnalyzeInputValues(*load.model->proto), plan), "inputs");
  const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  for (auto& in : c->inputs) {
    c->input_names.push_back(in.name.c_str());
    c->input_values.push_back(Ort::Value::CreateTensor(memory, in.tensor.data(), in.tensor.byte_size(),
                                                       in.tensor.shape().data(), in.tensor.shape().size(),
                                                       static_cast<ONNXTensorElementDataType>(in.tensor.type())));
  }
  for (auto& spec : Must(ortkit::DescribeOutputs(*c->session), "describing outputs"))
    c->output_storage.push_back(spec.name);
  for (const auto& n : c->output_storage) c->output_names.push_back(n.c_str());
  g_cases.push_back(std::move(c));
}

/// The raw loop: what a user would write against the C++ API. Returns runs per second.
double RawBlock(Case& c, int runs) {
  Ort::Session& session = ortkit::OrtSession(*c.session);
  const Ort::RunOptions options{nullptr};
  const auto start = Clock::now();
  for (int i = 0; i < runs; ++i) {
    auto outputs = session.Run(options, c.input_names.data(), c.input_values.data(), c.input_values.size(),
                               c.output_names.data(), c.output_names.size());
    benchmark::DoNotOptimize(outputs);
  }
  return runs / std::chrono::duration<double>(Clock::now() - start).count();
}

/// The runner as `ortkit bench` calls it; returns the throughput it reports.
double RunnerBlock(Case& c, int runs) {
  ortkit::BenchOptions options;
  options.iterations = runs;
  options.warmup = 0;
  auto result = ortkit::RunBenchmark(*c.session, c.inputs, options);
  if (!result.ok()) Die(c.name + ": " + result.error().message);
  return result->runs_per_s;
}

void BM_RawLoop(benchmark::State& state, Case* c) {
  for (auto _ : state) state.SetIterationTime(g_block_runs / RawBlock(*c, g_block_runs));
  state.SetItemsProcessed(state.iterations() * g_block_runs);
}

void BM_OrtkitRunner(benchmark::State& state, Case* c) {
  for (auto _ : state) state.SetIterationTime(g_block_runs / RunnerBlock(*c, g_block_runs));
  state.SetItemsProcessed(state.iterations() * g_block_runs);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string Pinning() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "unknown";
  std::string cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) cpus += (cpus.empty() ? "" : ",") + std::to_string(i);
  }
  return cpus;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> models;
  int pairs = 15;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("--pairs="))
      pairs = std::stoi(arg.substr(8));
    else if (arg.starts_with("--runs="))
      g_block_runs = std::stoi(arg.substr(7));
    else if (!arg.starts_with("--"))
      models.emplace_back(arg);
    else
      rest.push_back(argv[i]);
  }
  g_runtime = Must(ortkit::Runtime::Create(), "creating the runtime");
  if (models.empty()) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("ortkit-ratio-{}", ::getpid());
    std::filesystem::create_directories(dir);
    const auto maker =
        std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "bin" / "ortkit_make_model";
    for (const char* kind : {"demo-encoder", "bert-tiny"}) {
      const auto out = dir / (std::string(kind) + ".onnx");
      const std::string command = fmt::format("'{}' {} '{}' >/dev/null", maker.string(), kind, out.string());
      if (std::system(command.c_str()) != 0)
        Die("cannot write " + out.string() + " with " + maker.string() + " (build ortkit_make_model)");
      models.push_back(out);
    }
  }
  for (const auto& model : models) {
    for (std::int64_t batch : {1, 16}) AddCase(model, batch, 32);
  }
  for (auto& c : g_cases) {
    for (int i = 0; i < 20; ++i) RawBlock(*c, 1);  // warm both paths' shared session once
    benchmark::RegisterBenchmark(("BM_RawLoop/" + c->name).c_str(), BM_RawLoop, c.get())
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_OrtkitRunner/" + c->name).c_str(), BM_OrtkitRunner, c.get())
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  int bench_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&bench_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const auto wall_start = Clock::now();
  std::printf(
      "\nPaired ratio (ortkit runner runs/s ÷ raw Ort::Session::Run loop runs/s), %d pairs of %d runs each, "
      "1 intra-op thread, pinned to CPUs %s:\n",
      pairs, g_block_runs, Pinning().c_str());
  std::printf("  %-26s %12s %12s %8s %8s %8s\n", "case", "raw runs/s", "runner runs/s", "median", "min", "max");
  bool all_pass = true;
  for (auto& c : g_cases) {
    std::vector<double> ratios, raw, runner;
    for (int p = 0; p < pairs; ++p) {
      double r = 0, o = 0;
      if (p % 2 == 0) {
        r = RawBlock(*c, g_block_runs);
        o = RunnerBlock(*c, g_block_runs);
      } else {
        o = RunnerBlock(*c, g_block_runs);
        r = RawBlock(*c, g_block_runs);
      }
      raw.push_back(r);
      runner.push_back(o);
      ratios.push_back(o / r);
    }
    const double median = Median(ratios);
    all_pass = all_pass && median >= 0.97;
    std::printf("  %-26s %12.1f %12.1f %8.3f %8.3f %8.3f%s\n", c->name.c_str(), Median(raw), Median(runner), median,
                *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()),
                median >= 0.97 ? "" : "  < 0.97");
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  const double cpu =
      seconds(after.ru_utime) + seconds(after.ru_stime) - seconds(before.ru_utime) - seconds(before.ru_stime);
  const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
  std::printf("peak RSS %.1f MiB; CPU utilisation during the pairs %.0f%% of one core\n",
              static_cast<double>(ortkit::PeakResidentBytes()) / (1 << 20), 100 * cpu / wall);
  std::printf("target: median ratio >= 0.97 — %s\n", all_pass ? "met" : "NOT met");
  return all_pass ? 0 : 1;
}
