#include "ortkit/serve/model_config.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit::serve {
namespace {

using nlohmann::json;

/// Walks one JSON object, remembering the path for messages and the keys it has read so that
/// leftovers can be reported as unknown.
class Reader {
 public:
  Reader(const json& object, std::string path, std::string_view origin)
      : object_(object), path_(std::move(path)), origin_(origin) {}

  Error Fail(const std::string& key, const std::string& what) const {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: {}{}: {}", origin_, path_, key, what));
  }
  const json* Find(const std::string& key) {
    seen_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  Status Int(const std::string& key, std::int64_t min, std::int64_t* out) {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_number_integer() || v->get<std::int64_t>() < min) {
      return Fail(key, fmt::format("expected an integer >= {}, got {}", min, v->dump()));
    }
    *out = v->get<std::int64_t>();
    return OkStatus();
  }
  Status Int(const std::string& key, std::int64_t min, int* out) {
    std::int64_t wide = *out;
    ORTKIT_RETURN_IF_ERROR(Int(key, min, &wide));
    if (wide > 1'000'000'000) return Fail(key, fmt::format("{} is too large", wide));
    *out = static_cast<int>(wide);
    return OkStatus();
  }
  Status Bool(const std::string& key, bool* out) {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_boolean()) return Fail(key, fmt::format("expected true or false, got {}", v->dump()));
    *out = v->get<bool>();
    return OkStatus();
  }
  Status String(const std::string& key, std::string* out) {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_string()) return Fail(key, fmt::format("expected a string, got {}", v->dump()));
    *out = v->get<std::string>();
    return OkStatus();
  }
  template <typename T>
  Status IntList(const std::string& key, std::int64_t min, std::vector<T>* out) {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_array()) return Fail(key, fmt::format("expected a list of integers, got {}", v->dump()));
    out->clear();
    for (const auto& e : *v) {
      if (!e.is_number_integer() || e.get<std::int64_t>() < min) {
        return Fail(key, fmt::format("expected integers >= {}, got {}", min, e.dump()));
      }
      out->push_back(static_cast<T>(e.get<std::int64_t>()));
    }
    return OkStatus();
  }
  /// The child object at `key`, or nullptr when absent (or null, when `null_ok`).
  Result<const json*> Object(const std::string& key, bool null_ok) {
    const json* v = Find(key);
    if (v == nullptr || (null_ok && v->is_null())) return static_cast<const json*>(nullptr);
    if (!v->is_object()) return Fail(key, fmt::format("expected an object, got {}", v->dump()));
    return v;
  }
  Status NoUnknownKeys() const {
    for (const auto& [key, value] : object_.items()) {
      if (!seen_.count(key)) return Fail(key, "unknown key (see docs/serving.md for the configuration keys)");
    }
    return OkStatus();
  }
  const std::string& path() const { return path_; }

 private:
  const json& object_;
  std::string path_;
  std::string_view origin_;
  std::set<std::string> seen_;
};

Status ParseSession(const json& object, std::string_view origin, SessionSettings* out) {
  Reader r(object, "session.", origin);
  ORTKIT_RETURN_IF_ERROR(r.String("provider", &out->provider));
  if (FindProvider(out->provider) == nullptr) {
    std::string known;
    for (auto name : KnownProviderNames()) known += (known.empty() ? "" : ", ") + std::string(name);
    return r.Fail("provider", fmt::format("unknown provider '{}' (known: {})", out->provider, known));
  }
  ORTKIT_RETURN_IF_ERROR(r.Int("intra_op_threads", 0, &out->intra_op_threads));
  ORTKIT_RETURN_IF_ERROR(r.Int("inter_op_threads", 0, &out->inter_op_threads));
  std::string mode = out->sequential_execution ? "sequential" : "parallel";
  ORTKIT_RETURN_IF_ERROR(r.String("execution_mode", &mode));
  if (mode != "sequential" && mode != "parallel") {
    return r.Fail("execution_mode", fmt::format("expected \"sequential\" or \"parallel\", got \"{}\"", mode));
  }
  out->sequential_execution = mode == "sequential";
  ORTKIT_RETURN_IF_ERROR(r.Int("optimization_level", 0, &out->optimization_level));
  static constexpr int kLevels[] = {0, 1, 2, 99};
  if (std::find(std::begin(kLevels), std::end(kLevels), out->optimization_level) == std::end(kLevels)) {
    return r.Fail("optimization_level", fmt::format("expected 0, 1, 2 or 99, got {}", out->optimization_level));
  }
  return r.NoUnknownKeys();
}

