#include "ortkit/model/export_record.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ortkit {
namespace {

template <typename T>
T Field(const nlohmann::json& json, const char* key, T fallback) {
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::string ExportWarning::Where() const { return line > 0 ? fmt::format("{}:{}", file, line) : file; }

std::string ExportRecord::Describe() const {
  std::string text = framework.empty() ? "unknown framework" : framework + " " + framework_version;
  if (!exporter.empty()) text += ", " + exporter;
  if (opset > 0) text += fmt::format(", opset {}", opset);
  return text;
}

Result<ExportRecord> ReadExportRecord(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return MakeError(ErrorKind::kIo, fmt::format("cannot read '{}'", path.string()));
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object())
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("'{}' is not a JSON object", path.string()));
  ExportRecord record;
  record.path = path;
  record.framework = Field<std::string>(json, "framework", "");
  record.framework_version = Field<std::string>(json, "framework_version", "");
  record.exporter = Field<std::string>(json, "exporter", "");
  record.exporter_version = Field<std::string>(json, "exporter_version", "");
  record.opset = Field<int>(json, "opset", 0);
  record.training = Field<bool>(json, "training", false);
  record.eval_enforced = Field<bool>(json, "eval_enforced", false);
  record.module_was_training = Field<bool>(json, "module_was_training", false);
  record.inputs_dropped = Field<std::vector<std::string>>(json, "inputs_dropped", {});
  record.second_data_set_error = Field<std::string>(json, "second_data_set_error", "");
  record.dim_limits = Field<std::map<std::string, std::int64_t>>(json, "dim_limits", {});
  std::erase_if(record.dim_limits, [](const auto& limit) { return limit.second < 1; });
  record.dim_sums = Field<std::map<std::string, std::vector<std::string>>>(json, "dim_sums", {});
  if (auto it = json.find("warnings"); it != json.end() && it->is_array()) {
    for (const auto& w : *it) {
      if (!w.is_object()) continue;
      record.warnings.push_back({Field<std::string>(w, "category", ""), Field<std::string>(w, "message", ""),
                                 Field<std::string>(w, "file", ""), Field<int>(w, "line", 0),
                                 Field<std::string>(w, "source", ""), Field<std::string>(w, "code", ""),
                                 Field<std::string>(w, "fix", ""), Field<std::string>(w, "input", "")});
    }
  }
  if (auto it = json.find("error"); it != json.end() && it->is_object()) {
    Location where;
    where.file = path.string();
    // The user's line the failure points at, when the companion found it: that is where to look.
    if (auto location = it->find("location"); location != it->end() && location->is_object()) {
      ExportWarning line;
      line.file = Field<std::string>(*location, "file", "");
      line.line = Field<int>(*location, "line", 0);
      line.source = Field<std::string>(*location, "source", "");
      if (!line.file.empty()) {
        where.file = line.Where();
        record.error_line = std::move(line);
      }
    }
    Diagnosis d =
        Diagnose(Field<std::string>(*it, "code", "export.failed"), Field<std::string>(*it, "message", ""), where);
    // The companion's fix is specific to this export (the opset that works); the catalogue's is generic.
    if (auto fix = Field<std::string>(*it, "fix", ""); !fix.empty()) d.fix = fix;
    record.error = std::move(d);
  }
  return record;
}

std::vector<Diagnosis> ExportDiagnoses(const ExportRecord& record) {
  std::vector<Diagnosis> diagnoses;
  if (record.error) diagnoses.push_back(*record.error);
  for (const auto& w : record.warnings) {
    if (w.code.empty()) continue;
    Location where;
    where.file = w.Where();
    where.input = w.input;
    // A finding of the companion's own (no category) is already a sentence; an exporter warning is quoted.
    std::string message = w.category.empty() ? w.message : fmt::format("{} at export", w.category);
    if (!w.category.empty()) {
      if (!w.source.empty()) message += fmt::format(", on `{}`", w.source);
      message += ": " + FirstLine(w.message);
    }
    Diagnosis d = Diagnose(w.code, std::move(message), where);
    if (!w.fix.empty()) d.fix = w.fix;
    diagnoses.push_back(std::move(d));
  }
  if (record.training) {
    Location where;
    where.file = record.path.string();
    diagnoses.push_back(Diagnose("export.training-mode",
                                 fmt::format("export.json records training mode ({})", record.Describe()), where));
  }
  for (const auto& name : record.inputs_dropped) {
    Location where;
    where.input = name;
    where.file = record.path.string();
    diagnoses.push_back(
        Diagnose("export.input-dropped",
                 fmt::format("the model takes '{}' but the exported graph has no such input: its value at "
                             "export time is baked in, whatever is passed at run time",
                             name),
                 where));
  }
  if (!record.second_data_set_error.empty()) {
    Location where;
    where.file = record.path.string();
    diagnoses.push_back(Diagnose("export.second-reference-missing",
                                 "the framework failed on the second data set: " + record.second_data_set_error,
                                 where));
  }
  return diagnoses;
}

void to_json(nlohmann::json& json, const ExportRecord& record) {
  json = {{"path", record.path.string()},
          {"framework", record.framework},
          {"framework_version", record.framework_version},
          {"exporter", record.exporter},
          {"exporter_version", record.exporter_version},
          {"opset", record.opset},
          {"training", record.training},
          {"eval_enforced", record.eval_enforced},
          {"inputs_dropped", record.inputs_dropped},
          {"dim_limits", record.dim_limits},
          {"dim_sums", record.dim_sums}};
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : record.warnings) {
    warnings.push_back({{"category", w.category},
                        {"message", w.message},
                        {"file", w.file},
                        {"line", w.line},
                        {"source", w.source},
                        {"fix", w.fix},
                        {"input", w.input},
                        {"code", w.code.empty() ? nlohmann::json() : nlohmann::json(w.code)}});
  }
  json["warnings"] = std::move(warnings);
  if (record.error) json["error"] = *record.error;
}

}  // namespace ortkit
