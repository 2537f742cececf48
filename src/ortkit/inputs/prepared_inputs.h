#pragma once
// The inputs of a run: read from files where the user gave them, synthesised otherwise, at sizes the
// model runs at (SettleSizes finds the sizes no flag sets by running the model).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ortkit/core/result.h"
#include "ortkit/inputs/shape_search.h"
#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit {

/// Where a run's inputs come from.
struct InputSources {
  InputPlan plan;  ///< sizes (dims, shapes) and seed of the synthesised inputs
  /// "NAME=FILE" (.npy, .pb holding one tensor, for input NAME whatever the file calls it), or FILE/DIR
  /// (.npz, a folder of NAME.npy, test_data_set_N) holding tensors named after inputs. Errors name the
  /// item as "--input ITEM".
  std::vector<std::string> files;
};

/// How each input was obtained, for the report.
struct PreparedInput {
  std::string name;
  std::string source;  ///< "file x.npy", "synthesised: indices into 'emb' (100 rows)", "synthesised: normal(0, 1)"
  bool from_file = false;
};

struct PreparedInputs {
  std::vector<NamedTensor> tensors;  ///< in the order of the specs
  std::vector<PreparedInput> sources;
};

/// Inputs for `specs`: read from `sources.files` where given, synthesised otherwise at the plan's sizes;
/// a symbolic dimension the plan leaves open takes the size a given tensor has. The plan is checked
/// against the model first (a dimension the model lacks is an error). `model` (may be null) gives value
/// hints (indices, masks) and the negative sizes the file declares.
Result<PreparedInputs> PrepareInputs(const std::vector<TensorSpec>& specs, const onnx::ModelProto* model,
                                     const InputSources& sources);

/// Whether the plan's sizes apply to the inputs `prepared` holds: --shape and --dim size synthesised inputs,
/// so a --shape for an input read from a file, or a --dim other than the size a file gives that dimension,
/// is refused (kInvalidArgument naming the flag, the input, the file and its shape) rather than ignored.
/// `specs` are the session's inputs, as given to PrepareInputs.
Status CheckSizesOfFileInputs(const InputPlan& plan, const std::vector<TensorSpec>& specs,
                              const PreparedInputs& prepared);

/// Sizes found by running, for the dimensions the plan leaves open.
struct SettledSizes {
  std::map<std::string, std::int64_t> found;  ///< by symbol, as NameUnnamedAxes names them
  /// What the search found, for the report ("'x:1' (input 'x' axis 1) needs at least 33: ...").
  std::vector<std::string> notes;
  /// The search itself, when one ran (whether or not it found sizes that run): a later step on the same
  /// session and plan (a sweep) starts from it instead of searching again.
  std::optional<ShapeSearch> search;
};

/// Sizes the model runs at for the dimensions `sources.plan` leaves open (an image at 224 x 224 or its
/// exporter's size, a guess that fails grown until it runs: SearchShapes), to be added to the plan of a
/// later PrepareInputs. Nothing is searched when files give the inputs or every dimension is set; a
/// search that finds nothing that runs finds nothing (the run will say why). Errors: a plan the model
/// does not accept.
Result<SettledSizes> SettleSizes(Session& session, const std::vector<TensorSpec>& specs, const onnx::ModelProto* model,
                                 const InputSources& sources);

}  // namespace ortkit
