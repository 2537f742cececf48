#include "ortkit/model/summary.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ortkit/model/external_data.h"
#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

// Exact producer_name values, as the exporters write them. OpenVINO, CNTK and hand-edited files
// are deliberately absent: they report as "unknown".
constexpr ProducerFamily kProducers[] = {
    {"pytorch", "pytorch", "PyTorch torch.onnx exporter"},
    {"tf2onnx", "tf2onnx", "TensorFlow/TFLite/JAX converter"},
    {"keras2onnx", "keras2onnx", "Keras converter"},
    {"PaddlePaddle", "paddle2onnx", "PaddlePaddle converter"},
    {"paddle2onnx", "paddle2onnx", "PaddlePaddle converter"},
    {"skl2onnx", "skl2onnx", "scikit-learn converter"},
    {"OnnxMLTools", "onnxmltools", "onnxmltools (LightGBM, XGBoost, CoreML, ...)"},
    {"spox", "spox", "Spox model builder"},
    {"onnxscript", "onnxscript", "ONNX Script"},
    {"onnx.helper", "onnx.helper", "onnx.helper / onnx.parser, written by hand"},
    {"onnx-parser", "onnx.helper", "onnx.helper / onnx.parser, written by hand"},
    {"onnx-example", "onnx.helper", "onnx.helper / onnx.parser, written by hand"},
    {"backend-test", "onnx.helper", "ONNX backend test case (onnx.helper)"},
    {"onnx.compose.merge_models", "onnx.helper", "onnx.compose"},
    {"onnxruntime.transformers", "onnxruntime", "ONNX Runtime transformer optimizer"},
    {"onnx.quantize", "onnxruntime", "ONNX Runtime quantizer"},
    {"onnxruntime-genai", "onnxruntime", "ONNX Runtime GenAI model builder"},
};

constexpr std::string_view kDefaultDomain = "ai.onnx";
constexpr int kMaxTypeDepth = 32;  // nested sequence/map/optional types deeper than this are not described

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

std::string DomainName(const std::string& domain) { return domain.empty() ? std::string(kDefaultDomain) : domain; }

std::uint64_t SaturatingMultiply(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}

// Bytes the tensor's values take, computed from its declared shape: the data itself is never read,
// so an external tensor costs nothing and an embedded one is not copied.
std::uint64_t TensorBytes(const onnx::TensorProto& tensor) {
  if (tensor.data_type() == onnx::TensorProto::STRING) {
    std::uint64_t total = 0;
    for (const auto& s : tensor.string_data()) total += s.size();
    return total;
  }
  const long long count = ElementCount(tensor);
  if (count < 0) return 0;
  constexpr int kUint4 = 21, kInt4 = 22;  // two elements per byte (IR 10)
  if (tensor.data_type() == kUint4 || tensor.data_type() == kInt4) return (static_cast<std::uint64_t>(count) + 1) / 2;
  const int element_size = ElementSize(tensor.data_type());
  if (element_size == 0) return tensor.raw_data().size();  // a type newer than this build: trust the bytes
  return SaturatingMultiply(static_cast<std::uint64_t>(count), static_cast<std::uint64_t>(element_size));
}

DimensionSummary DescribeDimension(const onnx::TensorShapeProto::Dimension& dim) {
  DimensionSummary out;
  if (dim.has_dim_value()) {
    out.kind = DimensionSummary::Kind::kFixed;
    out.value = dim.dim_value();
  } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
    out.kind = DimensionSummary::Kind::kSymbolic;
    out.symbol = dim.dim_param();
  }
  return out;
}

TypeSummary DescribeTensor(TypeSummary::Kind kind, int elem_type, bool has_shape, const onnx::TensorShapeProto& shape) {
  TypeSummary out;
  out.kind = kind;
  out.element_type = ElementTypeName(elem_type);
  out.has_shape = has_shape;
  for (const auto& dim : shape.dim()) out.shape.push_back(DescribeDimension(dim));
  return out;
}

