#include "ortkit/report/neighbourhood.h"

#include <algorithm>
#include <map>
#include <set>

#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

// Who produces and who consumes each value of one graph.
struct ValueUse {
  std::map<std::string, int> producer;
  std::map<std::string, std::vector<int>> consumers;

  explicit ValueUse(const onnx::GraphProto& graph) {
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const auto& out : graph.node(i).output())
        if (!out.empty()) producer.emplace(out, i);
      for (const auto& in : graph.node(i).input())
        if (!in.empty()) {
          auto& list = consumers[in];
          if (list.empty() || list.back() != i) list.push_back(i);
        }
    }
  }
};

int FindNode(const onnx::GraphProto& graph, const std::string& name) {
  for (int i = 0; i < graph.node_size(); ++i)
    if (graph.node(i).name() == name) return i;
  if (name.size() > 1 && name[0] == '#') {
    const std::string digits = name.substr(1, name.find(' ') - 1);  // "#12 Reshape", as NodeDisplayName writes it
    if (!digits.empty() && digits.size() < 10 && std::all_of(digits.begin(), digits.end(), ::isdigit)) {
      const int index = std::stoi(digits);
      if (index < graph.node_size()) return index;
    }
  }
  return -1;
}

bool HasValue(const onnx::GraphProto& graph, const ValueUse& use, const std::string& name) {
  if (use.producer.count(name) || use.consumers.count(name)) return true;
  auto named = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& v) { return v.name() == name; });
  };
  return named(graph.input()) || named(graph.output()) || named(graph.initializer());
}

// The seeds: the named node, or the value's producer and consumers. Empty when this graph lacks the focus.
std::vector<int> Seeds(const onnx::GraphProto& graph, const ValueUse& use, const GraphFocus& focus, bool& found) {
  found = false;
  if (!focus.node.empty()) {
    const int index = FindNode(graph, focus.node);
    found = index >= 0;
    return found ? std::vector<int>{index} : std::vector<int>{};
  }
  if (!HasValue(graph, use, focus.value)) return {};
  found = true;
  std::vector<int> seeds;
  if (auto p = use.producer.find(focus.value); p != use.producer.end()) seeds.push_back(p->second);
  if (auto c = use.consumers.find(focus.value); c != use.consumers.end())
    seeds.insert(seeds.end(), c->second.begin(), c->second.end());
  return seeds;
}

std::vector<int> Adjacent(const onnx::NodeProto& node, const ValueUse& use) {
  std::vector<int> next;
  for (const auto& in : node.input())
    if (auto p = use.producer.find(in); p != use.producer.end()) next.push_back(p->second);
  for (const auto& out : node.output())
    if (auto c = use.consumers.find(out); c != use.consumers.end())
      next.insert(next.end(), c->second.begin(), c->second.end());
  std::sort(next.begin(), next.end());
  next.erase(std::unique(next.begin(), next.end()), next.end());
  return next;
}

// Breadth first from the seeds, one hop at a time, each hop's nodes taken in file order.
std::set<int> Reach(const onnx::GraphProto& graph, const ValueUse& use, std::vector<int> frontier,
                    const NeighbourhoodOptions& options, bool& truncated) {
  std::set<int> kept;
  const auto limit = static_cast<std::size_t>(std::max(1, options.max_nodes));
  for (int hop = 0; hop <= options.hops && !frontier.empty(); ++hop) {
    std::sort(frontier.begin(), frontier.end());
    std::vector<int> next;
    for (int n : frontier) {
      if (kept.count(n)) continue;
      if (kept.size() == limit) {
        truncated = true;
        return kept;
      }
      kept.insert(n);
      if (hop < options.hops)
        for (int m : Adjacent(graph.node(n), use))
          if (!kept.count(m)) next.push_back(m);
    }
    frontier = std::move(next);
  }
  return kept;
}

}  // namespace

GraphFocus FocusOf(const Location& location) {
  GraphFocus focus;
  focus.node = location.node;
  if (focus.node.empty())
    focus.value = !location.tensor.empty()  ? location.tensor
                  : !location.input.empty() ? location.input
                                            : location.output;
  return focus;
}

std::optional<Neighbourhood> FindNeighbourhood(const onnx::ModelProto& model, const GraphFocus& focus,
                                               const NeighbourhoodOptions& options) {
  if (focus.empty()) return std::nullopt;
  std::optional<Neighbourhood> result;
  ForEachGraph(model.graph(), [&](const onnx::GraphProto& graph, const std::string& path) {
    if (result) return;
    const ValueUse use(graph);
    bool found = false;
    std::vector<int> seeds = Seeds(graph, use, focus, found);
    if (!found) return;
    Neighbourhood n;
    n.graph = &graph;
    n.graph_path = path;
    n.focus_value = focus.node.empty() ? focus.value : "";
    const std::set<int> kept = Reach(graph, use, seeds, options, n.truncated);
    std::vector<int> position(graph.node_size(), 0);
    const std::vector<int> order = TopologicalOrder(graph);
    for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
    n.nodes.assign(kept.begin(), kept.end());
    std::sort(n.nodes.begin(), n.nodes.end(), [&](int a, int b) { return position[a] < position[b]; });
    if (!focus.node.empty())
      n.focus_nodes = seeds;
    else if (auto p = use.producer.find(focus.value); p != use.producer.end())
      n.focus_nodes = {p->second};
    result = std::move(n);
  });
  return result;
}

}  // namespace ortkit
