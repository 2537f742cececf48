#include "ortkit/bench/report.h"

#include <map>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit {
namespace {

using nlohmann::json;

/// Top nodes a saved profile keeps: the text report shows ten, the rest is in the trace.
constexpr std::size_t kSavedTopNodes = 20;

/// The value type a field is read as: T itself, or T of an optional<T> (absent when the key is).
template <typename T>
struct FieldValue {
  using type = T;
};
template <typename T>
struct FieldValue<std::optional<T>> {
  using type = T;
};

template <typename T>
constexpr std::string_view Expected() {
  if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_integral_v<T>)
    return "an integer";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else if constexpr (std::is_same_v<T, std::string>)
    return "a string";
  else if constexpr (std::is_same_v<T, std::vector<double>>)
    return "a list of numbers";
  else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>)
    return "a list of integers";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>)
    return "a list of strings";
  else
    return "an object of integers";
}

/// Reads `object[key]` into `out` when the key is present; a value of another type is an error
/// naming `path` and the key ("results[2].batch: expected an integer, got \"eight\"").
template <typename T>
Status ReadOptional(const json& object, const std::string& path, const char* key, T* out) {
  const auto it = object.find(key);
  if (it == object.end()) return OkStatus();
  using Value = typename FieldValue<T>::type;
  try {
    *out = it->template get<Value>();
  } catch (const json::exception&) {
    std::string value = it->dump();
    if (value.size() > 60) value = value.substr(0, 57) + "...";
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}{}: expected {}, got {}", path, key, Expected<Value>(), value));
  }
  return OkStatus();
}

/// The object at `object[key]` when present; an error naming it when it is not an object/array.
Result<const json*> Child(const json& object, const std::string& path, const char* key, bool array) {
  const auto it = object.find(key);
  if (it == object.end()) return static_cast<const json*>(nullptr);
  if (array ? !it->is_array() : !it->is_object()) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}{}: expected {}, got {}", path, key,
                                                              array ? "a list" : "an object", it->type_name()));
  }
  return &*it;
}

// ---------------------------------------------------------------------------------------------
// Writing.

json NodeJson(const NodeProfile& n) {
  return {{"node", n.node},   {"op_type", n.op_type},   {"provider", n.provider},
          {"calls", n.calls}, {"total_us", n.total_us}, {"share", n.share}};
}

json GroupJson(const GroupProfile& g) {
  return {{"name", g.name}, {"nodes", g.nodes}, {"calls", g.calls}, {"total_us", g.total_us}, {"share", g.share}};
}

json ProfileJson(const ProfileReport& p) {
  json out = {{"trace", p.trace.string()},
              {"runs", p.runs},
              {"run_total_us", p.run_total_us},
              {"node_total_us", p.node_total_us},
              {"session_initialization_us", p.session_initialization_us}};
  out["top_nodes"] = json::array();
  for (std::size_t i = 0; i < p.nodes.size() && i < kSavedTopNodes; ++i)
    out["top_nodes"].push_back(NodeJson(p.nodes[i]));
  out["op_types"] = json::array();
  for (const auto& g : p.op_types) out["op_types"].push_back(GroupJson(g));
  out["providers"] = json::array();
  for (const auto& g : p.providers) out["providers"].push_back(GroupJson(g));
  out["memory_copies"] = json::array();
  for (const auto& n : p.memory_copies) out["memory_copies"].push_back(NodeJson(n));
  out["cpu_fallbacks"] = json::array();
  for (const auto& n : p.cpu_fallbacks) out["cpu_fallbacks"].push_back(NodeJson(n));
  return out;
}

json SettingsJson(const BenchSettings& s) {
  json out = {{"intra_op_threads", s.intra_op_threads},
              {"inter_op_threads", s.inter_op_threads},
              {"execution_mode", s.execution_mode},
              {"optimization_level", s.optimization_level},
              {"memory_pattern", s.memory_pattern},
              {"cpu_arena", s.cpu_arena},
              {"io_binding", s.io_binding},
              {"concurrency", s.concurrency},
              {"sessions", s.sessions},
              {"warmup", s.warmup},
              {"hardware_threads", s.hardware_threads},
              {"cores", s.cores}};
  if (s.iterations) out["iterations"] = *s.iterations;
  if (s.duration) out["duration"] = *s.duration;
  return out;
}

