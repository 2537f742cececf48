#pragma once
// A small subset of JSON Schema (draft 2020-12), enough to hold a JSON file ortkit reads or writes to the
// schema in docs/schema/ that describes it: type, enum, const, minimum, required, properties,
// additionalProperties (a schema or false), items, $ref into $defs, allOf, oneOf, if/then/else, and the
// boolean schemas. SchemaKeywordsUnchecked names what a schema uses beyond that, so that nothing a schema
// says goes unchecked.

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ortkit::testing {

namespace json_schema_detail {

inline bool HasType(const nlohmann::json& value, const std::string& type) {
  return (type == "object" && value.is_object()) || (type == "array" && value.is_array()) ||
         (type == "string" && value.is_string()) || (type == "integer" && value.is_number_integer()) ||
         (type == "number" && value.is_number()) || (type == "boolean" && value.is_boolean()) ||
         (type == "null" && value.is_null());
}

inline void Check(const nlohmann::json& value, const nlohmann::json& schema, const nlohmann::json& root,
                  const std::string& where, std::vector<std::string>* errors);

inline void CheckObject(const nlohmann::json& value, const nlohmann::json& schema, const nlohmann::json& root,
                        const std::string& where, std::vector<std::string>* errors) {
  for (const std::string key : schema.value("required", nlohmann::json::array())) {
    if (!value.contains(key)) errors->push_back(where + " lacks required key '" + key + "'");
  }
  const auto properties = schema.value("properties", nlohmann::json::object());
  for (const auto& [key, child] : value.items()) {
    if (properties.contains(key)) {
      Check(child, properties[key], root, where + "." + key, errors);
    } else if (schema.contains("additionalProperties")) {
      Check(child, schema["additionalProperties"], root, where + "." + key, errors);
    }
  }
}

inline void CheckCombinations(const nlohmann::json& value, const nlohmann::json& schema, const nlohmann::json& root,
                              const std::string& where, std::vector<std::string>* errors) {
  for (const auto& part : schema.value("allOf", nlohmann::json::array())) Check(value, part, root, where, errors);
  if (schema.contains("oneOf")) {
    int matches = 0;
    for (const auto& alternative : schema["oneOf"]) {
      std::vector<std::string> ignored;
      Check(value, alternative, root, where, &ignored);
      matches += ignored.empty() ? 1 : 0;
    }
    if (matches != 1)
      errors->push_back(where + ": matches " + std::to_string(matches) + " oneOf alternatives: " + value.dump());
  }
  if (schema.contains("if")) {
    std::vector<std::string> unmet;
    Check(value, schema["if"], root, where, &unmet);
    const char* branch = unmet.empty() ? "then" : "else";
    if (schema.contains(branch)) Check(value, schema[branch], root, where, errors);
  }
}

inline void Check(const nlohmann::json& value, const nlohmann::json& schema, const nlohmann::json& root,
                  const std::string& where, std::vector<std::string>* errors) {
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) errors->push_back(where + " is not allowed here");
    return;
  }
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    if (ref.rfind("#/$defs/", 0) != 0 || !root["$defs"].contains(ref.substr(8))) {
      errors->push_back(where + ": unresolvable $ref " + ref);
      return;
    }
    Check(value, root["$defs"][ref.substr(8)], root, where, errors);
  }
  CheckCombinations(value, schema, root, where, errors);
  if (schema.contains("type")) {
    const auto types = schema["type"].is_array() ? schema["type"] : nlohmann::json::array({schema["type"]});
    if (std::none_of(types.begin(), types.end(), [&](const nlohmann::json& t) { return HasType(value, t); }))
      errors->push_back(where + " is " + value.dump() + ", schema type " + schema["type"].dump());
  }
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end())
    errors->push_back(where + " = " + value.dump() + " is not in the enum");
  if (schema.contains("const") && schema["const"] != value)
    errors->push_back(where + " = " + value.dump() + " is not the const");
  if (schema.contains("minimum") && value.is_number() && value.get<double>() < schema["minimum"].get<double>())
    errors->push_back(where + " = " + value.dump() + " is below the minimum");
  if (value.is_object()) CheckObject(value, schema, root, where, errors);
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i)
      Check(value[i], schema["items"], root, where + "[" + std::to_string(i) + "]", errors);
  }
}

inline void CollectKeywords(const nlohmann::json& schema, std::set<std::string>* found) {
  if (!schema.is_object()) return;
  for (const auto& [key, child] : schema.items()) {
    found->insert(key);
    if (key == "properties" || key == "$defs") {
      for (const auto& [name, sub] : child.items()) CollectKeywords(sub, found);
    } else if (key == "allOf" || key == "oneOf") {
      for (const auto& sub : child) CollectKeywords(sub, found);
    } else if (key == "additionalProperties" || key == "items" || key == "if" || key == "then" || key == "else") {
      CollectKeywords(child, found);
    }
  }
}

}  // namespace json_schema_detail

/// What in `value` the schema refuses, one line each; empty when it is valid.
inline std::vector<std::string> SchemaErrors(const nlohmann::json& value, const nlohmann::json& schema) {
  std::vector<std::string> errors;
  json_schema_detail::Check(value, schema, schema, "$", &errors);
  return errors;
}

/// The keywords `schema` uses that SchemaErrors does not check (annotations such as description aside).
inline std::set<std::string> SchemaKeywordsUnchecked(const nlohmann::json& schema) {
  static const std::set<std::string> kChecked = {
      "type",  "enum",    "const", "minimum", "required",   "properties", "additionalProperties",
      "items", "$ref",    "allOf", "oneOf",   "if",         "then",       "else",
      "$defs", "$schema", "$id",   "title",   "description"};
  std::set<std::string> used;
  json_schema_detail::CollectKeywords(schema, &used);
  std::set<std::string> unchecked;
  std::set_difference(used.begin(), used.end(), kChecked.begin(), kChecked.end(),
                      std::inserter(unchecked, unchecked.end()));
  return unchecked;
}

}  // namespace ortkit::testing
