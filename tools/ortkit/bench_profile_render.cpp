// The profile of a sweep (--profile) for people: the top nodes, the time per op type and per provider, the
// copies between devices and the nodes that fell back to the CPU.
#include <fmt/format.h>

#include "bench_render.h"

namespace ortkit::cli {
namespace {

std::string Share(double share) { return fmt::format("{:.1f}%", share * 100); }

Table NodeTable(const std::vector<NodeProfile>& nodes, std::size_t limit, bool with_provider) {
  Table table = with_provider
                    ? Table({"node", "op type", "provider", "calls", "total ms", "share"},
                            {false, false, false, true, true, true})
                    : Table({"node", "op type", "calls", "total ms", "share"}, {false, false, true, true, true});
  for (std::size_t i = 0; i < nodes.size() && i < limit; ++i) {
    const auto& n = nodes[i];
    std::vector<std::string> row = {n.node, n.op_type};
    if (with_provider) row.push_back(n.provider);
    for (const auto& cell : {std::to_string(n.calls), Milliseconds(n.total_us / 1000), Share(n.share)})
      row.push_back(cell);
    table.AddRow(std::move(row));
  }
  return table;
}

}  // namespace

std::string RenderProfileText(const ProfileReport& p, const Style& style) {
  std::string out = fmt::format("\n{} {} profiled runs, {} ms of node time; trace kept at {}\n", style.Bold("profile:"),
                                p.runs, Milliseconds(p.node_total_us / 1000), p.trace.string());
  out += "\n  top nodes\n" + NodeTable(p.nodes, 10, true).Render(style);
  Table types({"op type", "nodes", "calls", "total ms", "share"}, {false, true, true, true, true});
  for (const auto& g : p.op_types) {
    types.AddRow(
        {g.name, std::to_string(g.nodes), std::to_string(g.calls), Milliseconds(g.total_us / 1000), Share(g.share)});
  }
  out += "\n  time per op type\n" + types.Render(style);
  Table providers({"provider", "nodes", "total ms", "share"}, {false, true, true, true});
  for (const auto& g : p.providers)
    providers.AddRow({g.name, std::to_string(g.nodes), Milliseconds(g.total_us / 1000), Share(g.share)});
  out += "\n  nodes per execution provider\n" + providers.Render(style);
  if (p.memory_copies.empty()) {
    out += "\n  memory copies between devices: none\n";
  } else {
    out +=
        "\n  memory copies between devices\n" + NodeTable(p.memory_copies, p.memory_copies.size(), false).Render(style);
  }
  if (p.cpu_fallbacks.empty()) {
    out += "  CPU fallbacks: none\n";
  } else {
    Table fallbacks({"node", "op type", "total ms"}, {false, false, true});
    for (const auto& n : p.cpu_fallbacks) fallbacks.AddRow({n.node, n.op_type, Milliseconds(n.total_us / 1000)});
    out += "\n  " + style.Yellow(fmt::format("{} nodes fell back to the CPU", p.cpu_fallbacks.size())) + "\n" +
           fallbacks.Render(style);
  }
  return out;
}

}  // namespace ortkit::cli
