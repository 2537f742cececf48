#pragma once
// The one failure path of every command: what failed, rendered as text on stderr or, with --format
// json, as one JSON object on stdout (nothing else is printed there), and the exit code that goes with it.

#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "terminal.h"

namespace ortkit::cli {

/// Reports `error` and returns its exit code (ExitCodeFor): every command fails through here. As text on
/// stderr, made safe for a terminal: "ortkit COMMAND: MESSAGE" and each diagnosis below it; with --format
/// json one object on stdout, {"command", "error", "kind", "diagnoses"}, `kind` the error's kind as a word
/// ("invalid_argument", "io", "unavailable", ...).
int Fail(std::string_view command, const Error& error, Format format, const std::vector<Diagnosis>& diagnoses = {});

/// `error` as the call's to fix, exit code 2 whatever its kind: for a step whose every failure is the
/// user's (the flags, the files they name), where the library's kind says what failed, not whose fault.
Error AsUsageError(Error error);

/// The same for a message of the user's making: a usage error, exit code 2.
int FailUsage(std::string_view command, std::string_view message, Format format);

/// A report that carries its failure (a model that could not be read, a provider this machine cannot
/// run): the report is printed as the command renders it, `text` on stdout, for people; with --format
/// json one object, the report's fields (`report`) with "command", "error" and "kind" beside them.
/// Returns ExitCodeFor(failure.kind).
int FailWithReport(std::string_view command, const Error& failure, Format format, const nlohmann::json& report,
                   std::string_view text);

/// A line for people on stderr, "ortkit COMMAND: TEXT" (progress, notes), never in JSON mode's stdout.
void PrintNote(std::string_view command, std::string_view text);

}  // namespace ortkit::cli
