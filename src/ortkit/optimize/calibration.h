#pragma once
// Calibration for static quantisation: the range of every activation that is to be quantised, found by
// running the model on the user's samples one at a time. Each sample is read with the readers `run`
// uses, run, and reduced before the next is read: the minimum and maximum come from ReduceMin/ReduceMax
// nodes added to the graph (scalars out, not the tensors), and the percentile and entropy methods keep
// a histogram per tensor of fixed size. Memory stays that of one sample whatever their number.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/tensor.h"
#include "ortkit/tensor/tensor_spec.h"

namespace ortkit {

enum class CalibrationMethod {
  kMinMax,      ///< the extremes seen over every sample
  kPercentile,  ///< both tails cut at a percentile of the values seen (outliers do not widen the range)
  kEntropy,     ///< the threshold whose quantised distribution loses the least information (KL divergence)
};
const char* ToString(CalibrationMethod method);  ///< "minmax", "percentile", "entropy"
/// kInvalidArgument naming the text and the methods for anything else.
Result<CalibrationMethod> ParseCalibrationMethod(std::string_view text);

/// The samples to calibrate with, found from the paths given, read one at a time.
class CalibrationSamples {
 public:
  /// Each path is one sample (an .npz, a test_data_set_N folder, a folder of NAME.npy, a .pb for a
  /// one-input model) or a folder of samples (test_data_set_* folders, .npz files, or folders each
  /// holding one sample), in name order. kInvalidArgument naming the path when it holds none.
  static Result<CalibrationSamples> List(const std::vector<std::filesystem::path>& paths);

  std::size_t size() const { return samples_.size(); }
  const std::filesystem::path& path(std::size_t i) const { return samples_[i]; }

  /// Sample `i` for the model's inputs `specs`: every input must be in it (none is synthesised), with the
  /// element type, rank and fixed dimensions declared. kInvalidArgument names the sample and the input.
  Result<std::vector<NamedTensor>> Read(std::size_t i, const std::vector<TensorSpec>& specs,
                                        const onnx::ModelProto& model) const;

 private:
  std::vector<std::filesystem::path> samples_;
};

struct TensorRange {
  float min = 0;
  float max = 0;
};

struct CalibrationRanges {
  std::map<std::string, TensorRange> ranges;  ///< by tensor name; every range holds 0
  std::int64_t samples = 0;
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double seconds = 0;
  std::int64_t peak_rss_bytes = 0;  ///< this process's peak resident set when calibration ended
};

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.999;  ///< kPercentile: the share of values kept inside the range, in percent
  int bins = 2048;             ///< histogram bins (kPercentile, kEntropy)
  SessionConfig session;       ///< set by optimize to the candidates' own
};

/// The ranges of `tensors` (float values of `model`'s main graph) over every sample, in one session of
/// `model` with ReduceMin/ReduceMax added (and the tensors exposed for the histogram methods), written to
/// `scratch` for the session to load and removed. `model` is changed only while it is written: it is the
/// same on return. Errors: a sample that cannot be read or does not fit the model (kInvalidArgument), a
/// run that fails (kRuntime, naming the sample).
Result<CalibrationRanges> Calibrate(Runtime& runtime, onnx::ModelProto& model, const std::vector<std::string>& tensors,
                                    const CalibrationSamples& samples, const CalibrationOptions& options,
                                    const std::filesystem::path& scratch);

/// The range a histogram of `counts` over [low, high] gives for `method` (kPercentile, kEntropy), always
/// holding 0. Exposed for tests.
TensorRange RangeFromHistogram(const std::vector<double>& counts, float low, float high, CalibrationMethod method,
                               double percentile);

}  // namespace ortkit