json PointJson(const MeasuredPoint& p) {
  const BenchResult& r = p.result;
  json out = {{"label", p.point.label},
              {"dims", p.point.dims},
              {"batch", p.point.batch},
              {"first_run_ms", r.first_run_ms},
              {"runs", r.runs},
              {"wall_s", r.wall_s},
              {"latency_ms", LatencyStatsJson(r.latency)},
              {"runs_per_s", r.runs_per_s},
              {"samples_per_s", r.samples_per_s},
              {"cpu_seconds", r.usage.cpu_seconds},
              {"cpu_utilisation", r.usage.cpu_utilisation},
              {"peak_rss_bytes", r.usage.peak_rss_bytes}};
  if (p.throughput_vs_batch1 > 0) out["throughput_vs_batch1"] = p.throughput_vs_batch1;
  for (const auto& input : p.inputs)
    out["inputs"].push_back({{"name", input.name}, {"shape", input.shape}, {"source", input.source}});
  const auto kept = Thin(r.samples_ms, kSavedSamples);
  out["samples_kept"] = kept.size();
  out["samples_ms"] = kept;
  if (r.failure) out["failure"] = r.failure->message;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading.

Status ReadSettings(const json& root, BenchSettings* s) {
  ORTKIT_RETURN_IF_ERROR(ReadOptional(root, "", "model", &s->model));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(root, "", "onnxruntime", &s->onnxruntime));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(root, "", "provider", &s->provider));
  ORTKIT_ASSIGN_OR_RETURN(const json* config, Child(root, "", "config", false));
  if (config == nullptr) return OkStatus();
  const json& c = *config;
  const std::string path = "config.";
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "intra_op_threads", &s->intra_op_threads));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "inter_op_threads", &s->inter_op_threads));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "execution_mode", &s->execution_mode));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "optimization_level", &s->optimization_level));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "memory_pattern", &s->memory_pattern));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "cpu_arena", &s->cpu_arena));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "io_binding", &s->io_binding));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "concurrency", &s->concurrency));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "sessions", &s->sessions));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "warmup", &s->warmup));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "hardware_threads", &s->hardware_threads));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "cores", &s->cores));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(c, path, "iterations", &s->iterations));
  return ReadOptional(c, path, "duration", &s->duration);
}

Status ReadLatency(const json& point, const std::string& path, LatencyStats* s) {
  ORTKIT_ASSIGN_OR_RETURN(const json* latency, Child(point, path, "latency_ms", false));
  if (latency == nullptr) return OkStatus();
  const std::string inner = path + "latency_ms.";
  for (const auto& [key, field] : {std::pair{"min", &s->min},
                                   {"mean", &s->mean},
                                   {"p50", &s->p50},
                                   {"p90", &s->p90},
                                   {"p95", &s->p95},
                                   {"p99", &s->p99},
                                   {"p99_9", &s->p999},
                                   {"max", &s->max},
                                   {"stddev", &s->stddev}}) {
    ORTKIT_RETURN_IF_ERROR(ReadOptional(*latency, inner, key, field));
  }
  return OkStatus();
}

Status ReadInputs(const json& point, const std::string& path, std::vector<PointInput>* inputs) {
  ORTKIT_ASSIGN_OR_RETURN(const json* list, Child(point, path, "inputs", true));
  if (list == nullptr) return OkStatus();
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string inner = fmt::format("{}inputs[{}].", path, i);
    PointInput input;
    ORTKIT_RETURN_IF_ERROR(ReadOptional((*list)[i], inner, "name", &input.name));
    ORTKIT_RETURN_IF_ERROR(ReadOptional((*list)[i], inner, "shape", &input.shape));
    ORTKIT_RETURN_IF_ERROR(ReadOptional((*list)[i], inner, "source", &input.source));
    inputs->push_back(std::move(input));
  }
  return OkStatus();
}

