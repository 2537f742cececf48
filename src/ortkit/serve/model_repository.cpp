#include "ortkit/serve/model_repository.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/files.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ortkit::serve {
namespace {

// The --config flags by the model they go with: a bare FILE under "", the only model's.
Result<std::map<std::string, std::filesystem::path>> ConfigsByModel(const ModelSelection& selection) {
  std::map<std::string, std::filesystem::path> configs;
  for (const auto& c : selection.configs) {
    const auto eq = c.find('=');
    if (eq != std::string::npos)
      configs[c.substr(0, eq)] = c.substr(eq + 1);
    else if (selection.models.size() == 1)
      configs[""] = c;
    else
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("--config {}: with several models write --config NAME=FILE", c));
  }
  return configs;
}

Result<std::vector<ModelSource>> SourcesFromFlags(const ModelSelection& selection) {
  ORTKIT_ASSIGN_OR_RETURN(auto configs, ConfigsByModel(selection));
  std::vector<ModelSource> sources;
  for (const auto& m : selection.models) {
    const auto eq = m.find('=');
    const std::string name = eq == std::string::npos ? "" : m.substr(0, eq);
    std::optional<std::filesystem::path> config;
    if (configs.count(name))
      config = configs[name];
    else if (configs.count(""))
      config = configs[""];
    configs.erase(name);
    ORTKIT_ASSIGN_OR_RETURN(auto source, ModelFromFlag(m, config));
    sources.push_back(std::move(source));
  }
  configs.erase("");
  if (!configs.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--config {}=...: no --model of that name", configs.begin()->first));
  }
  return sources;
}

Result<std::vector<ModelSource>> SourcesFromRepository(const ModelSelection& selection,
                                                       std::vector<std::string>* notes) {
  if (!selection.configs.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--config goes with --model; in a repository put DIR/NAME/config.json");
  }
  ORTKIT_ASSIGN_OR_RETURN(auto scan, ScanModelRepository(selection.repository));
  notes->insert(notes->end(), scan.notes.begin(), scan.notes.end());
  if (selection.control == ModelControlMode::kExplicit) {
    const auto& wanted = selection.load_models;
    const bool every = std::find(wanted.begin(), wanted.end(), "*") != wanted.end();
    for (const auto& name : wanted) {
      if (name == "*") continue;
      if (std::none_of(scan.models.begin(), scan.models.end(), [&](const auto& m) { return m.name == name; })) {
        return MakeError(ErrorKind::kNotFound, fmt::format("--load-model {}: the repository {} has no model '{}'", name,
                                                           selection.repository, name));
      }
    }
    if (!every) {
      std::erase_if(scan.models,
                    [&](const auto& m) { return std::find(wanted.begin(), wanted.end(), m.name) == wanted.end(); });
    }
  } else if (scan.models.empty()) {
    std::string skipped;
    for (const auto& note : scan.notes) skipped += "; " + note;
    return MakeError(ErrorKind::kNotFound, fmt::format("--model-repository {}: no NAME/model.onnx or "
                                                       "NAME/VERSION/model.onnx inside{}",
                                                       selection.repository, skipped));
  }
  std::vector<ModelSource> sources;
  for (const auto& model : scan.models) {
    ORTKIT_ASSIGN_OR_RETURN(auto versions, SourcesOfModel(model, {}));
    for (auto& v : versions) sources.push_back(std::move(v));
  }
  return sources;
}

// A version folder's name: digits, not starting with 0 (Triton passes such folders over), at most 18 of them.
std::optional<std::int64_t> VersionOfFolder(const std::string& name) {
  if (name.empty() || name.size() > 18 || name.front() == '0') return std::nullopt;
  std::int64_t version = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    version = version * 10 + (c - '0');
  }
  return version;
}

bool IsRegularFile(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// The versions of the model folder `folder`, ascending; notes for version folders without a model and for a
// NAME/model.onnx that version folders shadow.
std::vector<ModelVersionFiles> VersionsIn(const std::filesystem::path& folder, const std::string& name,
                                          std::vector<std::string>* notes) {
  std::vector<ModelVersionFiles> versions;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    std::error_code missing;
    if (!entry.is_directory(missing)) continue;
    const auto version = VersionOfFolder(entry.path().filename().string());
    if (!version) continue;
    if (!IsRegularFile(entry.path() / "model.onnx")) {
      notes->push_back(fmt::format("model '{}': version folder {} holds no model.onnx: passed over", name,
                                   entry.path().filename().string()));
      continue;
    }
    versions.push_back({*version, entry.path() / "model.onnx", entry.path()});
  }
  std::sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  const bool flat = IsRegularFile(folder / "model.onnx");
  if (flat && versions.empty()) versions.push_back({1, folder / "model.onnx", folder});
  if (flat && !versions.empty() && versions.front().folder != folder) {
    notes->push_back(
        fmt::format("model '{}': {}/model.onnx is passed over: the model has version folders", name, name));
  }
  return versions;
}

