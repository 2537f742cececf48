#pragma once
// Measuring models against each other on this machine in one run: interleaved rounds, each running
// every session in turn on its inputs, so that whatever else the machine does at a moment (another
// process, a frequency change) falls on all of them alike. The raw samples are kept; a ratio's noise
// band is bootstrapped from them (core/sample_stats.h).

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/core/sample_stats.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

struct SideBySideOptions {
  int rounds = 5;
  /// Timed runs of each session in each round; 0: about a second's worth, from the slowest session's first
  /// timed run (at least 3, at most 50).
  std::int64_t runs_per_round = 0;
  std::int64_t warmup = 3;  ///< untimed runs of each session before the first round
  /// After each session's turn in a round, with the fraction of all turns done (0..1).
  std::function<void(double fraction)> progress;
};

/// One session's figures.
struct SideBySideSamples {
  std::vector<double> samples_ms;    ///< every timed run, round after round
  std::vector<double> round_p50_ms;  ///< the median of each round
  LatencyStats latency;              ///< Summarize(samples_ms)
};

/// Runs `sessions[i]` on `inputs[i]` (wrapped once, outside the timed region) in `rounds` rounds. The
/// order within a round rotates from round to round, so that no session always runs right after the
/// same other one. Fails with the first run's error, naming the session by its index.
Result<std::vector<SideBySideSamples>> MeasureSideBySide(std::span<Session* const> sessions,
                                                         std::span<const std::vector<NamedTensor>* const> inputs,
                                                         const SideBySideOptions& options);

/// How much faster `candidate` is than `baseline`: the ratio of their median latencies (baseline over
/// candidate: 2 is twice as fast) with a 95% bootstrap band, and whether it is faster beyond the noise
/// (the band's lower end above 1 + min_change).
struct SpeedUp {
  double ratio = 1;
  double low = 1;
  double high = 1;
  bool faster = false;
  bool slower = false;  ///< the band's upper end below 1 - min_change
};
SpeedUp CompareSpeed(const SideBySideSamples& baseline, const SideBySideSamples& candidate, double min_change = 0.02);

}  // namespace ortkit