/// Everything of one result beyond what --compare needs.
Status ReadPointDetails(const json& r, const std::string& path, MeasuredPoint* p) {
  BenchResult& result = p->result;
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "dims", &p->point.dims));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "batch", &p->point.batch));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "first_run_ms", &result.first_run_ms));
  result.runs = static_cast<std::int64_t>(result.samples_ms.size());
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "runs", &result.runs));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "wall_s", &result.wall_s));
  ORTKIT_RETURN_IF_ERROR(ReadLatency(r, path, &result.latency));
  result.latency.count = result.runs;
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "samples_per_s", &result.samples_per_s));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "cpu_seconds", &result.usage.cpu_seconds));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "cpu_utilisation", &result.usage.cpu_utilisation));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "peak_rss_bytes", &result.usage.peak_rss_bytes));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "throughput_vs_batch1", &p->throughput_vs_batch1));
  ORTKIT_RETURN_IF_ERROR(ReadInputs(r, path, &p->inputs));
  std::optional<std::string> failure;
  ORTKIT_RETURN_IF_ERROR(ReadOptional(r, path, "failure", &failure));
  if (failure) result.failure = MakeError(ErrorKind::kRuntime, *failure);
  return OkStatus();
}

Result<std::vector<MeasuredPoint>> ReadPoints(const json& results) {
  std::vector<MeasuredPoint> points;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    MeasuredPoint p;
    try {
      p.point.label = r.at("label").get<std::string>();
      p.result.samples_ms = r.at("samples_ms").get<std::vector<double>>();
      p.result.runs_per_s = r.at("runs_per_s").get<double>();
    } catch (const std::exception& e) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("a result lacks label, samples_ms or runs_per_s: {}", e.what()));
    }
    ORTKIT_RETURN_IF_ERROR(ReadPointDetails(r, fmt::format("results[{}].", i), &p));
    points.push_back(std::move(p));
  }
  return points;
}

Result<std::vector<NodeProfile>> ReadNodes(const json& profile, const char* key) {
  std::vector<NodeProfile> nodes;
  ORTKIT_ASSIGN_OR_RETURN(const json* list, Child(profile, "profile.", key, true));
  for (std::size_t i = 0; list != nullptr && i < list->size(); ++i) {
    const std::string path = fmt::format("profile.{}[{}].", key, i);
    const json& n = (*list)[i];
    NodeProfile node;
    ORTKIT_RETURN_IF_ERROR(ReadOptional(n, path, "node", &node.node));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(n, path, "op_type", &node.op_type));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(n, path, "provider", &node.provider));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(n, path, "calls", &node.calls));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(n, path, "total_us", &node.total_us));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(n, path, "share", &node.share));
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Result<std::vector<GroupProfile>> ReadGroups(const json& profile, const char* key) {
  std::vector<GroupProfile> groups;
  ORTKIT_ASSIGN_OR_RETURN(const json* list, Child(profile, "profile.", key, true));
  for (std::size_t i = 0; list != nullptr && i < list->size(); ++i) {
    const std::string path = fmt::format("profile.{}[{}].", key, i);
    const json& g = (*list)[i];
    GroupProfile group;
    ORTKIT_RETURN_IF_ERROR(ReadOptional(g, path, "name", &group.name));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(g, path, "nodes", &group.nodes));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(g, path, "calls", &group.calls));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(g, path, "total_us", &group.total_us));
    ORTKIT_RETURN_IF_ERROR(ReadOptional(g, path, "share", &group.share));
    groups.push_back(std::move(group));
  }
  return groups;
}

