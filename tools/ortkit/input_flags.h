#pragma once
// The flags every command that runs a model shares: --dim, --shape, --input, --seed, --provider,
// and how they become the inputs of a run.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <CLI/CLI.hpp>

#include "ortkit/core/result.h"
#include "ortkit/inputs/prepared_inputs.h"
#include "ortkit/runtime/run.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/synthesis.h"

namespace ortkit::cli {

struct InputFlags {
  std::vector<std::string> dims;    ///< "batch=4" or "batch=4,seq_len=128"
  std::vector<std::string> shapes;  ///< "x=1x3x224x224"
  std::vector<std::string> files;   ///< "name=FILE", or FILE/DIR holding tensors named after inputs
  std::uint64_t seed = 0;
  /// Sizes for the dimensions no flag sets, found by running the model (SettleSizes); not a flag.
  std::map<std::string, std::int64_t> found_sizes;

  /// --dim, --shape, --input and --seed.
  void Register(CLI::App* cmd);
  /// --dim and --shape with the command's own help texts, and --seed: for a command that synthesises
  /// every input (no --input).
  void RegisterSizes(CLI::App* cmd, const std::string& dim_help, const std::string& shape_help);
};

/// The plan (--dim, --shape, --seed) with each flag's syntax checked.
Result<InputPlan> ParsePlan(const InputFlags& flags);

/// The plan (ParsePlan) and the --input files.
Result<InputSources> ParseSources(const InputFlags& flags);

/// Inputs for `specs` (the library's PrepareInputs): read from --input files where given, synthesised
/// otherwise. The plan is checked against the model first (a --dim the model lacks is an error).
Result<PreparedInputs> PrepareInputs(const std::vector<TensorSpec>& specs, const onnx::ModelProto* model,
                                     const InputFlags& flags);

/// Sizes the model runs at for the dimensions the flags leave open (the library's SettleSizes), kept in
/// `flags.found_sizes` for every later PrepareInputs. Nothing is searched when --input files give the inputs or every
/// dimension is set. Returns what the search found, for the report ("'x:1' (input 'x' axis 1) needs at least 33: ...").
Result<std::vector<std::string>> SettleSizes(Session& session, const std::vector<TensorSpec>& specs,
                                             const onnx::ModelProto* model, InputFlags& flags);

/// Parses "1x3x224x224" (also "1,3,224,224"); "" or "scalar" is a scalar.
Result<std::vector<std::int64_t>> ParseShape(const std::string& text);

}  // namespace ortkit::cli