// A note when `model` resolves outside the repository `root` (through a symbolic link).
void NoteOutside(const std::filesystem::path& root, const std::string& name, const std::filesystem::path& model,
                 std::vector<std::string>* notes) {
  std::error_code missing;
  const std::filesystem::path real = std::filesystem::weakly_canonical(model, missing);
  if (!missing && std::mismatch(root.begin(), root.end(), real.begin(), real.end()).first != root.end()) {
    notes->push_back(fmt::format("model '{}' is served from {}, outside the repository {} (through a symbolic link)",
                                 name, real.string(), root.string()));
  }
}

// The XXH3 hash of the file `path`, read in blocks.
Result<std::uint64_t> HashFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorKind::kIo, fmt::format("cannot read {}", path.string()));
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  std::vector<char> block(std::size_t{1} << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    XXH3_64bits_update(state.get(), block.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return MakeError(ErrorKind::kIo, fmt::format("cannot read {}", path.string()));
  return XXH3_64bits_digest(state.get());
}

}  // namespace

void DigestCache::Prune() {
  std::erase_if(files, [&](const auto& entry) { return entry.second.round != round; });
  ++round;
}

Result<std::string> DigestModelFolder(const std::filesystem::path& folder, DigestCache* cache) {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::follow_directory_symlink, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code kind;
    if (name.front() == '.' || it.depth() > 3) {
      if (it->is_directory(kind)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(kind)) continue;
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0) {
      return MakeError(ErrorKind::kIo, fmt::format("{}: {}", it->path().string(), std::strerror(errno)));
    }
    const DigestCache::Entry now{static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino),
                                 st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
                                 st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec};
    DigestCache::Entry* known = nullptr;
    if (cache != nullptr) {
      auto found = cache->files.find(it->path().string());
      if (found != cache->files.end()) known = &found->second;
    }
    std::uint64_t hash = 0;
    if (known != nullptr && known->settled && known->size == now.size && known->inode == now.inode &&
        known->mtime_ns == now.mtime_ns && known->ctime_ns == now.ctime_ns) {
      hash = known->hash;
      known->round = cache->round;
    } else {
      ORTKIT_ASSIGN_OR_RETURN(hash, HashFile(it->path()));
      if (cache != nullptr) {
        DigestCache::Entry entry = now;
        entry.hash = hash;
        // As git's racily clean files: a file written within the file system's timestamp granularity of
        // its hashing could change again with the same times; it is read again until it is older than that.
        const auto wall = std::chrono::system_clock::now().time_since_epoch();
        entry.settled =
            std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count() - now.ctime_ns > 2'000'000'000LL;
        entry.round = cache->round;
        cache->files[it->path().string()] = entry;
      }
    }
    lines.push_back(fmt::format("{} {} {:016x}", fs::relative(it->path(), folder).generic_string(), now.size, hash));
  }
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("{}: {}", folder.string(), ec.message()));
  std::sort(lines.begin(), lines.end());
  return fmt::format("{}", fmt::join(lines, "\n"));
}

Status CheckModelName(const std::string& name) {
  if (name.empty()) return MakeError(ErrorKind::kInvalidArgument, "a model name is empty");
  if (name.front() == '.')
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("model name '{}' starts with '.'", name));
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("model name '{}' contains '{}': use letters, digits, '_', '-' and '.'", name, c));
    }
  }
  return OkStatus();
}

Result<ModelSource> ModelFromFlag(const std::string& flag, const std::optional<std::filesystem::path>& config_path) {
  ModelSource source;
  const auto equals = flag.find('=');
  std::string name;
  if (equals != std::string::npos) {
    name = flag.substr(0, equals);
    source.path = flag.substr(equals + 1);
  } else {
    source.path = flag;
  }
  if (source.path.empty())
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("--model '{}': no path after '='", flag));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(source.path, ec)) {
    return MakeError(ErrorKind::kNotFound, fmt::format("--model {}: no such file {}", flag, source.path.string()));
  }
  if (config_path) {
    ORTKIT_ASSIGN_OR_RETURN(source.config, LoadModelConfig(*config_path));
  }
  source.name = !name.empty() ? name : !source.config.name.empty() ? source.config.name : source.path.stem().string();
  source.config.name = source.name;
  ORTKIT_RETURN_IF_ERROR(CheckModelName(source.name));
  return source;
}

