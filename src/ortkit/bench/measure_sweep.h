#pragma once
// Measuring a sweep of shapes in one set of sessions, point after point, and profiling the same
// points in a separate profiled session. The caller makes the inputs of each point (from files or
// synthesised), so that this module knows nothing of the command line.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ortkit/bench/report.h"
#include "ortkit/bench/runner.h"
#include "ortkit/bench/shape_sweep.h"
#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/runtime/profile.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// The inputs of one shape point, and how each was made (for the report).
struct PointInputs {
  std::vector<NamedTensor> tensors;
  std::vector<PointInput> inputs;
};

/// Makes the inputs of a shape point; an error means they cannot be made at that point.
using InputsForPoint = std::function<Result<PointInputs>(const ShapePoint& point)>;

/// Why a sweep ended before its last point.
enum class SweepStopCause {
  kInputs,        ///< the inputs of a point could not be made
  kInvalidInput,  ///< the session rejected the inputs (kInvalidArgument from RunBenchmark)
  kRuntime,       ///< the first run of a point failed
  kRunFailed,     ///< a run failed after measuring had begun; the point's figures are kept
};

struct SweepStop {
  SweepStopCause cause = SweepStopCause::kRuntime;
  const ShapePoint* point = nullptr;  ///< the point it stopped at, in the caller's list
  std::string reason;                 ///< for the report: "batch=8: cannot make inputs: ..."
  Error error;                        ///< the error itself
  /// kInvalidInput and kRuntime: the failure as a diagnosis ("runtime.invalid-input", or
  /// TranslateRuntimeError's).
  std::optional<Diagnosis> diagnosis;
};

struct SweepOutcome {
  std::vector<MeasuredPoint> points;  ///< the points measured, in order (throughput_vs_batch1 unset)
  std::optional<SweepStop> stop;
};

struct MeasureSweepOptions {
  /// How each point is measured; rows_per_run and progress are set per point.
  BenchOptions run;
  std::filesystem::path model;  ///< named in diagnoses
  /// Called from the calling thread while a point is measured: its index and the fraction done.
  std::function<void(std::size_t index, double fraction)> progress;
  /// Called after each point's measuring ends, however it ended.
  std::function<void()> point_done;
};

/// Measures `points` in order on `sessions` (RunBenchmark for each). Stops at the first point
/// whose inputs cannot be made or whose run fails, keeping the points measured before it (and
/// the failed point's figures when the failure came after measuring began).
SweepOutcome MeasureSweep(std::span<Session* const> sessions, const std::vector<ShapePoint>& points,
                          const InputsForPoint& inputs_for_point, const MeasureSweepOptions& options);

/// Profiles `runs_per_point` runs of every point, in a session of its own created with `config`
/// plus profiling (so that the profiler's overhead stays out of MeasureSweep's figures); the
/// trace file starts with `profile_prefix`. Reads the trace back for `config.provider`.
Result<ProfileReport> ProfileSweep(Runtime& runtime, const std::filesystem::path& model, SessionConfig config,
                                   const std::string& profile_prefix, const std::vector<ShapePoint>& points,
                                   const InputsForPoint& inputs_for_point, std::int64_t runs_per_point);

}  // namespace ortkit
