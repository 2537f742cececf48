#include "ortkit/bench/side_by_side.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "ortkit/runtime/repeated_run.h"

namespace ortkit {

namespace {

// Runs per round so that the slowest session's turn takes about a second.
std::int64_t RunsPerSecond(std::vector<RepeatedRun>& runs) {
  double slowest_ms = 0;
  for (auto& run : runs) {
    const auto begin = std::chrono::steady_clock::now();
    if (!run.Run().ok()) return 3;
    slowest_ms = std::max(slowest_ms,
                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count());
  }
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(1000.0 / std::max(slowest_ms, 1e-3)), 3, 50);
}

}  // namespace

Result<std::vector<SideBySideSamples>> MeasureSideBySide(std::span<Session* const> sessions,
                                                         std::span<const std::vector<NamedTensor>* const> inputs,
                                                         const SideBySideOptions& options) {
  if (sessions.size() != inputs.size() || sessions.empty() || options.rounds < 1 || options.runs_per_round < 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "side by side: one input set per session, at least one round and run");
  }
  std::vector<RepeatedRun> runs;
  runs.reserve(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto run = RepeatedRun::Prepare(*sessions[i], *inputs[i]);
    if (!run.ok()) return MakeError(run.error().kind, fmt::format("session {}: {}", i, run.error().message));
    runs.push_back(std::move(*run));
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Status first = runs[i].RunFirst();
    for (std::int64_t w = 0; first.ok() && w < options.warmup; ++w) first = runs[i].Run();
    if (!first.ok()) return MakeError(first.error().kind, fmt::format("session {}: {}", i, first.error().message));
  }
  const std::int64_t runs_per_round = options.runs_per_round > 0 ? options.runs_per_round : RunsPerSecond(runs);
  std::vector<SideBySideSamples> result(runs.size());
  const double turns = static_cast<double>(options.rounds) * static_cast<double>(runs.size());
  int turn = 0;
  for (int round = 0; round < options.rounds; ++round) {
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(round)) % runs.size();
      std::vector<double> samples;
      for (std::int64_t r = 0; r < runs_per_round; ++r) {
        const auto begin = std::chrono::steady_clock::now();
        const Status ran = runs[i].Run();
        if (!ran.ok()) return MakeError(ran.error().kind, fmt::format("session {}: {}", i, ran.error().message));
        samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count());
      }
      result[i].round_p50_ms.push_back(ComputeStatistic(samples, SampleStatistic::kP50));
      result[i].samples_ms.insert(result[i].samples_ms.end(), samples.begin(), samples.end());
      if (options.progress) options.progress(++turn / turns);
    }
  }
  for (auto& r : result) r.latency = Summarize(r.samples_ms);
  return result;
}

SpeedUp CompareSpeed(const SideBySideSamples& baseline, const SideBySideSamples& candidate, double min_change) {
  SpeedUp s;
  if (baseline.samples_ms.empty() || candidate.samples_ms.empty()) return s;
  // BootstrapRatio gives p50(b) / p50(a): with a = candidate and b = baseline, the speed-up itself.
  const RatioInterval band = BootstrapRatio(candidate.samples_ms, baseline.samples_ms, SampleStatistic::kP50);
  s.ratio = band.ratio;
  s.low = band.low;
  s.high = band.high;
  s.faster = band.low > 1 + min_change;
  s.slower = band.high < 1 - min_change;
  return s;
}

}  // namespace ortkit