Status ParseBatching(const json& object, std::string_view origin, BatchingConfig* out) {
  Reader r(object, "batching.", origin);
  ORTKIT_RETURN_IF_ERROR(r.Bool("enabled", &out->enabled));
  ORTKIT_RETURN_IF_ERROR(r.Int("max_batch_size", 0, &out->max_batch_size));
  ORTKIT_RETURN_IF_ERROR(r.Int("max_queue_delay_us", 0, &out->max_queue_delay_us));
  ORTKIT_RETURN_IF_ERROR(r.IntList("preferred_batch_sizes", 1, &out->preferred_batch_sizes));
  ORTKIT_RETURN_IF_ERROR(r.Int("max_queue_size", 1, &out->max_queue_size));
  ORTKIT_RETURN_IF_ERROR(r.Int("timeout_us", 0, &out->timeout_us));
  ORTKIT_RETURN_IF_ERROR(r.Int("priority_levels", 1, &out->priority_levels));
  for (int size : out->preferred_batch_sizes) {
    if (out->max_batch_size > 0 && size > out->max_batch_size) {
      return r.Fail("preferred_batch_sizes",
                    fmt::format("{} is larger than max_batch_size {}", size, out->max_batch_size));
    }
  }
  std::sort(out->preferred_batch_sizes.begin(), out->preferred_batch_sizes.end());
  return r.NoUnknownKeys();
}

Status ParseBucketing(const json& object, std::string_view origin, BucketingConfig* out) {
  Reader r(object, "bucketing.", origin);
  out->enabled = true;
  ORTKIT_RETURN_IF_ERROR(r.String("dim", &out->dim));
  if (out->dim.empty()) return r.Fail("dim", "required: the symbolic dimension to pad (e.g. \"seq_len\")");
  ORTKIT_RETURN_IF_ERROR(r.IntList("boundaries", 1, &out->boundaries));
  ORTKIT_RETURN_IF_ERROR(r.Int("multiple_of", 1, &out->multiple_of));
  ORTKIT_RETURN_IF_ERROR(r.String("mask_input", &out->mask_input));
  if (out->boundaries.empty() == (out->multiple_of == 0)) {
    return r.Fail("boundaries", "give exactly one of \"boundaries\" (a list) and \"multiple_of\" (an integer)");
  }
  for (std::size_t i = 1; i < out->boundaries.size(); ++i) {
    if (out->boundaries[i] <= out->boundaries[i - 1]) {
      return r.Fail("boundaries", fmt::format("must be strictly ascending, but {} follows {}", out->boundaries[i],
                                              out->boundaries[i - 1]));
    }
  }
  return r.NoUnknownKeys();
}

Status ParseWarmup(const json& object, std::string_view origin, WarmupConfig* out) {
  Reader r(object, "warmup.", origin);
  ORTKIT_ASSIGN_OR_RETURN(const json* dims, r.Object("dims", false));
  if (dims != nullptr) {
    Reader d(*dims, "warmup.dims.", origin);
    for (const auto& [key, value] : dims->items()) {
      std::vector<std::int64_t> sizes;
      if (value.is_number_integer()) {
        if (value.get<std::int64_t>() < 1) return d.Fail(key, fmt::format("expected sizes >= 1, got {}", value.dump()));
        sizes.push_back(value.get<std::int64_t>());
      } else {
        ORTKIT_RETURN_IF_ERROR(d.IntList(key, 1, &sizes));
      }
      out->dims[key] = std::move(sizes);
    }
  }
  return r.NoUnknownKeys();
}

}  // namespace