Result<RepositoryModel> ScanRepositoryModel(const std::filesystem::path& dir, const std::string& name,
                                            std::vector<std::string>* notes) {
  namespace fs = std::filesystem;
  ORTKIT_RETURN_IF_ERROR(CheckModelName(name));
  RepositoryModel model;
  model.name = name;
  model.folder = dir / name;
  model.versions = VersionsIn(model.folder, name, notes);
  if (model.versions.empty()) {
    return MakeError(ErrorKind::kNotFound, fmt::format("the repository {} has no model '{}' (no {}/model.onnx or "
                                                       "{}/VERSION/model.onnx)",
                                                       dir.string(), name, name, name));
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(dir), ec);
  for (const auto& v : model.versions) NoteOutside(root, name, v.model, notes);
  const auto config = model.folder / "config.json";
  // A config.json that is there but not a file (a folder, a pipe, /dev/zero) is refused, naming it: read,
  // it would block or never end; skipped, the model would be served without the settings meant for it.
  if (fs::exists(fs::symlink_status(config, ec))) {
    if (auto size = RegularFileSize(config, "a config.json file"); !size.ok()) {
      model.config = MakeError(ErrorKind::kInvalidArgument, size.error().message);
    } else {
      model.config = LoadModelConfig(config);
    }
  }
  // The folder names the model, as in Triton's repositories; the file's "name" only when it agrees.
  if (model.config.ok()) model.config->name = name;
  return model;
}

Result<RepositoryScan> ScanModelRepository(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return MakeError(ErrorKind::kNotFound, fmt::format("--model-repository {}: not a folder", dir.string()));
  }
  RepositoryScan scan;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string folder = entry.path().filename().string();
    std::error_code missing;
    if (folder.front() == '.' || !entry.is_directory(missing)) continue;
    if (Status name = CheckModelName(folder); !name.ok()) {
      std::vector<std::string> quiet;
      if (!VersionsIn(entry.path(), folder, &quiet).empty()) {
        scan.notes.push_back(fmt::format("skipped folder '{}' of the repository: {}", folder, name.error().message));
      }
      continue;
    }
    auto model = ScanRepositoryModel(dir, folder, &scan.notes);
    if (model.ok()) scan.models.push_back(std::move(model).value());
  }
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("--model-repository {}: {}", dir.string(), ec.message()));
  std::sort(scan.models.begin(), scan.models.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return scan;
}

Result<std::vector<ModelSource>> SourcesOfModel(const RepositoryModel& model, const ConfigOverrides& overrides) {
  if (!model.config.ok()) return model.config.error();
  ModelConfig config = *model.config;
  overrides.ApplyTo(&config);
  ORTKIT_RETURN_IF_ERROR(ValidateModelConfig(config, fmt::format("model '{}'", model.name)));
  std::vector<std::int64_t> available;
  for (const auto& v : model.versions) available.push_back(v.version);
  const std::vector<std::int64_t> chosen = config.version_policy.Select(available);
  if (chosen.empty()) {
    return MakeError(ErrorKind::kNotFound,
                     fmt::format("model '{}': its version_policy ({}) selects none of its versions ({})", model.name,
                                 config.version_policy.Describe(), fmt::join(available, ", ")));
  }
  std::vector<ModelSource> sources;
  for (const auto& v : model.versions) {
    if (!std::binary_search(chosen.begin(), chosen.end(), v.version)) continue;
    sources.push_back(ModelSource{model.name, v.model, config, v.version});
  }
  return sources;
}

Result<std::vector<ModelSource>> ResolveModelSources(const ModelSelection& selection, const ConfigOverrides& overrides,
                                                     std::vector<std::string>* notes) {
  if (selection.models.empty() == selection.repository.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "give --model NAME=PATH (one or more) or --model-repository DIR");
  }
  if (selection.control != ModelControlMode::kNone && selection.repository.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("--model-control {} works on a --model-repository DIR",
                                 selection.control == ModelControlMode::kPoll ? "poll" : "explicit"));
  }
  if (selection.control != ModelControlMode::kExplicit && !selection.load_models.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--load-model goes with --model-control explicit (without it, every model of the repository "
                     "loads)");
  }
  ORTKIT_ASSIGN_OR_RETURN(auto sources, selection.repository.empty() ? SourcesFromFlags(selection)
                                                                     : SourcesFromRepository(selection, notes));
  for (auto& s : sources) {
    overrides.ApplyTo(&s.config);
    ORTKIT_RETURN_IF_ERROR(ValidateModelConfig(s.config, fmt::format("model '{}'", s.name)));
  }
  return sources;
}

}  // namespace ortkit::serve
