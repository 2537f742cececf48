#include "ortkit/serve/model_repository.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

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
  return std::move(scan.models);
}

}  // namespace

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

Result<RepositoryScan> ScanModelRepository(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return MakeError(ErrorKind::kNotFound, fmt::format("--model-repository {}: not a folder", dir.string()));
  }
  const fs::path root = fs::weakly_canonical(fs::absolute(dir), ec);
  RepositoryScan scan;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string folder = entry.path().filename().string();
    std::error_code missing;
    if (folder.front() == '.' || !entry.is_directory(missing)) continue;
    const auto model = entry.path() / "model.onnx";
    if (!fs::is_regular_file(model, missing)) continue;
    if (Status name = CheckModelName(folder); !name.ok()) {
      scan.notes.push_back(fmt::format("skipped folder '{}' of the repository: {}", folder, name.error().message));
      continue;
    }
    ModelSource source;
    source.path = model;
    const auto config = entry.path() / "config.json";
    if (fs::is_regular_file(config, missing)) {
      ORTKIT_ASSIGN_OR_RETURN(source.config, LoadModelConfig(config));
    }
    // The folder names the model, as in Triton's repositories; the file's "name" only when it agrees.
    source.name = folder;
    source.config.name = source.name;
    const fs::path real = fs::weakly_canonical(model, missing);
    if (!missing && std::mismatch(root.begin(), root.end(), real.begin(), real.end()).first != root.end()) {
      scan.notes.push_back(
          fmt::format("model '{}' is served from {}, outside the repository {} (through a "
                      "symbolic link)",
                      source.name, real.string(), root.string()));
    }
    scan.models.push_back(std::move(source));
  }
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("--model-repository {}: {}", dir.string(), ec.message()));
  if (scan.models.empty()) {
    std::string skipped;
    for (const auto& note : scan.notes) skipped += "; " + note;
    return MakeError(ErrorKind::kNotFound,
                     fmt::format("--model-repository {}: no NAME/model.onnx inside{}", dir.string(), skipped));
  }
  std::sort(scan.models.begin(), scan.models.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return scan;
}

Result<std::vector<ModelSource>> ResolveModelSources(const ModelSelection& selection, const ConfigOverrides& overrides,
                                                     std::vector<std::string>* notes) {
  if (selection.models.empty() == selection.repository.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "give --model NAME=PATH (one or more) or --model-repository DIR");
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