std::int64_t BucketingConfig::BucketFor(std::int64_t length) const {
  if (multiple_of > 0) return (length + multiple_of - 1) / multiple_of * multiple_of;
  auto it = std::lower_bound(boundaries.begin(), boundaries.end(), length);
  return it == boundaries.end() ? length : *it;
}

SessionConfig ModelConfig::ToSessionConfig() const {
  SessionConfig c;
  c.provider = session.provider;
  c.intra_op_threads = session.intra_op_threads;
  c.inter_op_threads = session.inter_op_threads;
  c.sequential_execution = session.sequential_execution;
  static constexpr std::pair<int, GraphOptimizationLevel> kLevels[] = {
      {0, ORT_DISABLE_ALL}, {1, ORT_ENABLE_BASIC}, {2, ORT_ENABLE_EXTENDED}, {99, ORT_ENABLE_ALL}};
  for (const auto& [number, level] : kLevels) {
    if (number == session.optimization_level) c.optimization_level = level;
  }
  return c;
}

Result<ModelConfig> ParseModelConfig(std::string_view json_text, std::string_view origin) {
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: not valid JSON: {}", origin, e.what()));
  }
  if (!root.is_object()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: expected a JSON object, got {}", origin, root.type_name()));
  }
  ModelConfig config;
  Reader r(root, "", origin);
  r.Find("tuning");  // written by bench --tune for people; the server does not read it
  ORTKIT_RETURN_IF_ERROR(r.String("name", &config.name));
  ORTKIT_RETURN_IF_ERROR(r.Int("instances", 1, &config.instances));
  ORTKIT_ASSIGN_OR_RETURN(const json* session, r.Object("session", false));
  if (session) ORTKIT_RETURN_IF_ERROR(ParseSession(*session, origin, &config.session));
  ORTKIT_ASSIGN_OR_RETURN(const json* batching, r.Object("batching", false));
  if (batching) ORTKIT_RETURN_IF_ERROR(ParseBatching(*batching, origin, &config.batching));
  ORTKIT_ASSIGN_OR_RETURN(const json* bucketing, r.Object("bucketing", true));
  if (bucketing) ORTKIT_RETURN_IF_ERROR(ParseBucketing(*bucketing, origin, &config.bucketing));
  ORTKIT_ASSIGN_OR_RETURN(const json* warmup, r.Object("warmup", false));
  if (warmup) ORTKIT_RETURN_IF_ERROR(ParseWarmup(*warmup, origin, &config.warmup));
  ORTKIT_RETURN_IF_ERROR(r.NoUnknownKeys());
  return config;
}

Result<ModelConfig> LoadModelConfig(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorKind::kIo, fmt::format("cannot read the configuration file {}", path.string()));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseModelConfig(buffer.str(), path.string());
}

std::string ModelConfigToJson(const ModelConfig& config) {
  json j;
  j["name"] = config.name;
  j["instances"] = config.instances;
  j["session"] = {{"provider", config.session.provider},
                  {"intra_op_threads", config.session.intra_op_threads},
                  {"inter_op_threads", config.session.inter_op_threads},
                  {"execution_mode", config.session.sequential_execution ? "sequential" : "parallel"},
                  {"optimization_level", config.session.optimization_level}};
  const auto& b = config.batching;
  j["batching"] = {{"enabled", b.enabled},
                   {"max_batch_size", b.max_batch_size},
                   {"max_queue_delay_us", b.max_queue_delay_us},
                   {"preferred_batch_sizes", b.preferred_batch_sizes},
                   {"max_queue_size", b.max_queue_size},
                   {"timeout_us", b.timeout_us},
                   {"priority_levels", b.priority_levels}};
  if (config.bucketing.enabled) {
    json k = {{"dim", config.bucketing.dim}, {"mask_input", config.bucketing.mask_input}};
    if (config.bucketing.multiple_of > 0)
      k["multiple_of"] = config.bucketing.multiple_of;
    else
      k["boundaries"] = config.bucketing.boundaries;
    j["bucketing"] = k;
  } else {
    j["bucketing"] = nullptr;
  }
  j["warmup"] = {{"dims", config.warmup.dims}};
  return j.dump(2);
}

}  // namespace ortkit::serve
