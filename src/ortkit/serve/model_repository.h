#pragma once
// Where the models to serve come from: --model NAME=PATH [--config FILE] pairs, or a repository
// folder holding DIR/NAME/VERSION/model.onnx (or DIR/NAME/model.onnx) and an optional
// DIR/NAME/config.json per model.

#include <cstdint>
#include <filesystem>
#include <map>
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

/// One version of a repository model: NAME/VERSION/model.onnx (a numeric folder, Triton's layout), or
/// NAME/model.onnx as version 1 when the model has no version folder.
struct ModelVersionFiles {
  std::int64_t version = 1;
  std::filesystem::path model;   ///< the model.onnx
  std::filesystem::path folder;  ///< the folder it is in (its external data is read from there)
};

/// One model folder of a repository.
struct RepositoryModel {
  std::string name;
  std::filesystem::path folder;
  /// NAME/config.json parsed (the defaults without one), its name set to the folder's; the error when the
  /// file does not parse: it stops this model only.
  Result<ModelConfig> config = ModelConfig{};
  std::vector<ModelVersionFiles> versions;  ///< ascending
};

/// What a repository folder holds to serve, and what the scan passed over that a user would want to hear of.
struct RepositoryScan {
  std::vector<RepositoryModel> models;  ///< sorted by name; each with at least one version
  std::vector<std::string> notes;       ///< one sentence each: a skipped folder, a model outside the folder
};

/// Every model folder of DIR: DIR/NAME holding NAME/VERSION/model.onnx (VERSION: digits, not starting with
/// 0, as Triton's) or NAME/model.onnx, with DIR/NAME/config.json when present. Hidden folders (".git",
/// ".ipynb_checkpoints") and folders without a model are passed over in silence; a folder whose name cannot be
/// a model name, and a version folder without model.onnx, with a note naming it and why; a model.onnx that
/// resolves outside DIR through a symbolic link is served, with a note naming where it lives. kNotFound when
/// DIR is not a folder; an empty repository is not an error here.
Result<RepositoryScan> ScanModelRepository(const std::filesystem::path& dir);

/// DIR/NAME alone, as ScanModelRepository reads it; kNotFound when DIR/NAME holds no model.
Result<RepositoryModel> ScanRepositoryModel(const std::filesystem::path& dir, const std::string& name,
                                            std::vector<std::string>* notes);

/// The versions of `model` that its configuration's version_policy selects, each a source with `overrides`
/// applied and validated. The config's error when it did not parse; kNotFound when the policy selects none
/// (naming the policy and the versions there are).
Result<std::vector<ModelSource>> SourcesOfModel(const RepositoryModel& model, const ConfigOverrides& overrides);

/// Which models of a repository are loaded at start (--model-control), as Triton's modes: kNone every
/// one; kPoll every one, then whatever the repository's files become (RepositoryPoller); kExplicit the
/// --load-model names only, the rest when the repository API loads them.
enum class ModelControlMode { kNone, kExplicit, kPoll };

/// The content of a model folder as polling compares it: each file under it (config.json, model.onnx, the
/// version folders with their external data; hidden files, as rsync's and editors' temporary ones, passed
/// over) by relative path, size and a 64-bit hash of its bytes (XXH3), one line each, sorted. Two digests
/// are equal exactly when no file was added, removed or changed, whatever the timestamps say. kIo when a
/// file cannot be read (it vanished while being read: the folder is changing).
///
/// With a `cache`, a file whose size, inode, modification and status-change times are those of the last
/// digest is not read again: its hash is the cache's. The status-change time (ctime) moves with every write
/// and cannot be set back by the tools that copy or touch files (cp -p, rsync -t, touch -d), so a file
/// with new bytes is always read (one written within 2 s of its hashing is read again at the next digest, as
/// git treats racily clean files); the cache spares reading unchanged gigabytes at every poll.
struct DigestCache {
  struct Entry {
    std::uint64_t size = 0, inode = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    std::uint64_t hash = 0;
    std::uint64_t round = 0;
    bool settled = false;  ///< written more than 2 s before it was hashed: its times can be trusted
  };
  std::map<std::string, Entry> files;  ///< by path
  std::uint64_t round = 0;             ///< the poll that last used an entry: older ones are dropped by Prune
  /// Drops the entries no digest used since the last Prune, and starts a new round.
  void Prune();
};
Result<std::string> DigestModelFolder(const std::filesystem::path& folder, DigestCache* cache = nullptr);

/// The models to serve as the command line names them: --model flags, each with the --config
/// that goes with it, or one repository folder.
struct ModelSelection {
  std::vector<std::string> models;   ///< NAME=PATH, or a bare PATH (ModelFromFlag)
  std::vector<std::string> configs;  ///< FILE for the only model, or NAME=FILE
  std::string repository;            ///< empty: none
  ModelControlMode control = ModelControlMode::kNone;
  std::vector<std::string> load_models = {};  ///< kExplicit: the models loaded at start; "*": every one
};

/// The models of `selection`, each configuration with `overrides` applied and then validated; from a
/// repository, one source per version its policy selects. kInvalidArgument unless exactly one of models and
/// repository is given, for a --config with a repository, for a bare --config FILE with several models, for
/// a NAME=FILE without its model, for kExplicit or kPoll without a repository and for --load-model without kExplicit;
/// kNotFound for a repository without a model (kNone, kPoll) or a --load-model it does not hold; otherwise the errors
/// of ModelFromFlag, ScanModelRepository, SourcesOfModel and ValidateModelConfig. `notes` receives the repository
/// scan's notes, also when a later step fails.
Result<std::vector<ModelSource>> ResolveModelSources(const ModelSelection& selection, const ConfigOverrides& overrides,
                                                     std::vector<std::string>* notes);

}  // namespace ortkit::serve
