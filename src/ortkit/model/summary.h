#pragma once
// `ortkit inspect`: what a model contains, as plain data. Built from the parsed protobuf only
// (never the ONNX checker), so models with IR versions or opsets newer than the linked ONNX
// library are summarised all the same.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ortkit/diagnose/diagnosis.h"
#include "ortkit/model/model_file.h"

namespace ortkit {

/// One dimension of a declared shape, as the model writes it.
struct DimensionSummary {
  enum class Kind { kFixed, kSymbolic, kUnknown };
  Kind kind = Kind::kUnknown;
  std::int64_t value = 0;  ///< kFixed only
  std::string symbol;      ///< kSymbolic only (dim_param)

  /// "3", "batch" or "?".
  std::string ToString() const;
};

/// A declared type: tensors with element type and shape, and the non-tensor types (sequence,
/// map, optional) with what they hold.
struct TypeSummary {
  enum class Kind { kTensor, kSparseTensor, kSequence, kMap, kOptional, kOpaque, kUnknown };
  Kind kind = Kind::kUnknown;
  std::string element_type;  ///< tensors: "float32"; maps: the key type
  bool has_shape = false;    ///< tensors: false when even the rank is unknown
  std::vector<DimensionSummary> shape;
  std::vector<TypeSummary> nested;  ///< sequence/optional: the element; map: the value; else empty

  /// "float32[N,3,224,224]", "float32[rank ?]", "seq(float32[?])", "map(int64, float32[])", ...
  std::string ToString() const;
};

/// "tensor", "sparse_tensor", "sequence", "map", "optional", "opaque", "unknown".
const char* ToString(TypeSummary::Kind kind);

/// What `type` declares, as Summarize describes each input and output.
TypeSummary SummarizeType(const onnx::TypeProto& type);

struct ValueSummary {
  std::string name;
  TypeSummary type;
};

/// One dense or sparse initializer, without its data.
struct InitializerSummary {
  std::string name;
  std::string element_type;
  std::vector<std::int64_t> shape;
  std::uint64_t bytes = 0;  ///< element count times element size; summed lengths for strings
  bool external = false;    ///< the data lives in an external file
};

struct ElementTypeTotal {
  std::string element_type;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

struct SparseInitializerSummary {
  std::string name;
  std::string element_type;
  std::vector<std::int64_t> shape;  ///< the dense shape
  std::uint64_t nonzero = 0;        ///< number of stored values
  std::uint64_t bytes = 0;          ///< stored values plus indices
};

/// One external-data file, as the model references it.
struct ExternalFileSummary {
  std::string location;  ///< as written in the model
  std::uint64_t tensors = 0;
  std::uint64_t bytes = 0;                  ///< bytes the model reads from it (declared lengths, else tensor sizes)
  std::optional<std::uint64_t> file_bytes;  ///< size on disk; empty when missing or outside the folder
  bool outside_folder = false;              ///< absolute, or resolves outside the model's folder: not looked at
};

struct SubgraphSummary {
  std::string path;  ///< "node_name/attribute" chain, as ForEachGraph names it
  std::uint64_t nodes = 0;
  std::uint64_t initializers = 0;
};

struct FunctionSummary {
  std::string name;
  std::string domain;
  std::uint64_t nodes = 0;
};

struct OpsetSummary {
  std::string domain;  ///< "ai.onnx" for the default domain
  std::int64_t version = 0;
};

/// The metadata key under which `ortkit optimize` records what it did to a model (a JSON object: the
/// candidate, its passes with what each rewrote, ONNX Runtime's version, the provider, the CPU's features).
inline constexpr std::string_view kOptimizeProvenanceKey = "ortkit.optimize";

/// Everything `inspect` reports. Strings and counts only: no tensor data is copied.
struct ModelSummary {
  std::string path;
  std::uint64_t file_bytes = 0;

  std::int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string producer_family;  ///< see RecogniseProducer; "unknown" when not recognised
  /// When no producer is recorded, the exporter the graph's own marks point to ("paddle2onnx
  /// (dimension names 'p2o.*')"); empty when nothing does.
  std::string producer_guess;
  std::string domain;
  std::int64_t model_version = 0;
  std::string doc_string;  ///< complete; the text report shortens it
  std::string graph_name;
  std::vector<OpsetSummary> opsets;                           ///< in the model's order
  std::vector<std::pair<std::string, std::string>> metadata;  ///< in the model's order

  std::vector<ValueSummary> inputs;  ///< graph inputs that are not initializers
  std::vector<ValueSummary> outputs;
  std::uint64_t initializer_inputs = 0;  ///< graph inputs that name an initializer (IR < 4 style)

  std::uint64_t initializer_count = 0;  ///< main graph
  std::uint64_t initializer_bytes = 0;
  /// Weights some exporters keep in Constant nodes instead (main graph): how many, and their size.
  std::uint64_t constant_count = 0;
  std::uint64_t constant_bytes = 0;
  std::vector<ElementTypeTotal> initializer_totals;      ///< by element type, largest total first
  std::vector<InitializerSummary> largest_initializers;  ///< at most kLargestInitializers, largest first
  std::vector<SparseInitializerSummary> sparse_initializers;
  std::vector<ExternalFileSummary> external_files;  ///< in order of first reference

  std::uint64_t node_count = 0;  ///< main graph
  /// domain ("ai.onnx" for the default) -> op type -> node count, over the main graph.
  std::map<std::string, std::map<std::string, std::uint64_t>> operators;
  std::vector<SubgraphSummary> subgraphs;  ///< If/Loop/Scan bodies at any depth, depth first
  std::uint64_t subgraph_nodes = 0;
  std::vector<FunctionSummary> functions;  ///< model-local functions

  std::vector<Diagnosis> notes;  ///< what could not be summarised (unreadable external-data entries)

  static constexpr std::size_t kLargestInitializers = 10;
};

/// A producer_name the table knows, and the exporter family it stands for.
struct ProducerFamily {
  std::string_view producer_name;  ///< as exporters write it; matched without regard to case
  std::string_view family;         ///< "pytorch", "tf2onnx", ..., "onnxruntime"
  std::string_view description;    ///< for people: "PyTorch torch.onnx exporter"
};

/// The family for `producer_name`, or nullptr when the table does not know it (family "unknown").
const ProducerFamily* RecogniseProducer(std::string_view producer_name);

/// Summarises `model`. Reads only metadata: tensor data is neither copied nor decoded, and the
/// only file access is a size query for each external-data file.
ModelSummary Summarize(const ModelFile& model);

/// The stable JSON form documented in docs/commands/inspect.md and docs/schema/inspect.schema.json.
void to_json(nlohmann::json& json, const ModelSummary& summary);
void to_json(nlohmann::json& json, const TypeSummary& type);

}  // namespace ortkit
