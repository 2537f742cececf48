#pragma once
// The flags every command that runs a model shares: --dim, --shape, --input, --seed, and the
// InputSources they give (the library makes the inputs from them: inputs/prepared_inputs.h).

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

  /// --dim, --shape, --input and --seed.
  void Register(CLI::App* cmd);
  /// --dim and --shape with the command's own help texts, and --seed: for a command that synthesises
  /// every input (no --input).
  void RegisterSizes(CLI::App* cmd, const std::string& dim_help, const std::string& shape_help,
                     const std::string& seed_help = "seed for synthesised inputs");
};

/// The plan (--dim, --shape, --seed) with each flag's syntax checked.
Result<InputPlan> ParsePlan(const InputFlags& flags);

/// The plan (ParsePlan) and the --input files.
Result<InputSources> ParseSources(const InputFlags& flags);

/// Parses "1x3x224x224" (also "1,3,224,224"); "" or "scalar" is a scalar.
Result<std::vector<std::int64_t>> ParseShape(const std::string& text);

}  // namespace ortkit::cli
