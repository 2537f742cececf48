#pragma once
// Where the models to serve come from: --model NAME=PATH [--config FILE] pairs, or a repository
// folder holding DIR/NAME/model.onnx and an optional DIR/NAME/config.json per model.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/serve/inference_core.h"

namespace ortkit::serve {

/// Model names appear in URLs and metric labels: letters, digits, '_', '-' and '.' only, not
/// starting with '.'. kInvalidArgument otherwise, naming the character.
Status CheckModelName(const std::string& name);

/// One --model flag: "NAME=PATH" (or a bare PATH, named after the file's stem), with the
/// configuration file given after it (--config), if any. The config's "name" is overridden by
/// NAME when NAME is given.
Result<ModelSource> ModelFromFlag(const std::string& flag, const std::optional<std::filesystem::path>& config_path);

/// Every DIR/NAME/model.onnx, sorted by name, each with DIR/NAME/config.json when present. Folders
/// without model.onnx are skipped; a repository with no model at all is kNotFound.
Result<std::vector<ModelSource>> ScanModelRepository(const std::filesystem::path& dir);

}  // namespace ortkit::serve
