// The HTML report page's parts: neighbourhoods, the layered layout, the model outline and escaping.
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ortkit/core/markup_text.h"
#include "ortkit/report/graph_layout.h"
#include "ortkit/report/model_outline.h"
#include "ortkit/report/neighbourhood.h"
#include "ortkit/report/node_overlay.h"
#include "ortkit/report/report_page.h"
#include "ortkit/report/script_json.h"
#include "test_models.h"

namespace ortkit {
namespace {

// x -> names[0] -> names[1] -> ... -> y, each node a Relu whose output is called after it ("v_NAME").
onnx::ModelProto Chain(const std::vector<std::string>& names) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("chain");
  auto add_value = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("batch");
    t->mutable_shape()->add_dim()->set_dim_value(4);
  };
  add_value(graph->add_input(), "x");
  std::string previous = "x";
  for (const auto& name : names) {
    auto* node = graph->add_node();
    node->set_name(name);
    node->set_op_type("Relu");
    node->add_input(previous);
    previous = "v_" + name;
    node->add_output(previous);
  }
  graph->mutable_node(graph->node_size() - 1)->set_output(0, "y");
  add_value(graph->add_output(), "y");
  return model;
}

std::vector<std::string> Names(const onnx::GraphProto& graph, const std::vector<int>& nodes) {
  std::vector<std::string> names;
  for (int n : nodes) names.push_back(graph.node(n).name());
  return names;
}

TEST(Neighbourhood, KeepsTheNodesWithinHopsInTopologicalOrder) {
  const auto model = Chain({"a", "b", "c", "d", "e"});
  auto n = FindNeighbourhood(model, {.node = "c"}, {.hops = 1, .max_nodes = 40});
  ASSERT_TRUE(n);
  EXPECT_EQ(Names(model.graph(), n->nodes), (std::vector<std::string>{"b", "c", "d"}));
  EXPECT_EQ(Names(model.graph(), n->focus_nodes), (std::vector<std::string>{"c"}));
  EXPECT_FALSE(n->truncated);
  EXPECT_EQ(n->graph_path, "");
}

TEST(Neighbourhood, IsBoundedInNodesNearestFirst) {
  const auto model = Chain({"a", "b", "c", "d", "e", "f", "g"});
  auto n = FindNeighbourhood(model, {.node = "d"}, {.hops = 5, .max_nodes = 3});
  ASSERT_TRUE(n);
  EXPECT_EQ(Names(model.graph(), n->nodes), (std::vector<std::string>{"c", "d", "e"}));
  EXPECT_TRUE(n->truncated);
}

TEST(Neighbourhood, CentresOnAValueOrAnUnnamedNodeAndSaysWhenNothingMatches) {
  auto model = Chain({"a", "b", "c"});
  auto value = FindNeighbourhood(model, {.value = "v_a"}, {.hops = 0});
  ASSERT_TRUE(value);
  EXPECT_EQ(Names(model.graph(), value->nodes), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Names(model.graph(), value->focus_nodes), (std::vector<std::string>{"a"}));
  EXPECT_EQ(value->focus_value, "v_a");
  auto input = FindNeighbourhood(model, FocusOf(Location{.input = "x"}), {.hops = 0});
  ASSERT_TRUE(input);
  EXPECT_EQ(Names(model.graph(), input->nodes), (std::vector<std::string>{"a"}));
  model.mutable_graph()->mutable_node(1)->clear_name();
  auto unnamed = FindNeighbourhood(model, {.node = "#1 Relu"}, {.hops = 0});
  ASSERT_TRUE(unnamed);
  EXPECT_EQ(unnamed->focus_nodes, (std::vector<int>{1}));
  EXPECT_FALSE(FindNeighbourhood(model, {.node = "nowhere"}));
  EXPECT_FALSE(FindNeighbourhood(model, {}));
}

