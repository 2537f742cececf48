#include "ortkit/diagnose/diagnosis.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "ortkit/diagnose/catalogue.h"

namespace ortkit {

const char* ToString(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

bool Location::empty() const {
  return file.empty() && input.empty() && output.empty() && node.empty() && op_type.empty() && tensor.empty() &&
         dimension.empty();
}

std::string Location::Describe() const {
  std::string out;
  auto add = [&](const std::string& part) {
    if (!out.empty()) out += ", ";
    out += part;
  };
  if (!node.empty())
    add("node '" + node + "'" + (op_type.empty() ? "" : " (" + op_type + ")"));
  else if (!op_type.empty())
    add("op " + op_type);
  if (!input.empty()) add("input '" + input + "'");
  if (!output.empty()) add("output '" + output + "'");
  if (!tensor.empty()) add("tensor '" + tensor + "'");
  if (!dimension.empty()) add("dimension " + dimension);
  if (!file.empty()) add("file " + file);
  return out;
}

Diagnosis Diagnose(std::string_view code, std::string message, Location location) {
  const CodeInfo* info = FindCode(code);
  if (info == nullptr) {
    info = FindCode("internal.unknown-code");
    message = "unknown code '" + std::string(code) + "': " + message;
  }
  Diagnosis d;
  d.code = std::string(info->code);
  d.severity = info->severity;
  d.message = std::move(message);
  d.location = std::move(location);
  d.cause = std::string(info->cause);
  d.fix = std::string(info->fix);
  return d;
}

Severity WorstSeverity(const std::vector<Diagnosis>& diagnoses) {
  Severity worst = Severity::kInfo;
  for (const auto& d : diagnoses) worst = std::max(worst, d.severity);
  return worst;
}

void SortBySeverity(std::vector<Diagnosis>& diagnoses) {
  std::stable_sort(diagnoses.begin(), diagnoses.end(), [](const Diagnosis& a, const Diagnosis& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.code < b.code;
  });
}

void to_json(nlohmann::json& json, const Location& l) {
  json = nlohmann::json::object();
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) json[key] = value;
  };
  put("file", l.file);
  put("input", l.input);
  put("output", l.output);
  put("node", l.node);
  put("op_type", l.op_type);
  put("tensor", l.tensor);
  put("dimension", l.dimension);
}

void to_json(nlohmann::json& json, const Diagnosis& d) {
  json = {{"code", d.code},          {"severity", ToString(d.severity)},
          {"message", d.message},    {"location", d.location},
          {"cause", d.cause},        {"fix", d.fix},
          {"heuristic", d.heuristic}};
}

}  // namespace ortkit
