#pragma once
// Sizes the model itself accepts, found by running it: a guessed size that fails is grown until the
// model runs ("needs at least N"), a sweep extreme that fails is narrowed to the largest size that
// runs ("runs up to N"), and unnamed axes that must be equal are found to be one axis. A size the
// model refuses is a requirement to report, not a defect; the batch axis is never searched, since a
// batch that fails is one.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/runtime/run.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit {

/// A size requirement found by running: `dim` needs at least `at_least` (sizes below fail), or runs
/// up to `at_most` (sizes above fail). `failed_size` is the size that failed and `error` the runtime's
/// message there.
struct SizeFinding {
  std::string dim;
  std::string input;  ///< an input that has the dimension, and its axis
  int axis = -1;
  std::int64_t at_least = 0;
  std::int64_t at_most = 0;
  std::int64_t failed_size = 0;
  std::int64_t step = 1;  ///< sizes searched in multiples of this (the model's stride)
  std::string error;

  std::string Describe() const;  ///< "'seq_len' (input 'ids' axis 1) runs up to 128: at 256 ..."
  nlohmann::json ToJson() const;
};

struct ShapeSearch {
  std::vector<TensorSpec> specs;              ///< unnamed axes named (INPUT:AXIS), merged where found equal
  InputPlan base;                             ///< the plan given, sizes the search grew added to `grown`
  std::map<std::string, std::int64_t> grown;  ///< sizes that replace a guess that failed
  std::vector<SizeFinding> findings;
  std::map<std::string, std::int64_t> steps;  ///< sizes that come in multiples (SizeSteps)
  std::vector<std::string> notes;             ///< "input 'a' axis 0 and input 'b' axis 0 must be equal: ..."
  /// Axes that run only at equal sizes, each group by its original names; search.specs names them all
  /// after the first.
  std::vector<std::vector<std::string>> tied;
  bool runs = false;  ///< the plan (with `grown`) runs

  /// `base` with the grown sizes: the shape to run, time and compare at.
  InputPlan Plan() const;
  std::int64_t StepOf(const std::string& dim) const;  ///< 1 where sizes are free
};

/// Names the unnamed axes of `specs`, makes `base` run by growing the dimensions the user did not
/// set (each alone in powers of two, then all together), ties the axes that only run at equal sizes
/// (named or not: `tied`), and then finds the size limits of what it grew. At most a few dozen runs at
/// small sizes.
/// Starts from the sizes typical of what the inputs hold (TypicalSizes) where the user gave none.
ShapeSearch SearchShapes(Session& session, std::vector<TensorSpec> specs, const std::map<std::string, ValueHint>& hints,
                         const InputPlan& base, const onnx::ModelProto* model = nullptr);

/// The axes of `specs` that run only at equal sizes (ShapeSearch::tied, by name; unnamed axes named as
/// NameUnnamedAxes names them), found as SearchShapes finds them but without its size limits: a few runs at
/// the typical sizes. Empty when the model runs at no size the search tries.
std::vector<std::vector<std::string>> FindTiedAxes(Session& session, const std::vector<TensorSpec>& specs,
                                                   const std::map<std::string, ValueHint>& hints);

/// Sizes typical of what an input holds, for its dynamic dimensions (named as NameUnnamedAxes names
/// them): an image (rank 4 with 1, 3 or 4 channels first or last) is 224 x 224, or the size the
/// exporter recorded in the model's metadata (ultralytics' `imgsz`); token ids that index a table are
/// 128 long; audio samples (by name, or beside a sample-rate input) are one second at that rate, 16 kHz
/// by default.
std::map<std::string, std::int64_t> TypicalSizes(const std::vector<TensorSpec>& specs, const onnx::ModelProto* model,
                                                 const std::map<std::string, ValueHint>& hints = {});

/// The multiples image sizes come in, from the exporter's metadata (ultralytics' `stride`: a detector
/// whose feature maps are concatenated across scales runs only where they line up).
std::map<std::string, std::int64_t> SizeSteps(const std::vector<TensorSpec>& specs, const onnx::ModelProto* model);

/// Where a sweep extreme fails but the typical size runs: the boundary between them, by bisection
/// over multiples of `step` (when `passing` is one), with every other dimension at `plan`'s sizes.
/// `failing` may be below or above `passing`. nullopt when `failing` runs after all.
std::optional<SizeFinding> FindSizeBoundary(Session& session, const std::vector<TensorSpec>& specs,
                                            const std::map<std::string, ValueHint>& hints, const InputPlan& plan,
                                            const std::string& dim, std::int64_t passing, std::int64_t failing,
                                            std::int64_t step = 1);

/// The runtime's message when `plan`'s synthesised inputs fail to run, nullopt when they run.
std::optional<std::string> RunFailure(Session& session, const std::vector<TensorSpec>& specs,
                                      const std::map<std::string, ValueHint>& hints, const InputPlan& plan);

}  // namespace ortkit
