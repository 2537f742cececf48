#include "ortkit/serve/model_config.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/files.h"

namespace ortkit::serve {
namespace {

using nlohmann::json;

// One integer's allowed range, with the command-line flag that can also set it.
struct Range {
  std::string_view key;
  std::string_view flag;  // empty: only the file sets it
  std::int64_t min;
  std::int64_t max;
};

// The limits keep a value from exhausting the machine at start-up (an instance is a session and its
// threads; a queue slot holds a request) while staying far above any useful setting.
constexpr int kMaxBatch = 1 << 16;
constexpr std::int64_t kMaxLength = INT32_MAX;  // a bucket boundary or a warm-up size: a dimension's length
constexpr std::int64_t kMaxVersion = 999'999'999'999'999'999;  // 18 digits: the longest version folder read
constexpr Range kRanges[] = {
    {"instances", "--instances", 1, 256},
    {"version_policy.latest.num_versions", "", 1, 1024},
    {"version_policy.specific.versions", "", 1, kMaxVersion},
    {"session.intra_op_threads", "--intra-op-threads", 0, 1024},
    {"session.inter_op_threads", "", 0, 1024},
    {"batching.max_batch_size", "--max-batch-size", 0, kMaxBatch},
    {"batching.max_queue_delay_us", "--max-queue-delay-us", 0, 60'000'000},
    {"batching.max_queue_size", "--max-queue-size", 1, 1'000'000},
    {"batching.timeout_us", "--timeout-us", 0, kMaxTimeoutUs},
    {"batching.priority_levels", "", 1, 1000},
    {"bucketing.multiple_of", "", 0, 1 << 30},
};

class Checker {
 public:
  explicit Checker(std::string_view origin) : origin_(origin) {}

  Error Fail(std::string_view key, std::string_view flag, const std::string& what) const {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: {}{}: {}", origin_, key, flag.empty() ? "" : fmt::format(" ({})", flag), what));
  }
  Status InRange(std::string_view key, std::int64_t value) const {
    for (const Range& r : kRanges) {
      if (r.key != key) continue;
      if (value >= r.min && value <= r.max) return OkStatus();
      return Fail(key, r.flag, fmt::format("expected an integer from {} to {}, got {}", r.min, r.max, value));
    }
    return OkStatus();
  }