TEST(Neighbourhood, FindsANodeInsideASubgraph) {
  auto model = Chain({"a"});
  auto* if_node = model.mutable_graph()->add_node();
  if_node->set_name("branch");
  if_node->set_op_type("If");
  auto* then_branch = if_node->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  *then_branch->mutable_g() = Chain({"inner1", "inner2"}).graph();
  auto n = FindNeighbourhood(model, {.node = "inner2"});
  ASSERT_TRUE(n);
  EXPECT_NE(n->graph_path, "");
  EXPECT_EQ(Names(*n->graph, n->nodes), (std::vector<std::string>{"inner1", "inner2"}));
}

// A diamond with a long edge and a back edge (a cycle), as a model may hold.
std::vector<LayoutEdge> Diamond() { return {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}, {3, 4}, {4, 1}}; }

TEST(GraphLayout, PutsEachNodeBelowItsPredecessorsWithoutOverlap) {
  const std::vector<LayoutNode> nodes(5, LayoutNode{100, 30});
  const auto edges = Diamond();
  const GraphLayout layout = LayOutGraph(nodes, edges);
  ASSERT_EQ(layout.nodes.size(), 5u);
  ASSERT_EQ(layout.edges.size(), edges.size());
  for (const auto& e : edges) {
    if (e.from >= e.to) continue;  // the back edge shapes nothing
    EXPECT_GT(layout.nodes[e.to].layer, layout.nodes[e.from].layer);
    EXPECT_GE(layout.nodes[e.to].y, layout.nodes[e.from].y + layout.nodes[e.from].height);
  }
  EXPECT_EQ(layout.edges[4].size(), 3u);  // 0 -> 3 spans two layers: one bend
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t j = i + 1; j < nodes.size(); ++j) {
      const PlacedNode &a = layout.nodes[i], &b = layout.nodes[j];
      const bool apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
      EXPECT_TRUE(apart) << i << " overlaps " << j;
      EXPECT_GE(a.x, 0);
      EXPECT_LE(a.x + a.width, layout.width);
      EXPECT_LE(a.y + a.height, layout.height);
    }
}

TEST(GraphLayout, IsTheSameEveryTime) {
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  for (int i = 0; i < 60; ++i) {
    nodes.push_back({60.0 + (i * 37) % 90, 36});
    if (i > 0) edges.push_back({(i * 7) % i, i});
    if (i > 3) edges.push_back({i - 3, i});
  }
  const GraphLayout a = LayOutGraph(nodes, edges), b = LayOutGraph(nodes, edges);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].x, b.nodes[i].x);
    EXPECT_EQ(a.nodes[i].y, b.nodes[i].y);
  }
  for (std::size_t e = 0; e < a.edges.size(); ++e) ASSERT_EQ(a.edges[e].size(), b.edges[e].size());
  EXPECT_EQ(a.width, b.width);
  EXPECT_TRUE(LayOutGraph({}, {{0, 1}}).edges[0].empty());  // an edge out of range is not drawn
}

TEST(ModelOutline, GroupsNodesByNameScopeInBoundedChunks) {
  const auto model = Chain({"/encoder/layer.0/MatMul", "/encoder/layer.0/Add", "/encoder/layer.1/MatMul", "head",
                            "tail1", "tail2", "tail3"});
  const nlohmann::json outline = ModelOutline(model.graph(), {.chunk_nodes = 2});
  const auto& scopes = outline["scopes"];
  ASSERT_EQ(scopes.size(), 4u);  // the graph, encoder, layer.0, layer.1
  EXPECT_EQ(scopes[1]["path"], "/encoder");
  EXPECT_EQ(scopes[1]["count"], 3);
  EXPECT_EQ(scopes[2]["path"], "/encoder/layer.0");
  EXPECT_EQ(scopes[2]["chunks"][0]["nodes"].size(), 2u);
  EXPECT_EQ(scopes[0]["count"], 7);
  EXPECT_EQ(scopes[0]["chunks"].size(), 2u);  // head, tail1 | tail2, tail3
  EXPECT_EQ(outline["nodes"][0][0], "/encoder/layer.0/MatMul");
  EXPECT_EQ(outline["nodes"][0].size(), 8u);  // name, op, hover, scope, chunk, x, y, width
  EXPECT_EQ(ModelOutline(model.graph(), {.max_nodes = 3})["listed"], 3);
}