TypeSummary DescribeType(const onnx::TypeProto& type, int depth) {
  TypeSummary out;
  if (depth > kMaxTypeDepth) return out;
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& t = type.tensor_type();
      return DescribeTensor(TypeSummary::Kind::kTensor, t.elem_type(), t.has_shape(), t.shape());
    }
    case onnx::TypeProto::kSparseTensorType: {
      const auto& t = type.sparse_tensor_type();
      return DescribeTensor(TypeSummary::Kind::kSparseTensor, t.elem_type(), t.has_shape(), t.shape());
    }
    case onnx::TypeProto::kSequenceType:
      out.kind = TypeSummary::Kind::kSequence;
      if (type.sequence_type().has_elem_type())
        out.nested.push_back(DescribeType(type.sequence_type().elem_type(), depth + 1));
      break;
    case onnx::TypeProto::kOptionalType:
      out.kind = TypeSummary::Kind::kOptional;
      if (type.optional_type().has_elem_type())
        out.nested.push_back(DescribeType(type.optional_type().elem_type(), depth + 1));
      break;
    case onnx::TypeProto::kMapType:
      out.kind = TypeSummary::Kind::kMap;
      out.element_type = ElementTypeName(type.map_type().key_type());
      if (type.map_type().has_value_type()) out.nested.push_back(DescribeType(type.map_type().value_type(), depth + 1));
      break;
    case onnx::TypeProto::kOpaqueType: {
      out.kind = TypeSummary::Kind::kOpaque;
      const auto& opaque = type.opaque_type();
      out.element_type = opaque.domain().empty() ? opaque.name() : opaque.domain() + "." + opaque.name();
      break;
    }
    default: break;
  }
  return out;
}

std::vector<std::int64_t> Dims(const google::protobuf::RepeatedField<std::int64_t>& dims) {
  return {dims.begin(), dims.end()};
}

InitializerSummary DescribeInitializer(const onnx::TensorProto& tensor, std::uint64_t bytes) {
  InitializerSummary out;
  out.name = tensor.name();
  out.element_type = ElementTypeName(tensor.data_type());
  out.shape = Dims(tensor.dims());
  out.bytes = bytes;
  out.external = tensor.data_location() == onnx::TensorProto::EXTERNAL;
  return out;
}

void SummarizeInitializers(const onnx::GraphProto& graph, ModelSummary& out) {
  struct Sized {
    const onnx::TensorProto* tensor;
    std::uint64_t bytes;
  };
  std::vector<Sized> sized;
  sized.reserve(static_cast<std::size_t>(graph.initializer_size()));
  std::map<std::string, ElementTypeTotal> totals;
  for (const auto& init : graph.initializer()) {
    const std::uint64_t bytes = TensorBytes(init);
    sized.push_back({&init, bytes});
    auto& total = totals[ElementTypeName(init.data_type())];
    total.count += 1;
    total.bytes += bytes;
    out.initializer_bytes += bytes;
  }
  out.initializer_count = sized.size();
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Constant" || !(node.domain().empty() || node.domain() == "ai.onnx")) continue;
    for (const auto& attribute : node.attribute()) {
      if (attribute.name() != "value" || !attribute.has_t()) continue;
      ++out.constant_count;
      out.constant_bytes += TensorBytes(attribute.t());
    }
  }
  for (auto& [type, total] : totals) {
    total.element_type = type;
    out.initializer_totals.push_back(total);
  }
  std::stable_sort(out.initializer_totals.begin(), out.initializer_totals.end(),
                   [](const ElementTypeTotal& a, const ElementTypeTotal& b) { return a.bytes > b.bytes; });

  const std::size_t keep = std::min(sized.size(), ModelSummary::kLargestInitializers);
  std::partial_sort(sized.begin(), sized.begin() + static_cast<std::ptrdiff_t>(keep), sized.end(),
                    [](const Sized& a, const Sized& b) {
                      return a.bytes != b.bytes ? a.bytes > b.bytes : a.tensor->name() < b.tensor->name();
                    });
  for (std::size_t i = 0; i < keep; ++i)
    out.largest_initializers.push_back(DescribeInitializer(*sized[i].tensor, sized[i].bytes));

  for (const auto& sparse : graph.sparse_initializer()) {
    SparseInitializerSummary s;
    s.name = sparse.values().name();
    s.element_type = ElementTypeName(sparse.values().data_type());
    s.shape = Dims(sparse.dims());
    const long long nonzero = ElementCount(sparse.values());
    s.nonzero = nonzero < 0 ? 0 : static_cast<std::uint64_t>(nonzero);
    s.bytes = TensorBytes(sparse.values()) + TensorBytes(sparse.indices());
    out.sparse_initializers.push_back(std::move(s));
  }
}