 private:
  std::string_view origin_;
};

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
  // Integers are read here and their ranges checked by ValidateModelConfig, which also sees the
  // values that command-line flags put in.
  Status Int(const std::string& key, std::int64_t* out) {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<std::uint64_t>() > INT64_MAX)) {
      return Fail(key, fmt::format("expected an integer, got {}", v->dump()));
    }
    *out = v->get<std::int64_t>();
    return OkStatus();
  }
  Status Int(const std::string& key, int* out) {
    std::int64_t wide = *out;
    ORTKIT_RETURN_IF_ERROR(Int(key, &wide));
    // Every int key's range lies within an int: a wider value is refused with the key's own range.
    ORTKIT_RETURN_IF_ERROR(Checker(origin_).InRange(path_ + key, wide));
    if (wide < INT_MIN || wide > INT_MAX) return Fail(key, fmt::format("{} is out of range", wide));
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
  Status IntList(const std::string& key, std::vector<T>* out) {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_array()) return Fail(key, fmt::format("expected a list of integers, got {}", v->dump()));
    out->clear();
    for (const auto& e : *v) {
      if (!e.is_number_integer() || e.get<std::int64_t>() < std::numeric_limits<T>::min() ||
          (e.is_number_unsigned() ? e.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                                  : e.get<std::int64_t>() > std::numeric_limits<T>::max())) {
        return Fail(key, fmt::format("expected integers, got {}", e.dump()));
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
  ORTKIT_RETURN_IF_ERROR(r.Int("intra_op_threads", &out->intra_op_threads));
  ORTKIT_RETURN_IF_ERROR(r.Int("inter_op_threads", &out->inter_op_threads));
  std::string mode = out->sequential_execution ? "sequential" : "parallel";
  ORTKIT_RETURN_IF_ERROR(r.String("execution_mode", &mode));
  if (mode != "sequential" && mode != "parallel") {
    return r.Fail("execution_mode", fmt::format("expected \"sequential\" or \"parallel\", got \"{}\"", mode));
  }
  out->sequential_execution = mode == "sequential";
  ORTKIT_RETURN_IF_ERROR(r.Int("optimization_level", &out->optimization_level));
  return r.NoUnknownKeys();
}

Status ParseBatching(const json& object, std::string_view origin, BatchingConfig* out) {
  Reader r(object, "batching.", origin);
  ORTKIT_RETURN_IF_ERROR(r.Bool("enabled", &out->enabled));
  ORTKIT_RETURN_IF_ERROR(r.Int("max_batch_size", &out->max_batch_size));
  ORTKIT_RETURN_IF_ERROR(r.Int("max_queue_delay_us", &out->max_queue_delay_us));
  ORTKIT_RETURN_IF_ERROR(r.IntList("preferred_batch_sizes", &out->preferred_batch_sizes));
  ORTKIT_RETURN_IF_ERROR(r.Int("max_queue_size", &out->max_queue_size));
  ORTKIT_RETURN_IF_ERROR(r.Int("timeout_us", &out->timeout_us));
  ORTKIT_RETURN_IF_ERROR(r.Int("priority_levels", &out->priority_levels));
  std::sort(out->preferred_batch_sizes.begin(), out->preferred_batch_sizes.end());
  return r.NoUnknownKeys();
}

Status ParseBucketing(const json& object, std::string_view origin, BucketingConfig* out) {
  Reader r(object, "bucketing.", origin);
  out->enabled = true;
  ORTKIT_RETURN_IF_ERROR(r.String("dim", &out->dim));
  if (out->dim.empty()) return r.Fail("dim", "required: the symbolic dimension to pad (e.g. \"seq_len\")");
  ORTKIT_RETURN_IF_ERROR(r.IntList("boundaries", &out->boundaries));
  const bool has_multiple_of = r.Find("multiple_of") != nullptr;
  ORTKIT_RETURN_IF_ERROR(r.Int("multiple_of", &out->multiple_of));
  ORTKIT_RETURN_IF_ERROR(r.String("mask_input", &out->mask_input));
  // 0 stands for "no multiple_of" in memory, but a file that says 0 (or less) meant a length.
  if (has_multiple_of && out->multiple_of < 1) {
    return r.Fail("multiple_of", fmt::format("expected a positive integer (lengths pad up to a multiple of it), got {}",
                                             out->multiple_of));
  }
  if (out->boundaries.empty() == (out->multiple_of == 0)) {
    return r.Fail("boundaries", "give exactly one of \"boundaries\" (a list) and \"multiple_of\" (an integer)");
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
      if (value.is_number()) {  // one size: an integer (18446744073709551615 must not wrap to -1)
        ORTKIT_RETURN_IF_ERROR(d.Int(key, &sizes.emplace_back()));
      } else {
        ORTKIT_RETURN_IF_ERROR(d.IntList(key, &sizes));
      }
      out->dims[key] = std::move(sizes);
    }
  }
  return r.NoUnknownKeys();
}

// Exactly one of "latest", "all" and "specific", as Triton's ModelVersionPolicy.
Status ParseVersionPolicy(const json& object, std::string_view origin, VersionPolicy* out) {
  Reader r(object, "version_policy.", origin);
  if (object.size() != 1) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: version_policy: give exactly one of \"latest\", \"all\" and \"specific\", got {}",
                                 origin, object.dump()));
  }
  ORTKIT_ASSIGN_OR_RETURN(const json* latest, r.Object("latest", false));
  ORTKIT_ASSIGN_OR_RETURN(const json* all, r.Object("all", false));
  ORTKIT_ASSIGN_OR_RETURN(const json* specific, r.Object("specific", false));
  ORTKIT_RETURN_IF_ERROR(r.NoUnknownKeys());
  if (latest != nullptr) {
    out->kind = VersionPolicy::Kind::kLatest;
    Reader l(*latest, "version_policy.latest.", origin);
    ORTKIT_RETURN_IF_ERROR(l.Int("num_versions", &out->latest));
    return l.NoUnknownKeys();
  }
  if (all != nullptr) {
    out->kind = VersionPolicy::Kind::kAll;
    return Reader(*all, "version_policy.all.", origin).NoUnknownKeys();
  }
  out->kind = VersionPolicy::Kind::kSpecific;
  Reader v(*specific, "version_policy.specific.", origin);
  ORTKIT_RETURN_IF_ERROR(v.IntList("versions", &out->versions));
  ORTKIT_RETURN_IF_ERROR(v.NoUnknownKeys());
  std::sort(out->versions.begin(), out->versions.end());
  out->versions.erase(std::unique(out->versions.begin(), out->versions.end()), out->versions.end());
  return OkStatus();
}

