#include "ortkit/runtime/profile.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit {
namespace {

constexpr std::string_view kKernelSuffix = "_kernel_time";
constexpr std::string_view kCpuProvider = "CPUExecutionProvider";

bool IsMemoryCopy(const std::string& op_type) { return op_type.starts_with("Memcpy"); }

template <typename T>
void SortByTime(std::vector<T>& items) {
  std::stable_sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.total_us > b.total_us; });
}

}  // namespace

Result<ProfileReport> ParseProfileTrace(std::string_view json_text, std::string_view requested_provider) {
  nlohmann::json events;
  try {
    events = nlohmann::json::parse(json_text);
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kInvalidModel, std::string("the profile trace is not JSON: ") + e.what());
  }
  // Older runtimes write {"traceEvents": [...]}; current ones a bare array.
  if (events.is_object() && events.contains("traceEvents")) events = events["traceEvents"];
  if (!events.is_array()) return MakeError(ErrorKind::kInvalidModel, "the profile trace is not an array of events");

  ProfileReport report;
  std::map<std::string, NodeProfile> nodes;
  try {
    for (const auto& event : events) {
      if (!event.is_object()) continue;
      const std::string category = event.value("cat", "");
      const std::string name = event.value("name", "");
      const double duration = event.contains("dur") && event["dur"].is_number() ? event["dur"].get<double>() : 0.0;
      if (category == "Session") {
        if (name == "model_run") {
          ++report.runs;
          report.run_total_us += duration;
        } else if (name == "session_initialization") {
          report.session_initialization_us += duration;
        }
        continue;
      }
      if (category != "Node" || !name.ends_with(kKernelSuffix)) continue;
      const nlohmann::json args = event.value("args", nlohmann::json::object());
      std::string node_name = name.substr(0, name.size() - kKernelSuffix.size());
      if (node_name.empty()) node_name = "#" + args.value("node_index", std::string("?"));
      NodeProfile& node = nodes[node_name];
      node.node = node_name;
      node.op_type = args.value("op_name", std::string("?"));
      node.provider = args.value("provider", std::string("?"));
      ++node.calls;
      node.total_us += duration;
      report.node_total_us += duration;
    }
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kInvalidModel, std::string("reading the profile trace: ") + e.what());
  }

  std::map<std::string, GroupProfile> op_types;
  std::map<std::string, GroupProfile> providers;
  const ProviderInfo* requested = FindProvider(requested_provider);
  const bool asked_for_cpu = requested == nullptr || requested->ort_name == kCpuProvider;
  for (auto& [name, node] : nodes) {
    node.share = report.node_total_us > 0 ? node.total_us / report.node_total_us : 0;
    for (auto* group : {&op_types[node.op_type], &providers[node.provider]}) {
      ++group->nodes;
      group->calls += node.calls;
      group->total_us += node.total_us;
    }
    op_types[node.op_type].name = node.op_type;
    providers[node.provider].name = node.provider;
    if (IsMemoryCopy(node.op_type))
      report.memory_copies.push_back(node);
    else if (!asked_for_cpu && node.provider == kCpuProvider)
      report.cpu_fallbacks.push_back(node);
    report.nodes.push_back(node);
  }
  for (auto* groups : {&op_types, &providers}) {
    for (auto& [name, group] : *groups) {
      group.share = report.node_total_us > 0 ? group.total_us / report.node_total_us : 0;
      (groups == &op_types ? report.op_types : report.providers).push_back(group);
    }
  }
  SortByTime(report.nodes);
  SortByTime(report.op_types);
  SortByTime(report.providers);
  SortByTime(report.memory_copies);
  SortByTime(report.cpu_fallbacks);
  return report;
}

Result<ProfileReport> ReadProfileTrace(const std::filesystem::path& path, std::string_view requested_provider) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorKind::kIo, fmt::format("cannot read the profile trace {}", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  auto report = ParseProfileTrace(text.str(), requested_provider);
  if (!report.ok()) return MakeError(report.error().kind, fmt::format("{}: {}", path.string(), report.error().message));
  report->trace = path;
  return report;
}

Result<ProfileReport> CollectProfile(Session& session, bool keep_trace) {
  ORTKIT_ASSIGN_OR_RETURN(auto path, EndProfiling(session));
  auto report = ReadProfileTrace(path, session.config().provider);
  if (!keep_trace) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    if (report.ok()) report->trace.clear();
  }
  return report;
}

std::string DescribePlacement(const ProfileReport& report) {
  std::string text;
  for (const auto& group : report.providers)
    text +=
        fmt::format("{}{} {} node{}", text.empty() ? "" : ", ", group.name, group.nodes, group.nodes == 1 ? "" : "s");
  return text.empty() ? "no node ran" : text;
}

}  // namespace ortkit
