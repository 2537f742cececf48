#pragma once
// Cross-checks without a framework reference: the same inputs through two ONNX Runtime
// configurations (optimisations off against all, CPU against CUDA) or two models, compared output
// by output. Side A is the reference; side B is judged against it.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json_fwd.hpp>

#include "ortkit/core/result.h"
#include "ortkit/model/quantization.h"
#include "ortkit/runtime/runtime.h"
#include "ortkit/tensor/comparison.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// A model to load: a file (external data resolved next to it) or serialised bytes in memory
/// (external data resolved against the current directory, as Session::CreateFromBytes does).
struct ModelToLoad {
  std::filesystem::path path;  ///< used when `bytes` is empty
  std::string_view bytes;      ///< a serialised ModelProto, not owned: it must outlive every call given it

  bool empty() const { return bytes.empty() && path.empty(); }
  /// "'model.onnx'" or "the model in memory (1.2 MiB)", for messages.
  std::string Describe() const;
};

/// One side of a cross-check: what to load, how, and what reports call it.
struct CrossCheckSide {
  std::string label;  ///< "optimisations off", "cpu"
  SessionConfig config;
  ModelToLoad model;  ///< empty: the model both sides share
};

/// The two sides a cross-check mode stands for.
struct CrossCheckPlan {
  CrossCheckSide a;  ///< the reference
  CrossCheckSide b;
};

/// Parses a cross-check mode into two sides that differ from `base` in one setting only:
///   "opt-levels"                 optimisations off (ORT_DISABLE_ALL) against all (ORT_ENABLE_ALL)
///   "opt-levels=LEVEL,LEVEL"     LEVEL one of off, basic, extended, layout, all
///   "providers=cpu,cuda"         two distinct execution providers by short name
/// Unknown modes, levels or providers are kInvalidArgument errors listing the valid names; a known
/// provider missing from this ONNX Runtime build is kUnavailable, naming the providers available.
Result<CrossCheckPlan> ParseCrossCheckMode(std::string_view mode, const SessionConfig& base = {});

/// "optimisations off", "optimisations all", ... for a level; "optimisations level N" otherwise.
std::string OptimizationLabel(OptimizationLevel level);

/// Where one side's nodes ran, read from ONNX Runtime's profiler trace of that side's run (the
/// optimised graph: fused nodes count once).
struct SidePlacement {
  struct ProviderNodes {
    std::string name;  ///< "CPUExecutionProvider"
    std::int64_t nodes = 0;
  };
  struct Fallback {
    std::string node;
    std::string op_type;
  };
  /// Empty when the placement is known; else why not ("placement unknown: ..."). Profiling is an
  /// aid: its failure never fails the cross-check.
  std::string note;
  std::vector<ProviderNodes> providers;  ///< most nodes first; memory copies included
  std::int64_t memory_copies = 0;        ///< MemcpyToHost / MemcpyFromHost nodes
  /// Nodes on CPUExecutionProvider although the side asked for another provider, the most costly
  /// first; always empty for a CPU side.
  std::vector<Fallback> cpu_fallbacks;

  bool known() const { return note.empty(); }
  /// {"providers": [{"name", "nodes"}], "memory_copies", "cpu_fallbacks": [{"node", "op_type"}]},
  /// plus "note" when the placement is unknown.
  nlohmann::json ToJson() const;
};

struct CrossCheckReport {
  std::string label_a;
  std::string label_b;
  ComparisonReport comparison;  ///< expected: side A's outputs, actual: side B's
  /// The judged model's quantisation (empty schemes: a float model, or no model given to judge by).
  QuantizationSummary quantization;
  /// Wall time of each side's run, session creation excluded. The run is profiled (for the
  /// placement), so it includes the profiler's overhead: a timestamp pair per node, small beside
  /// the kernels, and the same on both sides.
  double run_ms_a = 0;
  double run_ms_b = 0;
  SidePlacement placement_a;
  SidePlacement placement_b;

  bool Passed() const { return comparison.Passed(); }
  nlohmann::json ToJson() const;
};

/// Runs `inputs` once through each side and compares every output of side B with side A's.
/// A side whose `model` is empty loads `model`; a side with a model of its own is fed only the inputs it
/// declares (a fixed copy may have dropped unused ones). Each session is created, run and released before
/// the next is created, so at most one is held at a time. Each side's session is profiled into a
/// temporary folder, removed afterwards, to record where its nodes ran (not for a `purpose_model` of
/// more than 20,000 nodes, whose events would take the profiler gigabytes: the placement is then unknown,
/// and says why). Errors (a model that does not load on a
/// side, inputs that do not fit) are prefixed with the side's label. With `purpose_model` (the parsed model
/// whose outputs are judged: side B's when it has its own), every output's task-level agreement is measured,
/// and a quantised model's outputs are judged by their purpose (validate/purpose_judgement.h).
Result<CrossCheckReport> CrossCheck(Runtime& runtime, const ModelToLoad& model, const CrossCheckPlan& plan,
                                    std::span<const NamedTensor> inputs, const ToleranceRules& tolerance,
                                    const onnx::ModelProto* purpose_model = nullptr);

/// The same with two configurations of one model, labelled by what differs between them
/// ("cpu" / "cuda", "optimisations off" / "optimisations all", else "first run" / "second run").
Result<CrossCheckReport> CrossCheck(Runtime& runtime, const ModelToLoad& model, const SessionConfig& a,
                                    const SessionConfig& b, std::span<const NamedTensor> inputs,
                                    const ToleranceRules& tolerance);

/// The labels CrossCheck gives two configurations of one model (see above).
std::pair<std::string, std::string> LabelSides(const SessionConfig& a, const SessionConfig& b);

/// Creates a session for `model` with `config`.
Result<std::unique_ptr<Session>> OpenModel(Runtime& runtime, const ModelToLoad& model, const SessionConfig& config);

}  // namespace ortkit
