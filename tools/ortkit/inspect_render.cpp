// ortkit inspect's text output: the summary's sections as people read them.
#include "inspect_render.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/units.h"

namespace ortkit::cli {

std::string Plural(std::uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string ShapeText(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i == 0 ? "" : ",") + std::to_string(shape[i]);
  return out + "]";
}

std::string Heading(const Style& style, const std::string& title, const std::string& detail) {
  return "\n" + style.Bold(title) + (detail.empty() ? "" : "  " + detail) + "\n";
}

namespace {

constexpr std::size_t kDocStringWidth = 160;
constexpr std::size_t kMetadataValueWidth = 80;

// Collapses white space to single spaces and cuts to `width` code points, so a multi-line
// doc string or a JSON-valued metadata entry stays on one line.
std::string OneLine(const std::string& text, std::size_t width) {
  std::string flat;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !flat.empty();
      continue;
    }
    if (space) flat += ' ';
    space = false;
    flat += c;
  }
  if (VisibleWidth(flat) <= width) return flat;
  std::size_t points = 0, cut = 0;
  for (; cut < flat.size(); ++cut) {
    if ((static_cast<unsigned char>(flat[cut]) & 0xC0) != 0x80 && points++ == width) break;
  }
  return flat.substr(0, cut) + fmt::format("... ({} characters in all)", VisibleWidth(flat));
}

std::string Field(const Style& style, const std::string& key, const std::string& value) {
  return fmt::format("  {}{}\n", style.Dim(fmt::format("{:<15}", key)), value);
}

std::string ModelSection(const ModelSummary& s, const Style& style) {
  std::string out = Heading(style, "model");
  const std::string size = s.file_bytes < 1024 ? fmt::format("{} bytes", s.file_bytes)
                                               : fmt::format("{}, {} bytes", HumanBytes(s.file_bytes), s.file_bytes);
  out += Field(style, "file", fmt::format("{} ({})", s.path, size));
  out += Field(style, "IR version", std::to_string(s.ir_version));
  std::string producer = s.producer_name.empty() ? style.Dim("(not recorded)") : s.producer_name;
  if (!s.producer_version.empty()) producer += " " + s.producer_version;
  const ProducerFamily* family = RecogniseProducer(s.producer_name);
  if (family != nullptr) {
    producer += style.Dim(fmt::format("  [{}: {}]", family->family, family->description));
  } else if (!s.producer_guess.empty()) {
    producer += style.Dim(fmt::format("  [probably {}]", s.producer_guess));
  } else {
    producer += style.Dim("  [unknown exporter]");
  }
  out += Field(style, "producer", producer);
  if (!s.domain.empty()) out += Field(style, "domain", s.domain);
  if (s.model_version != 0) out += Field(style, "model version", std::to_string(s.model_version));
  if (!s.graph_name.empty()) out += Field(style, "graph", s.graph_name);
  std::string opsets;
  for (const auto& o : s.opsets) opsets += (opsets.empty() ? "" : ", ") + fmt::format("{} {}", o.domain, o.version);
  out += Field(style, "opsets", opsets.empty() ? style.Dim("(none imported)") : opsets);
  if (!s.doc_string.empty()) out += Field(style, "doc string", OneLine(s.doc_string, kDocStringWidth));
  return out;
}

// "72 MatMul, 12 Gemm" from {"MatMul": 72, "Gemm": 12} under `key`; "nothing" when empty.
std::string OpCounts(const nlohmann::json& pass, const char* key) {
  std::vector<std::string> parts;
  if (pass.contains(key) && pass[key].is_object()) {
    for (auto it = pass[key].begin(); it != pass[key].end(); ++it)
      parts.push_back(fmt::format("{} {}", it.value().dump(), it.key()));
  }
  return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, ", "));
}

// What `ortkit optimize` recorded in the model (kOptimizeProvenanceKey): one line per pass.
std::string ProvenanceSection(const ModelSummary& s, const Style& style) {
  for (const auto& [key, value] : s.metadata) {
    if (key != kOptimizeProvenanceKey) continue;
    const nlohmann::json p = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (!p.is_object() || !p.contains("candidate")) return "";
    std::string out = Heading(style, "optimized by ortkit", p.value("candidate", ""));
    out += Field(style, "onnxruntime", p.value("onnxruntime", "") + ", provider " + p.value("provider", ""));
    out += Field(style, "cpu", p.value("cpu", "") + " (" + p.value("architecture", "") + ")");
    const nlohmann::json passes = p.value("passes", nlohmann::json::array());
    for (const auto& pass : passes) {
      out += Field(style, pass.value("pass", "?"),
                   fmt::format("rewrote {}; made {}", OpCounts(pass, "rewritten"), OpCounts(pass, "produced")));
    }
    return out;
  }
  return "";
}

std::string MetadataSection(const ModelSummary& s, const Style& style) {
  if (s.metadata.empty()) return "";
  Table table({"key", "value"});
  for (const auto& [key, value] : s.metadata) {
    table.AddRow({key, key == kOptimizeProvenanceKey ? "(shown above)" : OneLine(value, kMetadataValueWidth)});
  }
  return Heading(style, "metadata", Plural(s.metadata.size(), "entry", "entries")) + table.Render(style);
}

std::string ValuesSection(const std::string& title, const std::vector<ValueSummary>& values, const std::string& extra,
                          const Style& style) {
  std::string out = Heading(style, title, std::to_string(values.size()) + extra);
  if (values.empty()) return out;
  Table table({"name", "type"});
  for (const auto& v : values) table.AddRow({v.name, v.type.ToString()});
  return out + table.Render(style);
}

std::string NotesSection(const ModelSummary& s, const Style& style) {
  if (s.notes.empty()) return "";
  std::string out = Heading(style, "notes");
  for (const auto& d : s.notes) out += RenderDiagnosis(d, style);
  return out;
}

}  // namespace

std::string RenderInspectText(const ModelSummary& s, std::size_t top, const Style& style) {
  std::string out = style.Bold("ortkit inspect") + " " + s.path + "\n";
  out += ModelSection(s, style);
  out += ProvenanceSection(s, style);
  out += MetadataSection(s, style);
  out += ValuesSection("inputs", s.inputs, "", style);
  out += ValuesSection("outputs", s.outputs, "", style);
  out += RenderWeightSections(s, style);
  out += RenderGraphSections(s, top, style);
  out += NotesSection(s, style);
  return out;
}

}  // namespace ortkit::cli
