#pragma once
// Drawing part of a graph as inline SVG for the report page: boxes for nodes (and for the graph inputs,
// outputs and initializers they touch), edges labelled with element type and shape, a node's attributes
// and initializer inputs in its hover text (<title>). Every name is escaped (core/markup_text.h).

#include <map>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "ortkit/report/neighbourhood.h"

namespace ortkit {

/// The type of every value of one graph, "float32[batch,3,224,224]": from the graph's inputs and outputs,
/// its value_info (what shape inference adds) and its initializers. Points into the graph.
class GraphValueTypes {
 public:
  explicit GraphValueTypes(const onnx::GraphProto& graph);
  /// The value's type, or "" when nothing says it.
  std::string Of(const std::string& value) const;
  /// The initializer of this name, or null.
  const onnx::TensorProto* Initializer(const std::string& value) const;

 private:
  std::map<std::string, const onnx::TypeProto*> declared_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
};

/// A node's hover text: op type (and domain), name, then one line per attribute and per initializer input,
/// each cut to a bounded length so that a huge attribute cannot swell the page. Not escaped.
std::string NodeHoverText(const onnx::NodeProto& node, int index, const GraphValueTypes& types);

/// `text` cut to at most `bytes` bytes on a UTF-8 character boundary, with "…" when cut.
std::string Shorten(std::string_view text, std::size_t bytes);

/// The neighbourhood as one <svg> element: the focus node (class "node focus") and the focus value's
/// edges and box highlighted, every node a <g class="node"> with data-node holding its display name.
std::string NeighbourhoodSvg(const Neighbourhood& neighbourhood);

}  // namespace ortkit
