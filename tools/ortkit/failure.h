#pragma once
// The one failure path of every command: what failed, rendered as text on stderr or, with --format
// json, as one JSON object on stdout (nothing else is printed there), and the exit code that goes with it.

#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/diagnose/diagnosis.h"
#include "terminal.h"

namespace ortkit::cli {

/// Prints a failure: "ortkit COMMAND: SUMMARY" and each diagnosis below it (text, on stderr, made safe
/// for a terminal), or {"command", "error", "kind", "diagnoses"} on stdout. `kind` is the error's kind
/// ("invalid_argument", "io", ...) or, for a model that has errors, "findings".
void ReportFailure(std::string_view command, const std::vector<Diagnosis>& diagnoses, std::string_view summary,
                   Format format, std::string_view kind = "findings");

/// Reports `error` and returns its exit code (ExitCodeFor): every command fails through here.
int Fail(std::string_view command, const Error& error, Format format, const std::vector<Diagnosis>& diagnoses = {});

/// The same for a message of the user's making: a usage error, exit code 2.
int FailUsage(std::string_view command, std::string_view message, Format format);

/// A line for people on stderr, "ortkit COMMAND: TEXT" (progress, notes), never in JSON mode's stdout.
void PrintNote(std::string_view command, std::string_view text);

}  // namespace ortkit::cli
