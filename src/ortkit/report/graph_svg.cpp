#include "ortkit/report/graph_svg.h"

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "ortkit/core/markup_text.h"
#include "ortkit/model/graph_walk.h"
#include "ortkit/model/summary.h"
#include "ortkit/report/graph_layout.h"

namespace ortkit {
namespace {

constexpr std::size_t kMaxAttributeText = 160;  // per attribute in hover text
constexpr std::size_t kMaxBoxName = 32;         // bytes of a name drawn inside a box
constexpr int kMaxListed = 8;                   // elements of a list attribute shown

std::string AttributeText(const onnx::AttributeProto& a) {
  auto list = [](const auto& values) {
    std::string out = "[";
    for (int i = 0; i < values.size() && i < kMaxListed; ++i) out += (i ? ", " : "") + fmt::format("{}", values[i]);
    return out + (values.size() > kMaxListed ? fmt::format(", … {} in all]", values.size()) : "]");
  };
  switch (a.type()) {
    case onnx::AttributeProto::INT: return std::to_string(a.i());
    case onnx::AttributeProto::FLOAT: return fmt::format("{}", a.f());
    case onnx::AttributeProto::STRING: return "\"" + a.s() + "\"";
    case onnx::AttributeProto::INTS: return list(a.ints());
    case onnx::AttributeProto::FLOATS: return list(a.floats());
    case onnx::AttributeProto::TENSOR: {
      std::string dims;
      for (auto d : a.t().dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      return fmt::format("tensor {}[{}]", ElementTypeName(a.t().data_type()), dims);
    }
    case onnx::AttributeProto::GRAPH: return fmt::format("graph of {} nodes", a.g().node_size());
    case onnx::AttributeProto::GRAPHS: return fmt::format("{} graphs", a.graphs_size());
    default: return "(" + onnx::AttributeProto::AttributeType_Name(a.type()) + ")";
  }
}

std::string InitializerText(const onnx::TensorProto& t) {
  std::string dims;
  for (auto d : t.dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  return fmt::format("initializer {}[{}]{}", ElementTypeName(t.data_type()), dims,
                     t.data_location() == onnx::TensorProto::EXTERNAL ? ", external data" : "");
}

// One box of the drawing: a node of the graph, or a graph input, output or initializer.
struct DrawnBox {
  enum class Kind { kNode, kInput, kOutput, kInitializer };
  Kind kind = Kind::kNode;
  int node = -1;      ///< kNode: index into the graph
  std::string value;  ///< otherwise: the value's name
};

// A drawn edge: from box to box, carrying one value.
struct DrawnEdge {
  int from = 0;
  int to = 0;
  std::string value;
};

struct Drawing {
  std::vector<DrawnBox> boxes;
  std::vector<DrawnEdge> edges;
};

Drawing Collect(const Neighbourhood& n, const GraphValueTypes& types) {
  const onnx::GraphProto& graph = *n.graph;
  Drawing d;
  std::map<std::string, int> producer_box;
  std::set<std::string> inputs, outputs;
  for (const auto& v : graph.input()) inputs.insert(v.name());
  for (const auto& v : graph.output()) outputs.insert(v.name());
  auto add_value_box = [&](DrawnBox::Kind kind, const std::string& value) {
    if (producer_box.count(value)) return;
    producer_box[value] = static_cast<int>(d.boxes.size());
    d.boxes.push_back({kind, -1, value});
  };
  // Graph inputs first (the top of the picture), then the nodes in topological order, then the outputs.
  for (int i : n.nodes)
    for (const auto& in : graph.node(i).input()) {
      if (types.Initializer(in) != nullptr && in == n.focus_value)
        add_value_box(DrawnBox::Kind::kInitializer, in);
      else if (inputs.count(in) && types.Initializer(in) == nullptr)
        add_value_box(DrawnBox::Kind::kInput, in);
    }
  if (!n.focus_value.empty() && inputs.count(n.focus_value)) add_value_box(DrawnBox::Kind::kInput, n.focus_value);
  for (int i : n.nodes) {
    const int box = static_cast<int>(d.boxes.size());
    d.boxes.push_back({DrawnBox::Kind::kNode, i, ""});
    for (const auto& in : graph.node(i).input())
      if (auto p = producer_box.find(in); !in.empty() && p != producer_box.end())
        d.edges.push_back({p->second, box, in});
    for (const auto& out : graph.node(i).output())
      if (!out.empty()) producer_box[out] = box;
  }
  for (const auto& out : graph.output())
    if (auto p = producer_box.find(out.name()); p != producer_box.end()) {
      d.edges.push_back({p->second, static_cast<int>(d.boxes.size()), out.name()});
      d.boxes.push_back({DrawnBox::Kind::kOutput, -1, out.name()});
    }
  return d;
}

std::string BoxTitle(const DrawnBox& box, const onnx::GraphProto& graph) {
  if (box.kind == DrawnBox::Kind::kNode) return graph.node(box.node).op_type();
  return box.kind == DrawnBox::Kind::kInput ? "input" : box.kind == DrawnBox::Kind::kOutput ? "output" : "initializer";
}

std::string BoxName(const DrawnBox& box, const onnx::GraphProto& graph) {
  return box.kind == DrawnBox::Kind::kNode ? NodeDisplayName(graph.node(box.node), box.node) : box.value;
}

std::string BoxSvg(const DrawnBox& box, const PlacedNode& at, const Neighbourhood& n, const GraphValueTypes& types) {
  const onnx::GraphProto& graph = *n.graph;
  const bool focus = box.kind == DrawnBox::Kind::kNode
                         ? std::count(n.focus_nodes.begin(), n.focus_nodes.end(), box.node) > 0
                         : box.value == n.focus_value;
  const char* kind = box.kind == DrawnBox::Kind::kNode ? "node" : "node value";
  const std::string name = BoxName(box, graph);
  const std::string hover =
      box.kind == DrawnBox::Kind::kNode
          ? NodeHoverText(graph.node(box.node), box.node, types)
          : fmt::format(
                "{} {}\n{}", BoxTitle(box, graph), name,
                types.Initializer(box.value) ? InitializerText(*types.Initializer(box.value)) : types.Of(box.value));
  return fmt::format(
      "<g class=\"{}{}\" data-node=\"{}\"><title>{}</title><rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" rx=\"5\"/><text x=\"{:.0f}\" y=\"{:.0f}\" class=\"op\">{}</text><text x=\"{:.0f}\" "
      "y=\"{:.0f}\" class=\"name\">{}</text></g>\n",
      kind, focus ? " focus" : "", EscapeHtml(name), EscapeHtml(hover), at.x, at.y, at.width, at.height,
      at.x + at.width / 2, at.y + 15, EscapeHtml(BoxTitle(box, graph)), at.x + at.width / 2, at.y + 30,
      EscapeHtml(Shorten(name, kMaxBoxName)));
}

// An edge, its value's type written once per source (a value feeding several nodes is labelled once), beside
// the first segment, where edges into one node have not yet met.
std::string EdgeSvg(const DrawnEdge& edge, const std::vector<LayoutPoint>& line, const std::string& focus_value,
                    const GraphValueTypes& types, bool labelled) {
  if (line.size() < 2) return "";
  std::string points;
  for (const auto& p : line) points += fmt::format("{}{:.0f},{:.0f}", points.empty() ? "" : " ", p.x, p.y);
  const LayoutPoint& a = line[0];
  const LayoutPoint& b = line[1];
  const std::string type = types.Of(edge.value);
  const std::string label = labelled
                                ? ""
                                : fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>", a.x + (b.x - a.x) * 0.35 + 4,
                                              a.y + (b.y - a.y) * 0.35 + 4, EscapeHtml(Shorten(type, 40)));
  return fmt::format(
      "<g class=\"edge{}\"><title>{}: {}</title><polyline points=\"{}\" marker-end=\"url(#ortkit-arrow)\"/>{}</g>\n",
      edge.value == focus_value ? " focus" : "", EscapeHtml(edge.value),
      EscapeHtml(type.empty() ? "type unknown" : type), points, label);
}

}  // namespace

GraphValueTypes::GraphValueTypes(const onnx::GraphProto& graph) {
  for (const auto& t : graph.initializer()) initializers_.emplace(t.name(), &t);
  for (const auto& v : graph.value_info()) declared_[v.name()] = &v.type();
  for (const auto& v : graph.input()) declared_[v.name()] = &v.type();
  for (const auto& v : graph.output()) declared_[v.name()] = &v.type();
}

std::string GraphValueTypes::Of(const std::string& value) const {
  if (auto d = declared_.find(value); d != declared_.end() && d->second->value_case() != onnx::TypeProto::VALUE_NOT_SET)
    return SummarizeType(*d->second).ToString();
  if (const auto* t = Initializer(value)) {
    std::string dims;
    for (auto d : t->dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    return fmt::format("{}[{}]", ElementTypeName(t->data_type()), dims);
  }
  return "";
}

const onnx::TensorProto* GraphValueTypes::Initializer(const std::string& value) const {
  auto found = initializers_.find(value);
  return found == initializers_.end() ? nullptr : found->second;
}

std::string Shorten(std::string_view text, std::size_t bytes) {
  if (text.size() <= bytes) return std::string(text);
  std::size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return std::string(text.substr(0, cut)) + "…";
}

std::string NodeHoverText(const onnx::NodeProto& node, int index, const GraphValueTypes& types) {
  std::string text =
      node.op_type() + (node.domain().empty() ? "" : " (" + node.domain() + ")") + "\n" + NodeDisplayName(node, index);
  for (const auto& a : node.attribute()) text += "\n" + Shorten(a.name() + " = " + AttributeText(a), kMaxAttributeText);
  for (const auto& in : node.input())
    if (const auto* t = types.Initializer(in))
      text += "\n" + Shorten(in + ": " + InitializerText(*t), kMaxAttributeText);
  return text;
}

std::string NeighbourhoodSvg(const Neighbourhood& n) {
  const GraphValueTypes types(*n.graph);
  const Drawing d = Collect(n, types);
  std::vector<LayoutNode> boxes;
  for (const auto& box : d.boxes) {
    const std::size_t chars =
        std::max(BoxTitle(box, *n.graph).size(), Shorten(BoxName(box, *n.graph), kMaxBoxName).size());
    boxes.push_back({std::clamp(7.0 * static_cast<double>(chars) + 24, 80.0, 260.0), 40});
  }
  std::vector<LayoutEdge> edges;
  for (const auto& e : d.edges) edges.push_back({e.from, e.to});
  const GraphLayout layout = LayOutGraph(boxes, edges);
  std::string svg = fmt::format(
      "<svg class=\"graph\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 "
      "{0:.0f} {1:.0f}\" role=\"img\">\n",
      layout.width + 120, layout.height);  // room on the right for the last edge labels
  std::set<std::pair<int, std::string>> labelled;
  for (std::size_t i = 0; i < d.edges.size(); ++i) {
    const bool seen = !labelled.emplace(d.edges[i].from, d.edges[i].value).second;
    svg += EdgeSvg(d.edges[i], layout.edges[i], n.focus_value, types, seen);
  }
  for (std::size_t i = 0; i < d.boxes.size(); ++i) svg += BoxSvg(d.boxes[i], layout.nodes[i], n, types);
  return svg + "</svg>";
}

}  // namespace ortkit
