#include "ortkit/report/model_outline.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ortkit/model/graph_walk.h"
#include "ortkit/report/graph_layout.h"
#include "ortkit/report/graph_svg.h"

namespace ortkit {
namespace {

constexpr std::size_t kBoxName = 24;  // bytes of a name drawn in an outline box

struct NameScope {
  std::string name;
  std::string path;
  int parent = -1;
  std::vector<int> children;
  std::vector<int> nodes;  ///< the scope's own nodes, topological order
  int count = 0;
};

// "/encoder/layer.3/MatMul" -> {"encoder", "layer.3"}: every part but the last, empty parts dropped.
std::vector<std::string> ScopesOf(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    if (slash > start) parts.push_back(name.substr(start, slash - start));
    start = slash + 1;
  }
  if (!parts.empty()) parts.pop_back();
  return parts;
}

int ScopeFor(const std::string& name, std::vector<NameScope>& scopes, std::map<std::string, int>& by_path) {
  int current = 0;
  for (const auto& part : ScopesOf(name)) {
    const std::string path = scopes[current].path + "/" + part;
    auto [it, added] = by_path.emplace(path, static_cast<int>(scopes.size()));
    if (added) {
      scopes.push_back({part, path, current, {}, {}, 0});
      scopes[current].children.push_back(it->second);
    }
    current = it->second;
  }
  return current;
}

nlohmann::json LayOutChunk(const onnx::GraphProto& graph, const std::vector<int>& chunk, nlohmann::json& nodes,
                           const std::vector<int>& listed_index) {
  std::map<std::string, int> producer;  // value -> position in the chunk
  std::vector<LayoutNode> boxes;
  std::vector<LayoutEdge> edges;
  for (std::size_t k = 0; k < chunk.size(); ++k) {
    const auto& node = graph.node(chunk[k]);
    for (const auto& in : node.input())
      if (auto p = producer.find(in); !in.empty() && p != producer.end())
        edges.push_back({p->second, static_cast<int>(k)});
    for (const auto& out : node.output()) producer[out] = static_cast<int>(k);
    const std::size_t chars =
        std::max(node.op_type().size(), Shorten(NodeDisplayName(node, chunk[k]), kBoxName).size());
    boxes.push_back({std::clamp(7.0 * static_cast<double>(chars) + 20, 72.0, 220.0), 36});
  }
  const GraphLayout layout = LayOutGraph(boxes, edges, {.layer_gap = 36});
  nlohmann::json json = {{"nodes", nlohmann::json::array()},
                         {"width", static_cast<int>(layout.width)},
                         {"height", static_cast<int>(layout.height)},
                         {"edges", nlohmann::json::array()}};
  for (std::size_t k = 0; k < chunk.size(); ++k) {
    const int id = listed_index[chunk[k]];
    json["nodes"].push_back(id);
    const PlacedNode& at = layout.nodes[k];
    nodes[id].push_back(static_cast<int>(at.x));
    nodes[id].push_back(static_cast<int>(at.y));
    nodes[id].push_back(static_cast<int>(at.width));
  }
  for (std::size_t e = 0; e < edges.size(); ++e) {
    nlohmann::json line = {edges[e].from, edges[e].to};
    for (const auto& p : layout.edges[e]) {
      line.push_back(static_cast<int>(p.x));
      line.push_back(static_cast<int>(p.y));
    }
    json["edges"].push_back(std::move(line));
  }
  return json;
}

}  // namespace

nlohmann::json ModelOutline(const onnx::GraphProto& graph, const OutlineOptions& options) {
  std::vector<int> order = TopologicalOrder(graph);
  const std::size_t listed = std::min(order.size(), static_cast<std::size_t>(std::max(0, options.max_nodes)));
  order.resize(listed);
  const GraphValueTypes types(graph);
  std::vector<NameScope> scopes = {{"", "", -1, {}, {}, 0}};
  std::map<std::string, int> by_path;
  std::vector<int> listed_index(graph.node_size(), -1);
  nlohmann::json nodes = nlohmann::json::array();
  for (int index : order) {
    const auto& node = graph.node(index);
    const std::string name = NodeDisplayName(node, index);
    const int scope = ScopeFor(name, scopes, by_path);
    listed_index[index] = static_cast<int>(nodes.size());
    const int chunk = static_cast<int>(scopes[scope].nodes.size()) / std::max(1, options.chunk_nodes);
    scopes[scope].nodes.push_back(index);
    for (int s = scope; s >= 0; s = scopes[s].parent) ++scopes[s].count;
    nodes.push_back({Shorten(name, options.max_name_bytes), node.op_type(),
                     Shorten(NodeHoverText(node, index, types), options.max_hover_bytes), scope, chunk});
  }
  nlohmann::json scope_list = nlohmann::json::array();
  for (const auto& scope : scopes) {
    nlohmann::json chunks = nlohmann::json::array();
    for (std::size_t start = 0; start < scope.nodes.size(); start += std::max(1, options.chunk_nodes)) {
      const auto end = std::min(scope.nodes.size(), start + std::max(1, options.chunk_nodes));
      const std::vector<int> chunk(scope.nodes.begin() + start, scope.nodes.begin() + end);
      chunks.push_back(LayOutChunk(graph, chunk, nodes, listed_index));
    }
    scope_list.push_back({{"name", scope.name},
                          {"path", scope.path},
                          {"parent", scope.parent},
                          {"children", scope.children},
                          {"count", scope.count},
                          {"chunks", std::move(chunks)}});
  }
  return {{"nodes", std::move(nodes)},
          {"scopes", std::move(scope_list)},
          {"total", graph.node_size()},
          {"listed", static_cast<int>(listed)}};
}

}  // namespace ortkit