Result<ProfileReport> ReadProfile(const json& p) {
  ProfileReport profile;
  std::string trace;
  ORTKIT_RETURN_IF_ERROR(ReadOptional(p, "profile.", "trace", &trace));
  profile.trace = trace;
  ORTKIT_RETURN_IF_ERROR(ReadOptional(p, "profile.", "runs", &profile.runs));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(p, "profile.", "run_total_us", &profile.run_total_us));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(p, "profile.", "node_total_us", &profile.node_total_us));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(p, "profile.", "session_initialization_us", &profile.session_initialization_us));
  ORTKIT_ASSIGN_OR_RETURN(profile.nodes, ReadNodes(p, "top_nodes"));
  ORTKIT_ASSIGN_OR_RETURN(profile.op_types, ReadGroups(p, "op_types"));
  ORTKIT_ASSIGN_OR_RETURN(profile.providers, ReadGroups(p, "providers"));
  ORTKIT_ASSIGN_OR_RETURN(profile.memory_copies, ReadNodes(p, "memory_copies"));
  ORTKIT_ASSIGN_OR_RETURN(profile.cpu_fallbacks, ReadNodes(p, "cpu_fallbacks"));
  return profile;
}

}  // namespace

json LatencyStatsJson(const LatencyStats& s) {
  return {{"min", s.min}, {"mean", s.mean},  {"p50", s.p50}, {"p90", s.p90},      {"p95", s.p95},
          {"p99", s.p99}, {"p99_9", s.p999}, {"max", s.max}, {"stddev", s.stddev}};
}

json BenchReport::ToJson() const {
  json out = {
      {"model", settings.model},          {"onnxruntime", settings.onnxruntime},    {"provider", settings.provider},
      {"config", SettingsJson(settings)}, {"session_create_ms", session_create_ms}, {"peak_rss_bytes", peak_rss_bytes}};
  out["results"] = json::array();
  for (const auto& p : points) out["results"].push_back(PointJson(p));
  if (stopped) out["stopped"] = *stopped;
  out["size_notes"] = size_notes;
  if (profile) out["profile"] = ProfileJson(*profile);
  if (profile) out["next_step"] = next_step.empty() ? json() : json(next_step);
  return out;
}

Result<BenchReport> BenchReport::FromJson(const json& root) {
  if (!root.is_object() || !root.contains("results") || !root["results"].is_array()) {
    return MakeError(ErrorKind::kInvalidArgument, "not an `ortkit bench --format json` report (no \"results\" array)");
  }
  BenchReport report;
  ORTKIT_ASSIGN_OR_RETURN(report.points, ReadPoints(root["results"]));
  ORTKIT_RETURN_IF_ERROR(ReadSettings(root, &report.settings));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(root, "", "session_create_ms", &report.session_create_ms));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(root, "", "peak_rss_bytes", &report.peak_rss_bytes));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(root, "", "stopped", &report.stopped));
  ORTKIT_RETURN_IF_ERROR(ReadOptional(root, "", "size_notes", &report.size_notes));
  ORTKIT_ASSIGN_OR_RETURN(const json* profile, Child(root, "", "profile", false));
  if (profile != nullptr) {
    ORTKIT_ASSIGN_OR_RETURN(report.profile, ReadProfile(*profile));
  }
  return report;
}

void SetThroughputVsBatchOne(std::vector<MeasuredPoint>& points, const std::string& batch_dim) {
  for (auto& p : points) {
    p.throughput_vs_batch1 = 0;
    for (const auto& other : points) {
      if (other.point.batch != 1 || other.result.samples_per_s <= 0) continue;
      bool same = true;
      for (const auto& [name, value] : p.point.dims) {
        if (name != batch_dim && other.point.dims.count(name) && other.point.dims.at(name) != value) same = false;
      }
      if (same) {
        p.throughput_vs_batch1 = p.result.samples_per_s / other.result.samples_per_s;
        break;
      }
    }
  }
}

std::vector<ComparablePoint> ComparablePoints(const BenchReport& report) {
  std::vector<ComparablePoint> points;
  for (const auto& p : report.points) points.push_back({p.point.label, p.result.samples_ms, p.result.runs_per_s});
  return points;
}

}  // namespace ortkit