void SummarizeExternalData(const ModelFile& model, ModelSummary& out) {
  const auto tensors = ListExternalTensors(*model.proto, &out.notes);
  if (tensors.empty()) return;
  // Declared sizes, for entries that omit "length" and so read to the end of their file.
  std::unordered_map<std::string_view, std::uint64_t> declared;
  ForEachGraph(model.proto->graph(), [&](const onnx::GraphProto& graph, const std::string&) {
    for (const auto& init : graph.initializer()) {
      if (init.data_location() == onnx::TensorProto::EXTERNAL) declared.emplace(init.name(), TensorBytes(init));
    }
  });
  const std::filesystem::path base = model.BaseDirectory();
  std::unordered_map<std::string, std::size_t> index;  // location -> position in out.external_files
  for (const auto& t : tensors) {
    auto [it, inserted] = index.try_emplace(t.location, out.external_files.size());
    if (inserted) {
      ExternalFileSummary file;
      file.location = t.location;
      std::error_code ec;
      // A location outside the model's folder is reported as such, and nothing is said of the file there.
      const auto full = ResolveExternalLocation(base, t.location);
      file.outside_folder = !full.ok();
      if (full.ok() && std::filesystem::is_regular_file(*full, ec)) {
        const auto size = std::filesystem::file_size(*full, ec);
        if (!ec) file.file_bytes = size;
      }
      out.external_files.push_back(std::move(file));
    }
    auto& file = out.external_files[it->second];
    file.tensors += 1;
    if (t.length >= 0) {
      file.bytes += static_cast<std::uint64_t>(t.length);
    } else if (auto found = declared.find(t.tensor); found != declared.end()) {
      file.bytes += found->second;
    }
  }
}

void SummarizeGraphs(const onnx::ModelProto& proto, ModelSummary& out) {
  const onnx::GraphProto& main = proto.graph();
  out.node_count = static_cast<std::uint64_t>(main.node_size());
  for (const auto& node : main.node()) out.operators[DomainName(node.domain())][node.op_type()] += 1;
  ForEachGraph(main, [&](const onnx::GraphProto& graph, const std::string& path) {
    if (path.empty()) return;  // the main graph
    out.subgraphs.push_back(
        {path, static_cast<std::uint64_t>(graph.node_size()), static_cast<std::uint64_t>(graph.initializer_size())});
    out.subgraph_nodes += static_cast<std::uint64_t>(graph.node_size());
  });
  for (const auto& function : proto.functions()) {
    out.functions.push_back(
        {function.name(), DomainName(function.domain()), static_cast<std::uint64_t>(function.node_size())});
  }
}

nlohmann::json DimensionJson(const DimensionSummary& dim) {
  switch (dim.kind) {
    case DimensionSummary::Kind::kFixed: return dim.value;
    case DimensionSummary::Kind::kSymbolic: return dim.symbol;
    case DimensionSummary::Kind::kUnknown: break;
  }
  return nullptr;
}

nlohmann::json ShapeJson(const std::vector<std::int64_t>& shape) { return shape; }

nlohmann::json OptionalBytes(const std::optional<std::uint64_t>& bytes) {
  return bytes ? nlohmann::json(*bytes) : nlohmann::json(nullptr);
}

}  // namespace

TypeSummary SummarizeType(const onnx::TypeProto& type) { return DescribeType(type, 0); }

std::string DimensionSummary::ToString() const {
  switch (kind) {
    case Kind::kFixed: return std::to_string(value);
    case Kind::kSymbolic: return symbol;
    case Kind::kUnknown: break;
  }
  return "?";
}

const char* ToString(TypeSummary::Kind kind) {
  switch (kind) {
    case TypeSummary::Kind::kTensor: return "tensor";
    case TypeSummary::Kind::kSparseTensor: return "sparse_tensor";
    case TypeSummary::Kind::kSequence: return "sequence";
    case TypeSummary::Kind::kMap: return "map";
    case TypeSummary::Kind::kOptional: return "optional";
    case TypeSummary::Kind::kOpaque: return "opaque";
    case TypeSummary::Kind::kUnknown: break;
  }
  return "unknown";
}

