#pragma once
// A diagnosis is one finding about a model or a run: a stable code, how bad it is, where it
// is, what failed, the likely cause and the fix. Every code lives in the catalogue
// (catalogue.h); docs/troubleshooting.md lists them all and a test keeps the two in step.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ortkit {

enum class Severity { kInfo = 0, kWarning = 1, kError = 2 };

const char* ToString(Severity severity);

/// Where a finding applies. Empty fields do not apply.
struct Location {
  std::string file;
  std::string input;   ///< graph input name
  std::string output;  ///< graph output name
  std::string node;    ///< node name (or "#index" when the node has no name)
  std::string op_type;
  std::string tensor;  ///< initializer or intermediate value name
  std::string dimension;

  bool empty() const;
  /// "node 'x' (Reshape), input 'y'" — the parts that are set, for people.
  std::string Describe() const;
};

struct Diagnosis {
  std::string code;
  Severity severity = Severity::kError;
  std::string message;  ///< what failed, specific to this model
  Location location;
  std::string cause;       ///< the likely root cause
  std::string fix;         ///< what to do about it
  bool heuristic = false;  ///< the rule guesses; it can be wrong on unusual models
};

/// A diagnosis for `code` with severity, cause and fix taken from the catalogue.
/// An unknown code is a bug in ortkit: it yields code "internal.unknown-code".
Diagnosis Diagnose(std::string_view code, std::string message, Location location = {});

/// Highest severity among `diagnoses`; kInfo when empty.
Severity WorstSeverity(const std::vector<Diagnosis>& diagnoses);

/// Sorted most severe first, then by code; stable for equal keys.
void SortBySeverity(std::vector<Diagnosis>& diagnoses);

void to_json(nlohmann::json& json, const Location& location);
void to_json(nlohmann::json& json, const Diagnosis& diagnosis);

}  // namespace ortkit
