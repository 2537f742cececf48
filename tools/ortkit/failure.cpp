#include "failure.h"

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"

namespace ortkit::cli {
namespace {

/// The error kind as a word for scripts: "invalid_argument", "not_found", "io", ...
std::string KindWord(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid_argument";
    case ErrorKind::kNotFound: return "not_found";
    case ErrorKind::kIo: return "io";
    case ErrorKind::kInvalidModel: return "invalid_model";
    case ErrorKind::kRuntime: return "runtime";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

void ReportFailure(std::string_view command, const std::vector<Diagnosis>& diagnoses, std::string_view summary,
                   Format format, std::string_view kind) {
  if (format == Format::kJson) {
    const nlohmann::json json = {{"command", command}, {"error", summary}, {"kind", kind}, {"diagnoses", diagnoses}};
    PrintText(stdout, JsonText(json) + "\n");
    return;
  }
  const Style style = Style::ForStream(stderr);
  std::string out = fmt::format("ortkit{}{}: {}\n", command.empty() ? "" : " ", command, summary);
  for (const auto& d : diagnoses) out += "\n" + RenderDiagnosis(d, style);
  PrintText(stderr, out);
}

}  // namespace

int Fail(std::string_view command, const Error& error, Format format, const std::vector<Diagnosis>& diagnoses) {
  ReportFailure(command, diagnoses, error.message, format, KindWord(error.kind));
  return ExitCodeFor(error.kind);
}

Error AsUsageError(Error error) {
  if (ExitCodeFor(error.kind) != kExitUsage) error.kind = ErrorKind::kInvalidArgument;
  return error;
}

int FailUsage(std::string_view command, std::string_view message, Format format) {
  return Fail(command, MakeError(ErrorKind::kInvalidArgument, std::string(message)), format);
}

int FailWithReport(std::string_view command, const Error& failure, Format format, const nlohmann::json& report,
                   std::string_view text) {
  if (format == Format::kJson) {
    nlohmann::json json = report.is_object() ? report : nlohmann::json::object();
    json["command"] = command;
    json["error"] = failure.message;
    json["kind"] = KindWord(failure.kind);
    if (!json.contains("diagnoses")) json["diagnoses"] = nlohmann::json::array();
    PrintJson(json);
  } else {
    PrintText(stdout, text);
  }
  return ExitCodeFor(failure.kind);
}

void PrintNote(std::string_view command, std::string_view text) {
  PrintText(stderr, fmt::format("ortkit {}: {}\n", command, text));
}

}  // namespace ortkit::cli