std::string TypeSummary::ToString() const {
  const std::string inner = nested.empty() ? "?" : nested.front().ToString();
  switch (kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor: {
      std::string out = (kind == Kind::kSparseTensor ? "sparse " : "") + element_type;
      if (!has_shape) return out + "[...]";
      out += "[";
      for (std::size_t i = 0; i < shape.size(); ++i) out += (i == 0 ? "" : ",") + shape[i].ToString();
      return out + "]";
    }
    case Kind::kSequence: return "seq(" + inner + ")";
    case Kind::kMap: return "map(" + element_type + ", " + inner + ")";
    case Kind::kOptional: return "optional(" + inner + ")";
    case Kind::kOpaque: return "opaque(" + element_type + ")";
    case Kind::kUnknown: break;
  }
  return "?";
}

namespace {

/// The exporter a model without producer_name most likely came from, by the marks exporters leave
/// in the graph's name and in the names of dimensions.
std::string GuessProducer(const onnx::ModelProto& proto) {
  const onnx::GraphProto& graph = proto.graph();
  if (graph.name().find("PaddlePaddle") != std::string::npos) {
    return fmt::format("paddle2onnx (graph named '{}')", graph.name());
  }
  for (const auto* values : {&graph.input(), &graph.output()}) {
    for (const auto& value : *values) {
      if (!value.type().has_tensor_type()) continue;
      for (const auto& dim : value.type().tensor_type().shape().dim()) {
        if (dim.dim_param().rfind("p2o.", 0) == 0) return "paddle2onnx (dimension names 'p2o.*')";
        if (dim.dim_param().rfind("unk__", 0) == 0)
          return "tf2onnx or onnx's shape inference (dimension names 'unk__*')";
      }
    }
  }
  if (graph.name() == "torch_jit" || graph.name() == "main_graph") {
    return fmt::format("PyTorch torch.onnx (graph named '{}')", graph.name());
  }
  if (graph.name() == "tf2onnx") return "tf2onnx (graph named 'tf2onnx')";
  return "";
}

}  // namespace

const ProducerFamily* RecogniseProducer(std::string_view producer_name) {
  for (const auto& entry : kProducers) {
    if (EqualsIgnoringCase(entry.producer_name, producer_name)) return &entry;
  }
  return nullptr;
}

ModelSummary Summarize(const ModelFile& model) {
  const onnx::ModelProto& proto = *model.proto;
  const onnx::GraphProto& graph = proto.graph();
  ModelSummary out;
  out.path = model.path.string();
  out.file_bytes = model.size_bytes;
  out.ir_version = proto.ir_version();
  out.producer_name = proto.producer_name();
  out.producer_version = proto.producer_version();
  const ProducerFamily* family = RecogniseProducer(proto.producer_name());
  out.producer_family = family != nullptr ? std::string(family->family) : "unknown";
  if (proto.producer_name().empty()) out.producer_guess = GuessProducer(proto);
  out.domain = proto.domain();
  out.model_version = proto.model_version();
  out.doc_string = proto.doc_string();
  out.graph_name = graph.name();
  for (const auto& opset : proto.opset_import()) out.opsets.push_back({DomainName(opset.domain()), opset.version()});
  for (const auto& prop : proto.metadata_props()) out.metadata.emplace_back(prop.key(), prop.value());

  std::unordered_set<std::string_view> initializer_names;
  for (const auto& init : graph.initializer()) initializer_names.insert(init.name());
  for (const auto& sparse : graph.sparse_initializer()) initializer_names.insert(sparse.values().name());
  for (const auto& input : graph.input()) {
    if (initializer_names.count(input.name()) != 0) {
      ++out.initializer_inputs;
      continue;
    }
    out.inputs.push_back({input.name(), DescribeType(input.type(), 0)});
  }
  for (const auto& output : graph.output()) out.outputs.push_back({output.name(), DescribeType(output.type(), 0)});

  SummarizeInitializers(graph, out);
  SummarizeExternalData(model, out);
  SummarizeGraphs(proto, out);
  return out;
}

