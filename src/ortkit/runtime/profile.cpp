#include "ortkit/runtime/profile.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/filereadstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace ortkit {
namespace {

constexpr std::string_view kKernelSuffix = "_kernel_time";
constexpr std::string_view kCpuProvider = "CPUExecutionProvider";

bool IsMemoryCopy(const std::string& op_type) { return op_type.starts_with("Memcpy"); }

template <typename T>
void SortByTime(std::vector<T>& items) {
  std::stable_sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.total_us > b.total_us; });
}

/// The events of a trace as RapidJSON's reader hands them over, one value at a time: memory holds one
/// event and the nodes seen, never the document (a model of a million nodes writes a trace of a
/// quarter of a gigabyte, whose tree would take gigabytes).
class TraceEvents : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TraceEvents> {
 public:
  struct Event {
    std::string category, name, op_type, provider, node_index;
    double duration = 0;
  };
  explicit TraceEvents(std::function<void(const Event&)> on_event) : on_event_(std::move(on_event)) {}

  bool Default() { return true; }  // booleans, nulls: no field ortkit reads
  bool String(const char* text, rapidjson::SizeType length, bool) {
    const std::string_view value(text, length);
    if (AtEvent()) {
      if (key_ == "cat") event_.category = value;
      if (key_ == "name") event_.name = value;
    } else if (AtEvent(1) && in_args_) {
      if (key_ == "op_name") event_.op_type = value;
      if (key_ == "provider") event_.provider = value;
      if (key_ == "node_index") event_.node_index = value;
    }
    return true;
  }
  bool Int(int v) { return Number(v); }
  bool Uint(unsigned v) { return Number(v); }
  bool Int64(std::int64_t v) { return Number(static_cast<double>(v)); }
  bool Uint64(std::uint64_t v) { return Number(static_cast<double>(v)); }
  bool Double(double v) { return Number(v); }
  bool Key(const char* text, rapidjson::SizeType length, bool) {
    key_.assign(text, length);
    return true;
  }
  bool StartObject() {
    ++depth_;
    if (depth_ == 1) wrapped_ = true;  // {"traceEvents": [...]}: the events are one level down
    if (AtEvent()) event_ = Event{};
    if (AtEvent(1)) in_args_ = key_ == "args";
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (AtEvent()) on_event_(event_);
    if (AtEvent(1)) in_args_ = false;
    --depth_;
    return true;
  }
  bool StartArray() {
    ++depth_;
    const bool events = events_depth_ == 0 && (depth_ == 1 || (depth_ == 2 && wrapped_ && key_ == "traceEvents"));
    if (events) events_depth_ = depth_;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    if (depth_ == events_depth_) events_depth_ = -1;  // read: nothing after it is an event
    --depth_;
    return true;
  }
  bool found_array() const { return events_depth_ != 0; }

 private:
  /// Whether the reader is `below` levels inside an event: an object right inside the events array.
  bool AtEvent(int below = 0) const { return events_depth_ > 0 && depth_ == events_depth_ + 1 + below; }
  bool Number(double v) {
    if (AtEvent() && key_ == "dur") event_.duration = v;
    return true;
  }
  std::function<void(const Event&)> on_event_;
  Event event_;
  std::string key_;
  int depth_ = 0;
  int events_depth_ = 0;  ///< the events array's depth once it opened; -1 once it closed
  bool in_args_ = false;
  bool wrapped_ = false;
};

Result<ProfileReport> Summarize(std::map<std::string, NodeProfile> nodes, ProfileReport report,
                                std::string_view requested_provider);

template <typename Stream>
Result<ProfileReport> ParseTrace(Stream& stream, std::string_view requested_provider) {
  ProfileReport report;
  std::map<std::string, NodeProfile> nodes;
  TraceEvents events([&](const TraceEvents::Event& event) {
    if (event.category == "Session") {
      if (event.name == "model_run") {
        ++report.runs;
        report.run_total_us += event.duration;
      } else if (event.name == "session_initialization") {
        report.session_initialization_us += event.duration;
      }
      return;
    }
    if (event.category != "Node" || !event.name.ends_with(kKernelSuffix)) return;
    std::string node_name = event.name.substr(0, event.name.size() - kKernelSuffix.size());
    if (node_name.empty()) node_name = "#" + (event.node_index.empty() ? std::string("?") : event.node_index);
    NodeProfile& node = nodes[node_name];
    node.node = node_name;
    node.op_type = event.op_type.empty() ? "?" : event.op_type;
    node.provider = event.provider.empty() ? "?" : event.provider;
    ++node.calls;
    node.total_us += event.duration;
    report.node_total_us += event.duration;
  });
  rapidjson::Reader reader;
  const rapidjson::ParseResult parsed = reader.Parse(stream, events);
  if (!parsed) {
    return MakeError(ErrorKind::kInvalidModel,
                     fmt::format("the profile trace is not JSON: {} at byte {}",
                                 rapidjson::GetParseError_En(parsed.Code()), parsed.Offset()));
  }
  if (!events.found_array()) return MakeError(ErrorKind::kInvalidModel, "the profile trace is not an array of events");
  return Summarize(std::move(nodes), std::move(report), requested_provider);
}

}  // namespace

Result<ProfileReport> ParseProfileTrace(std::string_view json_text, std::string_view requested_provider) {
  rapidjson::MemoryStream memory(json_text.data(), json_text.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> stream(memory);
  return ParseTrace(stream, requested_provider);
}

namespace {

// `nodes` is changed in place (each node's share): the check misses writes through a structured binding.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
Result<ProfileReport> Summarize(std::map<std::string, NodeProfile> nodes, ProfileReport report,
                                std::string_view requested_provider) {
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

}  // namespace

Result<ProfileReport> ReadProfileTrace(const std::filesystem::path& path, std::string_view requested_provider) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return MakeError(ErrorKind::kIo, fmt::format("cannot read the profile trace {}", path.string()));
  char buffer[1 << 16];
  rapidjson::FileReadStream stream(file, buffer, sizeof(buffer));
  auto report = ParseTrace(stream, requested_provider);
  std::fclose(file);
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