// Triton's top-level "max_batch_size", which the config endpoint adds beside "batching".
Status ApplyTritonMaxBatchSize(Reader& r, bool has_batching, ModelConfig* config) {
  std::int64_t max_batch_size = -1;
  ORTKIT_RETURN_IF_ERROR(r.Int("max_batch_size", &max_batch_size));
  if (max_batch_size == -1) return OkStatus();
  if (!has_batching) {
    if (max_batch_size < 0 || max_batch_size > INT_MAX) {
      return r.Fail("max_batch_size", fmt::format("expected an integer >= 0, got {}", max_batch_size));
    }
    config->batching.max_batch_size = static_cast<int>(max_batch_size);
    return OkStatus();
  }
  if (max_batch_size != config->batching.EffectiveMaxBatchSize()) {
    return r.Fail("max_batch_size",
                  fmt::format("{} disagrees with \"batching\" (max_batch_size {}, enabled {}): give "
                              "one of them, or both alike",
                              max_batch_size, config->batching.max_batch_size, config->batching.enabled));
  }
  return OkStatus();
}

}  // namespace

Status ValidateModelConfig(const ModelConfig& c, std::string_view origin) {
  const Checker check(origin);
  ORTKIT_RETURN_IF_ERROR(check.InRange("instances", c.instances));
  const VersionPolicy& p = c.version_policy;
  if (p.kind == VersionPolicy::Kind::kLatest) {
    ORTKIT_RETURN_IF_ERROR(check.InRange("version_policy.latest.num_versions", p.latest));
  }
  if (p.kind == VersionPolicy::Kind::kSpecific && p.versions.empty()) {
    return check.Fail("version_policy.specific.versions", "", "expected at least one version number");
  }
  for (std::int64_t v : p.versions) ORTKIT_RETURN_IF_ERROR(check.InRange("version_policy.specific.versions", v));
  const SessionSettings& s = c.session;
  if (auto known = CheckProviderName(s.provider); !known.ok())
    return check.Fail("session.provider", "--provider", known.error().message);
  ORTKIT_RETURN_IF_ERROR(check.InRange("session.intra_op_threads", s.intra_op_threads));
  ORTKIT_RETURN_IF_ERROR(check.InRange("session.inter_op_threads", s.inter_op_threads));
  static constexpr int kLevels[] = {0, 1, 2, 99};
  if (std::find(std::begin(kLevels), std::end(kLevels), s.optimization_level) == std::end(kLevels)) {
    return check.Fail("session.optimization_level", "",
                      fmt::format("expected 0, 1, 2 or 99, got {}", s.optimization_level));
  }
  const BatchingConfig& b = c.batching;
  ORTKIT_RETURN_IF_ERROR(check.InRange("batching.max_batch_size", b.max_batch_size));
  ORTKIT_RETURN_IF_ERROR(check.InRange("batching.max_queue_delay_us", b.max_queue_delay_us));
  ORTKIT_RETURN_IF_ERROR(check.InRange("batching.max_queue_size", b.max_queue_size));
  ORTKIT_RETURN_IF_ERROR(check.InRange("batching.timeout_us", b.timeout_us));
  ORTKIT_RETURN_IF_ERROR(check.InRange("batching.priority_levels", b.priority_levels));
  for (int size : b.preferred_batch_sizes) {
    if (size < 1 || size > kMaxBatch || (b.max_batch_size > 0 && size > b.max_batch_size)) {
      return check.Fail("batching.preferred_batch_sizes", "",
                        size < 1 || size > kMaxBatch
                            ? fmt::format("expected sizes from 1 to {}, got {}", kMaxBatch, size)
                            : fmt::format("{} is larger than max_batch_size {}", size, b.max_batch_size));
    }
  }
  const BucketingConfig& k = c.bucketing;
  ORTKIT_RETURN_IF_ERROR(check.InRange("bucketing.multiple_of", k.multiple_of));
  for (std::size_t i = 0; i < k.boundaries.size(); ++i) {
    if (k.boundaries[i] < 1 || k.boundaries[i] > kMaxLength) {
      return check.Fail("bucketing.boundaries", "",
                        fmt::format("expected lengths from 1 to {}, got {}", kMaxLength, k.boundaries[i]));
    }
    if (i > 0 && k.boundaries[i] <= k.boundaries[i - 1]) {
      return check.Fail(
          "bucketing.boundaries", "",
          fmt::format("must be strictly ascending, but {} follows {}", k.boundaries[i], k.boundaries[i - 1]));
    }
  }
  for (const auto& [dim, sizes] : c.warmup.dims) {
    for (std::int64_t size : sizes) {
      if (size < 1 || size > kMaxLength) {
        return check.Fail("warmup.dims." + dim, "",
                          fmt::format("expected sizes from 1 to {}, got {}", kMaxLength, size));
      }
    }
  }
  return OkStatus();
}