void to_json(nlohmann::json& json, const TypeSummary& type) {
  json = {{"kind", ToString(type.kind)}, {"display", type.ToString()}};
  switch (type.kind) {
    case TypeSummary::Kind::kTensor:
    case TypeSummary::Kind::kSparseTensor: {
      json["element_type"] = type.element_type;
      if (!type.has_shape) {
        json["shape"] = nullptr;
        break;
      }
      auto shape = nlohmann::json::array();
      for (const auto& dim : type.shape) shape.push_back(DimensionJson(dim));
      json["shape"] = std::move(shape);
      break;
    }
    case TypeSummary::Kind::kSequence:
    case TypeSummary::Kind::kOptional:
      json["element"] = type.nested.empty() ? nlohmann::json(nullptr) : nlohmann::json(type.nested.front());
      break;
    case TypeSummary::Kind::kMap:
      json["key_type"] = type.element_type;
      json["value"] = type.nested.empty() ? nlohmann::json(nullptr) : nlohmann::json(type.nested.front());
      break;
    case TypeSummary::Kind::kOpaque: json["name"] = type.element_type; break;
    case TypeSummary::Kind::kUnknown: break;
  }
}

void to_json(nlohmann::json& json, const ModelSummary& s) {
  auto values = [](const std::vector<ValueSummary>& list) {
    auto out = nlohmann::json::array();
    for (const auto& v : list) out.push_back({{"name", v.name}, {"type", v.type}});
    return out;
  };
  auto opsets = nlohmann::json::array();
  for (const auto& o : s.opsets) opsets.push_back({{"domain", o.domain}, {"version", o.version}});
  auto metadata = nlohmann::json::array();
  for (const auto& [key, value] : s.metadata) metadata.push_back({{"key", key}, {"value", value}});
  auto by_type = nlohmann::json::array();
  for (const auto& t : s.initializer_totals)
    by_type.push_back({{"element_type", t.element_type}, {"count", t.count}, {"bytes", t.bytes}});
  auto largest = nlohmann::json::array();
  for (const auto& i : s.largest_initializers) {
    largest.push_back({{"name", i.name},
                       {"element_type", i.element_type},
                       {"shape", ShapeJson(i.shape)},
                       {"bytes", i.bytes},
                       {"external", i.external}});
  }
  auto sparse = nlohmann::json::array();
  for (const auto& i : s.sparse_initializers) {
    sparse.push_back({{"name", i.name},
                      {"element_type", i.element_type},
                      {"shape", ShapeJson(i.shape)},
                      {"nonzero", i.nonzero},
                      {"bytes", i.bytes}});
  }
  auto external = nlohmann::json::array();
  for (const auto& f : s.external_files) {
    external.push_back({{"location", f.location},
                        {"tensors", f.tensors},
                        {"bytes", f.bytes},
                        {"file_bytes", OptionalBytes(f.file_bytes)},
                        {"outside_folder", f.outside_folder}});
  }
  auto subgraphs = nlohmann::json::array();
  for (const auto& g : s.subgraphs)
    subgraphs.push_back({{"path", g.path}, {"nodes", g.nodes}, {"initializers", g.initializers}});
  auto functions = nlohmann::json::array();
  for (const auto& f : s.functions) functions.push_back({{"name", f.name}, {"domain", f.domain}, {"nodes", f.nodes}});

  json = {
      {"schema_version", 1},
      {"file", {{"path", s.path}, {"size_bytes", s.file_bytes}}},
      {"ir_version", s.ir_version},
      {"producer",
       {{"name", s.producer_name},
        {"version", s.producer_version},
        {"family", s.producer_family},
        {"guess", s.producer_guess}}},
      {"domain", s.domain},
      {"model_version", s.model_version},
      {"doc_string", s.doc_string},
      {"graph_name", s.graph_name},
      {"opset_imports", std::move(opsets)},
      {"metadata_props", std::move(metadata)},
      {"inputs", values(s.inputs)},
      {"outputs", values(s.outputs)},
      {"initializers",
       {{"count", s.initializer_count},
        {"bytes", s.initializer_bytes},
        {"listed_as_inputs", s.initializer_inputs},
        {"constant_nodes", s.constant_count},
        {"constant_bytes", s.constant_bytes},
        {"by_element_type", std::move(by_type)},
        {"largest", std::move(largest)}}},
      {"sparse_initializers", std::move(sparse)},
      {"external_data", std::move(external)},
      {"nodes", s.node_count},
      {"operators", s.operators},
      {"subgraphs", {{"count", s.subgraphs.size()}, {"nodes", s.subgraph_nodes}, {"graphs", std::move(subgraphs)}}},
      {"functions", std::move(functions)},
      {"notes", s.notes},
  };
}

}  // namespace ortkit
