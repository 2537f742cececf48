// ortkit inspect's sections on the weights: initializers by element type and the largest, sparse
// initializers, and the external data files.
#include <fmt/format.h>

#include "inspect_render.h"
#include "ortkit/core/units.h"

namespace ortkit::cli {
namespace {

std::string InitializerSection(const ModelSummary& s, const Style& style) {
  std::string detail =
      fmt::format("{}, {}", Plural(s.initializer_count, "tensor", "tensors"), HumanBytes(s.initializer_bytes));
  if (s.initializer_inputs > 0)
    detail += style.Dim(fmt::format(" ({} also listed as graph inputs)", s.initializer_inputs));
  if (s.constant_count > 0) {
    detail += fmt::format("; {} more in {}", HumanBytes(s.constant_bytes),
                          Plural(s.constant_count, "Constant node", "Constant nodes"));
  }
  std::string out = Heading(style, "initializers", detail);
  if (s.initializer_count == 0) return out;
  Table by_type({"element type", "tensors", "size"}, {false, true, true});
  for (const auto& t : s.initializer_totals)
    by_type.AddRow({t.element_type, std::to_string(t.count), HumanBytes(t.bytes)});
  out += by_type.Render(style);
  Table largest({"largest", "type", "shape", "size"}, {false, false, false, true});
  for (const auto& i : s.largest_initializers) {
    largest.AddRow(
        {i.name, i.element_type, ShapeText(i.shape), HumanBytes(i.bytes) + (i.external ? style.Dim(" ext") : "")});
  }
  out += "\n" + largest.Render(style);
  if (s.initializer_count > s.largest_initializers.size()) {
    out += style.Dim(fmt::format("  ... {} more\n", s.initializer_count - s.largest_initializers.size()));
  }
  return out;
}

std::string SparseSection(const ModelSummary& s, const Style& style) {
  if (s.sparse_initializers.empty()) return "";
  Table table({"name", "type", "dense shape", "non-zero", "size"}, {false, false, false, true, true});
  for (const auto& i : s.sparse_initializers) {
    table.AddRow({i.name, i.element_type, ShapeText(i.shape), std::to_string(i.nonzero), HumanBytes(i.bytes)});
  }
  return Heading(style, "sparse initializers", std::to_string(s.sparse_initializers.size())) + table.Render(style);
}

std::string ExternalSection(const ModelSummary& s, const Style& style) {
  if (s.external_files.empty()) return "";
  Table table({"location", "tensors", "bytes read", "file size"}, {false, true, true, true});
  for (const auto& f : s.external_files) {
    table.AddRow({f.location, std::to_string(f.tensors), HumanBytes(f.bytes),
                  f.outside_folder ? style.Red("outside the model's folder (not read)")
                  : f.file_bytes   ? HumanBytes(*f.file_bytes)
                                   : style.Red("missing")});
  }
  return Heading(style, "external data", Plural(s.external_files.size(), "file", "files")) + table.Render(style);
}

}  // namespace

std::string RenderWeightSections(const ModelSummary& s, const Style& style) {
  return InitializerSection(s, style) + SparseSection(s, style) + ExternalSection(s, style);
}

}  // namespace ortkit::cli
