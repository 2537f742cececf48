// ortkit inspect's sections on the graph: the operators by count, the subgraphs and the functions.
#include <algorithm>

#include <fmt/format.h>

#include "inspect_render.h"

namespace ortkit::cli {
namespace {

std::string OperatorSection(const ModelSummary& s, std::size_t top, const Style& style) {
  struct Row {
    std::string op_type, domain;
    std::uint64_t count;
  };
  std::vector<Row> rows;
  std::string domains;
  for (const auto& [domain, ops] : s.operators) {
    std::uint64_t nodes = 0;
    for (const auto& [op, count] : ops) {
      rows.push_back({op, domain, count});
      nodes += count;
    }
    domains += fmt::format("{}{} {} ({})", domains.empty() ? "" : ", ", domain, nodes,
                           Plural(ops.size(), "op type", "op types"));
  }
  std::string out =
      Heading(style, "operators", fmt::format("{} in the main graph", Plural(s.node_count, "node", "nodes")));
  if (rows.empty()) return out;
  out += "  " + style.Dim(domains) + "\n";
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.count > b.count; });
  Table table({"op type", "domain", "count", "share"}, {false, false, true, true});
  const std::size_t shown = std::min(rows.size(), top);
  for (std::size_t i = 0; i < shown; ++i) {
    const double share =
        100.0 * static_cast<double>(rows[i].count) / static_cast<double>(std::max<std::uint64_t>(s.node_count, 1));
    table.AddRow({rows[i].op_type, rows[i].domain, std::to_string(rows[i].count), fmt::format("{:.1f}%", share)});
  }
  out += table.Render(style);
  if (shown < rows.size()) {
    std::uint64_t rest = 0;
    for (std::size_t i = shown; i < rows.size(); ++i) rest += rows[i].count;
    out += style.Dim(fmt::format("  ... {} more {} ({})\n", rows.size() - shown,
                                 rows.size() - shown == 1 ? "op type" : "op types", Plural(rest, "node", "nodes")));
  }
  return out;
}

std::string SubgraphSection(const ModelSummary& s, std::size_t top, const Style& style) {
  if (s.subgraphs.empty()) return "";
  std::string out = Heading(style, "subgraphs",
                            fmt::format("{}, {} (not counted above)", Plural(s.subgraphs.size(), "graph", "graphs"),
                                        Plural(s.subgraph_nodes, "node", "nodes")));
  Table table({"path", "nodes", "initializers"}, {false, true, true});
  const std::size_t shown = std::min(s.subgraphs.size(), top);
  for (std::size_t i = 0; i < shown; ++i) {
    table.AddRow(
        {s.subgraphs[i].path, std::to_string(s.subgraphs[i].nodes), std::to_string(s.subgraphs[i].initializers)});
  }
  out += table.Render(style);
  if (shown < s.subgraphs.size()) out += style.Dim(fmt::format("  ... {} more\n", s.subgraphs.size() - shown));
  return out;
}

std::string FunctionSection(const ModelSummary& s, const Style& style) {
  if (s.functions.empty()) return "";
  Table table({"name", "domain", "nodes"}, {false, false, true});
  for (const auto& f : s.functions) table.AddRow({f.name, f.domain, std::to_string(f.nodes)});
  return Heading(style, "functions", std::to_string(s.functions.size())) + table.Render(style);
}

}  // namespace

std::string RenderGraphSections(const ModelSummary& s, std::size_t top, const Style& style) {
  return OperatorSection(s, top, style) + SubgraphSection(s, top, style) + FunctionSection(s, style);
}

}  // namespace ortkit::cli