TEST(ReportEscaping, NoNameCanOpenAnElementOrReachTheTerminal) {
  EXPECT_EQ(EscapeHtml("<script>\"a\" & 'b'</script>"), "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;");
  EXPECT_EQ(EscapeHtml("red\x1b[31m"), "red\\x1b[31m");
  EXPECT_EQ(JsonForScript(nlohmann::json{{"n", "</script><b>&"}}), R"({"n":"\u003c/script\u003e\u003cb\u003e\u0026"})");
  EXPECT_EQ(JsonForScript(nlohmann::json("\x1b")), R"("\u001b")");
}

TEST(ReportPage, EscapesHostileNamesAndIsTheSameEveryTime) {
  const std::string hostile = "<script>alert(1)</script>\"'\x1b]0;title\x07";
  auto model = Chain({hostile, "/scope<img src=x onerror=alert(2)>/b", "c"});
  model.mutable_graph()->mutable_node(0)->add_attribute()->set_name(std::string(100000, 'A'));
  ReportPage page{.command = "check",
                  .model_path = hostile + ".onnx",
                  .verdict = "FAIL",
                  .verdict_severity = Severity::kError,
                  .diagnoses = {Diagnose("graph.baked-batch-reshape", hostile, Location{.node = hostile})},
                  .text_report = hostile};
  const std::string html = RenderReportPage(page, &model);
  EXPECT_EQ(html, RenderReportPage(page, &model));
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_EQ(html.find('\x07'), std::string::npos);
  std::size_t scripts = 0;
  for (auto at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 2u);  // the model's data and the page's own script, nothing else
  EXPECT_NE(html.find("class=\"node focus\" data-node=\"&lt;script&gt;"), std::string::npos);
  EXPECT_LT(html.size(), 200'000u);                                          // the 100,000-byte attribute name is cut
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // the script's namespace, no fetch
}

TEST(ReportPage, WithoutAModelSaysWhyAndDrawsNothing) {
  ReportPage page{.command = "doctor", .model_path = "m.onnx", .verdict = "broken"};
  page.diagnoses.push_back(Diagnose("file.truncated", "cut", Location{.node = "n"}));
  const std::string html = RenderReportPage(page, nullptr, "the model could not be read");
  EXPECT_NE(html.find("the model could not be read"), std::string::npos);
  EXPECT_EQ(html.find("<figure"), std::string::npos);
  EXPECT_EQ(html.find("id=\"model-data\""), std::string::npos);
}

TEST(NodeOverlay, DrawsOneColumnPerNodeMarksANodeAndCountsTheUnknown) {
  auto model = Chain({"a", "b<i>", "c", "d"});
  NodeOverlay overlay{.title = "error", .unit = "", .values = {{"a", 1e-7}, {"b<i>", 1e-5}, {"c", 0.5}, {"gone", 3}}};
  overlay.fold = NodeOverlay::Fold::kMax;
  overlay.log_scale = true;
  overlay.marked = "c";
  overlay.marked_label = "the first diverging node";
  const std::string html = OverlaySection(model.graph(), overlay);
  std::size_t bars = 0;
  for (auto at = html.find("data-node=\""); at != std::string::npos; at = html.find("data-node=\"", at + 1)) ++bars;
  EXPECT_EQ(bars, 3u);  // d has no value; "gone" is not in the graph
  EXPECT_NE(html.find("b&lt;i&gt; (Relu): 1e-05"), std::string::npos) << html;
  EXPECT_EQ(html.find("<i>"), std::string::npos);
  EXPECT_NE(html.find("the first diverging node: c"), std::string::npos);
  EXPECT_NE(html.find("1 measured node is not in this graph"), std::string::npos);
  // Rising values rise on the page: on a log scale 1e-7 < 1e-5 < 0.5 in height.
  const nlohmann::json script = OverlayForScript(model.graph(), overlay, 100);
  ASSERT_EQ(script["nodes"].size(), 3u);
  EXPECT_LT(script["nodes"][0][2].get<double>(), script["nodes"][1][2].get<double>());
  EXPECT_LT(script["nodes"][1][2].get<double>(), script["nodes"][2][2].get<double>());
  EXPECT_EQ(script["nodes"][2][2].get<double>(), 1.0);
  EXPECT_EQ(script["nodes"][2][0].get<int>(), 2);  // its place in the outline: the third node
}

TEST(NodeOverlay, StaysBoundedOnAHundredThousandNodes) {
  std::vector<std::string> names;
  for (int i = 0; i < 100000; ++i) names.push_back("n" + std::to_string(i));
  auto model = Chain(names);
  NodeOverlay overlay{.title = "time", .unit = "µs"};
  for (int i = 0; i < 100000; ++i) overlay.values.push_back({names[i], static_cast<double>(i % 97)});
  const std::string html = OverlaySection(model.graph(), overlay, 600);
  std::size_t bars = 0;
  for (auto at = html.find("<rect x="); at != std::string::npos; at = html.find("<rect x=", at + 1)) ++bars;
  EXPECT_LE(bars, 600u);
  EXPECT_GT(bars, 500u);
  EXPECT_LT(html.size(), 400'000u);
  EXPECT_NE(html.find("a run of 167 nodes"), std::string::npos);
}

TEST(ReportPage, ShowsTheOverlayAndTheTablesOnlyWhenGiven) {
  auto model = Chain({"a", "b"});
  ReportPage page{.command = "bench", .model_path = "m.onnx", .verdict = "1 shape measured"};
  EXPECT_EQ(RenderReportPage(page, &model).find("id=\"overlay\""), std::string::npos);
  page.overlay = NodeOverlay{.title = "Time per node", .unit = "µs", .values = {{"a", 2}, {"b", 6}}};
  page.tables.push_back({"Time by operator type", {"operator", "share"}, {{"Relu<", "100%"}}, {false, true}});
  const std::string html = RenderReportPage(page, &model);
  EXPECT_NE(html.find("id=\"overlay\""), std::string::npos);
  EXPECT_NE(html.find("id=\"overlay-data\""), std::string::npos);
  EXPECT_NE(html.find("<td>Relu&lt;</td><td class=\"num\">100%</td>"), std::string::npos);
  std::size_t scripts = 0;
  for (auto at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 3u);  // the model's data, the overlay's and the page's own script
}

TEST(ReportPage, DrawsTheSweepAsAGridWithEachFailureLinkedAndEscaped) {
  auto model = Chain({"a"});
  ReportPage page{.command = "validate", .model_path = "m.onnx", .verdict = "FAIL"};
  PageGrid grid{.title = "The dynamic-shape sweep", .row_axes = "batch", .column_axis = "seq<len>"};
  grid.row_labels = {"1", "8"};
  grid.column_labels = {"16", "512"};
  grid.cells = {{"pass", "1.2 ms", ""}, {"pass", "3 ms", ""}, {"pass", "4 ms", ""}, {"nan", "NaN", "<b>nan</b>"}};
  page.grid = grid;
  const std::string html = RenderReportPage(page, &model);
  EXPECT_NE(html.find("<th>batch \\ seq&lt;len&gt;</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"pass\">1.2 ms</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"nan\"><a href=\"#cell-1-1\" title=\"&lt;b&gt;nan&lt;/b&gt;\">NaN</a></td>"),
            std::string::npos);
  EXPECT_NE(html.find("<li id=\"cell-1-1\"><b>batch = 8, seq&lt;len&gt; = 512</b>: &lt;b&gt;nan&lt;/b&gt;</li>"),
            std::string::npos);
  EXPECT_EQ(html.find("<b>nan</b>"), std::string::npos);
}

}  // namespace
}  // namespace ortkit
