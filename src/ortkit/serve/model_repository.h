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

/// What a repository folder holds to serve, and what the scan passed over that a user would want
/// to hear of.
struct RepositoryScan {
  std::vector<ModelSource> models;  ///< sorted by name
  std::vector<std::string> notes;   ///< one sentence each: a skipped folder, a model outside the folder
};

/// Every DIR/NAME/model.onnx, each with DIR/NAME/config.json when present. Hidden folders (".git",
/// ".ipynb_checkpoints") and folders without model.onnx are passed over in silence; a folder whose
/// name cannot be a model name is passed over with a note naming it and why; a model.onnx that
/// resolves outside DIR through a symbolic link is served, with a note naming where it lives. A
/// config.json that does not parse is an error (the user meant it); a repository with no model
/// at all is kNotFound.
Result<RepositoryScan> ScanModelRepository(const std::filesystem::path& dir);

/// The models to serve as the command line names them: --model flags, each with the --config
/// that goes with it, or one repository folder.
struct ModelSelection {
  std::vector<std::string> models;   ///< NAME=PATH, or a bare PATH (ModelFromFlag)
  std::vector<std::string> configs;  ///< FILE for the only model, or NAME=FILE
  std::string repository;            ///< empty: none
};

/// The models of `selection`, each configuration with `overrides` applied and then validated.
/// kInvalidArgument unless exactly one of models and repository is given, for a --config with a
/// repository, for a bare --config FILE with several models and for a NAME=FILE without its model;
/// otherwise the errors of ModelFromFlag, ScanModelRepository and ValidateModelConfig. `notes`
/// receives the repository scan's notes, also when a later step fails.
Result<std::vector<ModelSource>> ResolveModelSources(const ModelSelection& selection, const ConfigOverrides& overrides,
                                                     std::vector<std::string>* notes);

}  // namespace ortkit::serve