std::vector<std::int64_t> VersionPolicy::Select(std::vector<std::int64_t> available) const {
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  switch (kind) {
    case Kind::kAll: return available;
    case Kind::kLatest:
      if (static_cast<std::size_t>(latest) < available.size())
        available.erase(available.begin(), available.end() - latest);
      return available;
    case Kind::kSpecific: {
      std::vector<std::int64_t> chosen;
      std::set_intersection(available.begin(), available.end(), versions.begin(), versions.end(),
                            std::back_inserter(chosen));
      return chosen;
    }
  }
  return available;
}

std::string VersionPolicy::Describe() const {
  switch (kind) {
    case Kind::kAll: return "all";
    case Kind::kLatest: return fmt::format("latest {}", latest);
    case Kind::kSpecific: return fmt::format("specific [{}]", fmt::join(versions, ", "));
  }
  return "";
}

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
  if (auto level = OptimizationLevelOfNumber(session.optimization_level)) c.optimization_level = *level;
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
  ORTKIT_RETURN_IF_ERROR(r.Int("instances", &config.instances));
  ORTKIT_ASSIGN_OR_RETURN(const json* policy, r.Object("version_policy", false));
  if (policy) ORTKIT_RETURN_IF_ERROR(ParseVersionPolicy(*policy, origin, &config.version_policy));
  ORTKIT_ASSIGN_OR_RETURN(const json* session, r.Object("session", false));
  if (session) ORTKIT_RETURN_IF_ERROR(ParseSession(*session, origin, &config.session));
  ORTKIT_ASSIGN_OR_RETURN(const json* batching, r.Object("batching", false));
  if (batching) ORTKIT_RETURN_IF_ERROR(ParseBatching(*batching, origin, &config.batching));
  ORTKIT_RETURN_IF_ERROR(ApplyTritonMaxBatchSize(r, batching != nullptr, &config));
  ORTKIT_ASSIGN_OR_RETURN(const json* bucketing, r.Object("bucketing", true));
  if (bucketing) ORTKIT_RETURN_IF_ERROR(ParseBucketing(*bucketing, origin, &config.bucketing));
  ORTKIT_ASSIGN_OR_RETURN(const json* warmup, r.Object("warmup", false));
  if (warmup) ORTKIT_RETURN_IF_ERROR(ParseWarmup(*warmup, origin, &config.warmup));
  ORTKIT_RETURN_IF_ERROR(r.NoUnknownKeys());
  ORTKIT_RETURN_IF_ERROR(ValidateModelConfig(config, origin));
  return config;
}

Result<ModelConfig> LoadModelConfig(const std::filesystem::path& path) {
  auto size = RegularFileSize(path, "a configuration file");
  if (!size.ok()) return MakeError(size.error().kind, "--config " + size.error().message);
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
  const VersionPolicy& policy = config.version_policy;
  switch (policy.kind) {
    case VersionPolicy::Kind::kLatest: j["version_policy"] = {{"latest", {{"num_versions", policy.latest}}}}; break;
    case VersionPolicy::Kind::kAll: j["version_policy"] = {{"all", json::object()}}; break;
    case VersionPolicy::Kind::kSpecific: j["version_policy"] = {{"specific", {{"versions", policy.versions}}}}; break;
  }
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

void ConfigOverrides::ApplyTo(ModelConfig* config) const {
  if (instances) config->instances = *instances;
  if (intra_op_threads) config->session.intra_op_threads = *intra_op_threads;
  if (provider) config->session.provider = *provider;
  if (max_batch_size) {
    config->batching.max_batch_size = *max_batch_size;
    auto& preferred = config->batching.preferred_batch_sizes;
    preferred.erase(std::remove_if(preferred.begin(), preferred.end(), [&](int s) { return s > *max_batch_size; }),
                    preferred.end());
  }
  if (max_queue_delay_us) config->batching.max_queue_delay_us = *max_queue_delay_us;
  if (max_queue_size) config->batching.max_queue_size = *max_queue_size;
  if (timeout_us) config->batching.timeout_us = *timeout_us;
  if (no_batching) config->batching.enabled = false;
  if (no_bucketing) config->bucketing.enabled = false;
}

}  // namespace ortkit::serve
