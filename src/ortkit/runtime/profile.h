#pragma once
// Reading ONNX Runtime's profiler trace (SessionConfig::enable_profiling): where the time of a
// run goes, per node, per operator type and per execution provider, the memory copies between
// devices, and the nodes that fell back to the CPU.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/runtime/runtime.h"

namespace ortkit {

/// One node of the graph as the profiler saw it (the optimised graph: fused nodes appear fused).
struct NodeProfile {
  std::string node;      ///< node name ("#index" when the trace gives none)
  std::string op_type;   ///< "MatMul", "FusedMatMul", "MemcpyToHost"
  std::string provider;  ///< "CPUExecutionProvider"
  std::int64_t calls = 0;
  double total_us = 0;
  double share = 0;  ///< of the time of every node together, 0..1
};

/// Time summed by operator type or by provider.
struct GroupProfile {
  std::string name;
  std::int64_t nodes = 0;  ///< distinct nodes
  std::int64_t calls = 0;
  double total_us = 0;
  double share = 0;
};

struct ProfileReport {
  std::filesystem::path trace;  ///< the runtime's JSON trace, kept for chrome://tracing or Perfetto
  std::int64_t runs = 0;        ///< model_run events
  double run_total_us = 0;      ///< their durations summed
  double node_total_us = 0;     ///< every node's kernel time summed
  double session_initialization_us = 0;
  std::vector<NodeProfile> nodes;          ///< by total time, largest first
  std::vector<GroupProfile> op_types;      ///< by total time, largest first
  std::vector<GroupProfile> providers;     ///< by total time, largest first
  std::vector<NodeProfile> memory_copies;  ///< Memcpy nodes (MemcpyToHost / MemcpyFromHost)
  /// Nodes placed on the CPU although `requested_provider` is another provider; empty when the
  /// CPU was asked for. Memory copies are not counted here.
  std::vector<NodeProfile> cpu_fallbacks;
};

/// Parses a trace's JSON text. `requested_provider` is ortkit's short name ("cpu", "cuda").
/// Fails with kInvalidModel when the text is not the profiler's event array.
Result<ProfileReport> ParseProfileTrace(std::string_view json_text, std::string_view requested_provider);

/// Reads and parses the trace file at `path` (kIo when unreadable).
Result<ProfileReport> ReadProfileTrace(const std::filesystem::path& path, std::string_view requested_provider);

/// Ends the profiler of `session` (created with enable_profiling), parses its trace against the
/// session's own provider, and deletes the trace file unless `keep_trace`.
Result<ProfileReport> CollectProfile(Session& session, bool keep_trace = false);

/// "CUDAExecutionProvider 118 nodes, CPUExecutionProvider 2 nodes" (memory copies included).
std::string DescribePlacement(const ProfileReport& report);

}  // namespace ortkit
