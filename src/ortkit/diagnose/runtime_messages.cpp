#include "ortkit/diagnose/runtime_messages.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ortkit/core/text.h"
#include "ortkit/core/units.h"

namespace ortkit {
namespace {

// ---- Unwrapping: the layers that ortkit's adapter and ONNX Runtime put around the runtime's
// own sentence, and what they say about where the failure happened.

struct Unwrapped {
  std::string provider;  ///< "cpu", from the adapter's "loading ... on cpu: "
  std::string file;      ///< from "Load model from FILE failed:"
  std::string node;      ///< from "running Op node. Name:'n'" or "In Node, ("n", Op, ...)"
  std::string op_type;
  std::string text;  ///< the runtime's words without prefixes, source locations and assertion text
};

// Regular expressions only see this much of a message: libstdc++'s std::regex recurses once per
// character it consumes, so an unbounded message could exhaust the stack.
constexpr std::size_t kMaxMatchedChars = 4096;

// ORT_WHERE prints the function after a source location: __PRETTY_FUNCTION__ when it prints the
// path ("void onnxruntime::X::Init(ptrdiff_t) const [with T = Y]"), __FUNCTION__ otherwise
// ("Compute"). Returns the position after it.
std::size_t SkipFunction(std::string_view text, std::size_t pos) {
  const std::size_t paren = text.find('(', pos);
  const std::string_view head = text.substr(pos, paren == std::string_view::npos ? 0 : paren - pos);
  if (paren != std::string_view::npos && head.size() < 400 && head.find("::") != std::string_view::npos &&
      head.find(". ") == std::string_view::npos) {
    int depth = 0;
    for (pos = paren; pos < text.size(); ++pos) {
      if (text[pos] == '(') ++depth;
      if (text[pos] == ')' && --depth == 0) break;
    }
    pos = std::min(pos + 1, text.size());
    if (text.substr(pos).starts_with(" const")) pos += 6;
    if (text.substr(pos).starts_with(" [with ")) pos = std::min(text.find(']', pos), text.size() - 1) + 1;
  } else {
    std::size_t end = pos;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
    if (end > pos && end < text.size() && text[end] == ' ') pos = end;
  }
  while (pos < text.size() && text[pos] == ' ') ++pos;
  return pos;
}

// ORT_ENFORCE prints the condition that failed before the message: "axis == 1 was false. ".
std::size_t SkipFailedCondition(std::string_view text, std::size_t pos) {
  constexpr std::string_view kWasFalse = " was false.";
  const std::size_t found = text.substr(pos, 400).find(kWasFalse);
  if (found == std::string_view::npos) return pos;
  pos += found + kWasFalse.size();
  while (pos < text.size() && text[pos] == ' ') ++pos;
  return pos;
}

std::string StripSourceLocations(const std::string& text) {
  static const std::regex kLocation(R"re((?:/[^\s:]*/)?[\w.+-]+\.(?:h|hpp|cc|cpp|cu|inc):\d+ )re");
  std::string out;
  std::size_t pos = 0;
  std::smatch m;
  while (pos < text.size() &&
         std::regex_search(text.cbegin() + static_cast<std::ptrdiff_t>(pos), text.cend(), m, kLocation)) {
    const std::size_t start = pos + static_cast<std::size_t>(m.position(0));
    out.append(text, pos, start - pos);
    pos = SkipFailedCondition(text, SkipFunction(text, start + static_cast<std::size_t>(m.length(0))));
  }
  if (pos < text.size()) out.append(text, pos);
  return out;
}

std::string CollapseWhitespace(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// "This is an invalid model. In Node, ("relu_1", Relu, "", -1) : ("x": tensor(float),) -> (...) ,
// Error Node(relu_1) has ..." keeps the node and op and drops the value lists, which can be as
// long as the node has inputs. Plain string search: the lists are too long for std::regex.
void TakeNodeTuple(std::string& text, Unwrapped& out) {
  constexpr std::string_view kStart = "In Node, (\"", kError = " , Error ";
  const std::size_t start = text.find(kStart);
  if (start == std::string::npos) return;
  const std::size_t name_end = text.find("\", ", start + kStart.size());
  const std::size_t error = text.find(kError, start);
  if (name_end == std::string::npos || error == std::string::npos || name_end > error) return;
  out.node = text.substr(start + kStart.size(), name_end - start - kStart.size());
  const std::size_t op_start = name_end + 3;
  out.op_type = text.substr(op_start, text.find(',', op_start) - op_start);
  text.erase(start, error + kError.size() - start);
}

Unwrapped Unwrap(std::string_view message) {
  Unwrapped out;
  std::string text(message);
  TakeNodeTuple(text, out);
  if (text.size() > kMaxMatchedChars) text.resize(kMaxMatchedChars);
  text = CollapseWhitespace(StripSourceLocations(text));

  static const std::regex kPythonPrefix(R"re(\[ONNXRuntimeError\] : \d+ : \w+ : )re");
  text = std::regex_replace(text, kPythonPrefix, "");
  // Prefixes nest (the adapter's around "Load model from", or around the run wrapper naming the
  // node), so peel them from the front until none is left.
  static const std::regex kAdapter(R"re(^(?:loading (?:'.*?'|the model)|running the model) on ([\w-]+): )re");
  static const std::regex kLoadFrom(R"re(^Load model from (.*?) failed: ?)re");
  static const std::regex kRunNode(
      R"re(Non-zero status code returned while running (\w+) node\. Name:'([^']*)' Status Message: )re");
  while (true) {
    std::smatch m;
    if (std::regex_search(text, m, kAdapter)) {
      out.provider = m[1];
    } else if (std::regex_search(text, m, kLoadFrom)) {
      out.file = m[1];
    } else if (std::regex_search(text, m, kRunNode)) {
      out.op_type = m[1];
      out.node = m[2];
    } else {
      break;
    }
    text = m.suffix().str();
  }
  out.text = std::move(text);
  return out;
}

// ---- The table of known messages.

/// Which capture group fills which Location field; 0: none.
struct Groups {
  int node = 0;
  int op_type = 0;
  int input = 0;
  int output = 0;
  int tensor = 0;
  int dimension = 0;
};

/// A known message, matched: its captures, what the wrappers said, and the location so far.
// "128" for an inclusive upper index of "127": the rows of the table an index reads.
std::string RowsUpTo(const std::string& last_index) {
  long long last = 0;
  const auto [end, error] = std::from_chars(last_index.data(), last_index.data() + last_index.size(), last);
  if (error != std::errc() || last < 0 || last == std::numeric_limits<long long>::max()) return "all the";
  return std::to_string(last + 1);
}

struct Facts {
  const std::smatch& match;
  const Unwrapped& wrapped;
  const Location& at;

  std::string operator[](int group) const { return match[group].str(); }
  /// "node 'relu_1' (Relu)", "a Relu node" or "a node".
  std::string Node() const {
    if (!at.node.empty()) return "node '" + at.node + "'" + (at.op_type.empty() ? "" : " (" + at.op_type + ")");
    if (at.op_type.empty()) return "a node";
    const bool vowel = std::string_view("AEIOU").find(at.op_type[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + at.op_type + " node";
  }
  /// "CPU " when the adapter named the provider, else "".
  std::string Provider() const {
    std::string upper = wrapped.provider;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return upper.empty() ? "" : upper + " ";
  }
};

struct Entry {
  KnownRuntimeMessage known;
  Groups groups;
  /// The finding in one sentence, with the values from the message.
  std::string (*describe)(const Facts&);
  /// Replaces the catalogue's cause or fix where the captures make them specific; may be null.
  void (*specialise)(const Facts&, Diagnosis&) = nullptr;
};

/// The number a capture group holds; nullopt when it does not fit (the group's digits come from the message).
std::optional<std::uint64_t> ToNumber(const std::string& digits) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

bool IsDouble(std::string_view type) { return type == "tensor(double)"; }

constexpr std::string_view kFloat64Fix =
    "Make the tensor float32 in the export: float64 comes from a Python float or a numpy array (numpy's default), or "
    "from a Cast to double; use torch.float32 / np.float32, or remove the Cast.";

struct NumpyName {
  std::string_view onnx_type;
  std::string_view numpy;
};
constexpr std::array kNumpyNames = std::to_array<NumpyName>({
    {"tensor(float)", "float32"},
    {"tensor(double)", "float64"},
    {"tensor(float16)", "float16"},
    {"tensor(int64)", "int64"},
    {"tensor(int32)", "int32"},
    {"tensor(int16)", "int16"},
    {"tensor(int8)", "int8"},
    {"tensor(uint8)", "uint8"},
    {"tensor(bool)", "bool_"},
});

std::string_view NumpyNameOf(std::string_view onnx_type) {
  auto it = std::find_if(kNumpyNames.begin(), kNumpyNames.end(),
                         [&](const NumpyName& n) { return n.onnx_type == onnx_type; });
  return it == kNumpyNames.end() ? std::string_view() : it->numpy;
}

// "index: 0 Got: 3 Expected: 1 index: 2 Got: 5 Expected: 4" -> "dimension 0 is 3 (expected 1), ..."
std::string DescribeBadDimensions(const std::string& list, bool* fixed_batch) {
  static const std::regex kIndex(R"re(index: (\d+) Got: (\d+) Expected: (\d+))re");
  std::string out;
  for (std::sregex_iterator it(list.begin(), list.end(), kIndex), end; it != end; ++it) {
    const auto& m = *it;
    if (!out.empty()) out += ", ";
    out += fmt::format("dimension {} is {} where the model expects {}", m[1].str(), m[2].str(), m[3].str());
    if (m[1] == "0" && m[3] == "1") *fixed_batch = true;
  }
  return out.empty() ? list : out;
}

// clang-format off
constexpr std::array kEntries = std::to_array<Entry>({
  // ---- the model file and its versions (load)
  {{"runtime.protobuf-parse-failed", R"re([Pp]rotobuf parsing failed)re"}, {},
   [](const Facts&) { return std::string("ONNX Runtime cannot parse the file as an ONNX model"); }},
  {{"runtime.unsupported-ir-version", R"re(Unsupported model IR version: (-?\d+), max supported IR version: (\d+))re"},
   {},
   [](const Facts& f) {
     return fmt::format("the model's IR version {} is not supported; this ONNX Runtime supports IR versions up to {}",
                        f[1], f[2]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.fix = fmt::format("Upgrade ONNX Runtime, or save the model with IR version {0} or lower: an older onnx package "
                         "does that, or set model.ir_version = {0} before onnx.save when the model uses nothing newer.",
                         f[2]);
   }},
  {{"graph.opset-too-new",
    R"re(Opset (\d+) is under development.*?Current official support for domain (\S+) is till opset (\d+))re"}, {},
   [](const Facts& f) {
     return fmt::format("the model imports opset {} of domain {}; this ONNX Runtime supports it up to opset {}", f[1],
                        f[2], f[3]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.fix = f[2] == "ai.onnx"
         ? fmt::format("Export with opset {0} or lower (torch.onnx.export(..., opset_version={0})), convert with "
                       "onnx.version_converter.convert_version(model, {0}), or upgrade ONNX Runtime.", f[3])
         : fmt::format("Import domain {} at opset {} or lower, or upgrade ONNX Runtime.", f[2], f[3]);
   }},
  // ONNX Runtime 1.29 checks every external data path against the model's folder; a file that is not there
  // fails the same check.
  {{"external-data.missing-file",
    R"re(External data path validation failed for initializer: (\S+?)\. Error: External data path does not exist: "([^"]*)")re"},
   {.tensor = 1},
   [](const Facts& f) {
     return fmt::format("ONNX Runtime cannot find the external data of initializer '{}': {} does not exist", f[1], f[2]);
   }},
  {{"external-data.path-escapes",
    R"re(External data path validation failed for initializer: (\S+?)\. Error: (?:External data path escapes model directory\. External data path: "([^"]*)" resolved path: "([^"]*)"|(Absolute path not allowed))?)re"},
   {.tensor = 1},
   [](const Facts& f) {
     if (f.match[3].matched) {
       return fmt::format("ONNX Runtime refuses initializer '{}': its external data '{}' resolves to {}, outside the "
                          "model's folder",
                          f[1], f[2], f[3]);
     }
     if (f.match[4].matched) {
       return fmt::format("ONNX Runtime refuses initializer '{}': its external data location is an absolute path",
                          f[1]);
     }
     return fmt::format("ONNX Runtime refuses the external data path of initializer '{}'", f[1]);
   }},
  {{"runtime.missing-opset-import", R"re(No opset import for domain '([^']*)')re"}, {},
   [](const Facts& f) {
     return fmt::format("{} uses domain '{}', which the model does not list in its opset imports", f.Node(), f[1]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.fix = fmt::format("Add the domain to the model's opset imports "
                         "(model.opset_import.append(onnx.helper.make_opsetid('{}', 1))) or export again.", f[1]);
   }},

  // ---- operators ONNX Runtime does not know or cannot run (load)
  {{"runtime.unknown-op", R"re(Fatal error: (?:([\w.]*):)?(\w+)\((-?\d+)\) is not a registered function/op)re"},
   {.op_type = 2},
   [](const Facts& f) {
     return fmt::format("operator {} of domain '{}' is not registered in this ONNX Runtime", f[2],
                        f[1].empty() ? "ai.onnx" : f[1]);
   },
   [](const Facts& f, Diagnosis& d) {
     if (f[1] == "com.microsoft") {
       d.cause = fmt::format("{} is not among this ONNX Runtime's contrib operators: the model was optimised for "
                             "another ONNX Runtime version (e.g. by onnxruntime.transformers).", f[2]);
       d.fix = "Run the model on the ONNX Runtime version it was optimised for, or optimise the original model again "
               "with this version's tools.";
     } else {
       d.fix = fmt::format("Register the library that implements the '{}' operators with the session "
                           "(SessionOptions.register_custom_ops_library), or export without them.", f[1]);
     }
   }},
  {{"runtime.unknown-op", R"re(No Op registered for (\w+) with domain_version of (\d+))re"}, {.op_type = 1},
   [](const Facts& f) {
     return fmt::format("{} uses {}, which does not exist at opset {} of its domain", f.Node(), f[1], f[2]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.cause = fmt::format("No operator {} is defined at opset {}: it was added in a later opset, its name is "
                           "misspelt, or it is a custom operator placed in the default domain.", f[1], f[2]);
     d.fix = fmt::format("Check the spelling and the opset that introduced {0} "
                         "(onnx.defs.get_schema('{0}').since_version); if it is newer than opset {1}, export with a "
                         "newer opset.", f[1], f[2]);
   }},
  {{"runtime.input-count",
    R"re(Node ?\(([^)]*)\)(?: with schema\(([\w.]*)::(\w+):(\d+)\))? )re"
    R"re(has (input|output) size (\d+) not in range \[min=(\d+), max=(\d+)\])re"},
   {.node = 1, .op_type = 3},
   [](const Facts& f) {
     const std::string allowed = f[7] == f[8] ? "exactly " + f[7] : f[7] + " to " + f[8];
     const std::string schema = f[4].empty() ? "its schema" : fmt::format("the {}-{} schema", f[3], f[4]);
     return fmt::format("{} has {} {}s; {} takes {}", f.Node(), f[6], f[5], schema, allowed);
   }},
  {{"runtime.not-implemented", R"re(Could not find an implementation for (\w+)\((\d+)\) node with name '([^']*)')re"},
   {.node = 3, .op_type = 1},
   [](const Facts& f) { return fmt::format("no {}kernel for {}-{} at {}", f.Provider(), f[1], f[2], f.Node()); },
   [](const Facts& f, Diagnosis& d) {
     if (ToNumber(f[2]).value_or(7) < 7) {
       // ONNX Runtime registers kernels from opset 7 on; an older version number usually means an
       // old opset import, though an operator unchanged since then would also print one.
       d.heuristic = true;
       d.cause = fmt::format("{}-{} is an operator version older than ONNX Runtime supports (opset 7 and newer): the "
                             "model imports an old opset.", f[1], f[2]);
       d.fix = "Convert the model with onnx.version_converter.convert_version(model, 17), or export again with a "
               "current opset.";
     } else {
       d.cause = fmt::format("The {}execution provider has no {}-{} kernel for the element types this node uses "
                             "(float64, int16 and unsigned variants are often missing).", f.Provider(), f[1], f[2]);
       d.fix = fmt::format("Cast the node's inputs to float32 (or another type that ONNX Runtime's OperatorKernels.md "
                           "lists for {}) in the export, or run on a provider that implements it.", f[1]);
     }
   }},
  // The CPU RNN, GRU and LSTM kernels refuse layout = 1 when the session is created, naming no node.
  {{"runtime.not-implemented", R"re(Batchwise recurrent operations \(layout == 1\) are not supported)re"}, {},
   [](const Facts& f) {
     return fmt::format("the {}RNN, GRU and LSTM kernels do not implement layout = 1 (batch-major inputs and outputs)",
                        f.Provider());
   },
   [](const Facts&, Diagnosis& d) {
     d.cause = "A recurrent node (RNN, GRU or LSTM) sets layout = 1, so its X, initial states and Y are [batch, seq, "
               "...]; ONNX Runtime implements layout 0 ([seq, batch, ...]) only.";
     d.fix = "Export with layout 0 (batch_first=False in torch.nn.LSTM/GRU/RNN, with the Transposes around the node), or "
             "transpose the node's inputs and outputs and set layout = 0.";
   }},

  // ---- types (load)
  {{"runtime.type-error",
    R"re(Type Error: Type \((.+?)\) of output arg \(([^)]*)\) of node \(([^)]*)\) )re"
    R"re(does not match expected type \((.+?)\)(?:\.|\s|$))re"},
   {.node = 3, .tensor = 2},
   [](const Facts& f) {
     return fmt::format("{} produces {} for '{}', but the model declares '{}' as {}", f.Node(), f[4], f[2], f[2], f[1]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.cause = fmt::format("The type declared for '{}' (in graph.output or value_info) differs from the type {} "
                           "computes from its inputs.", f[2], f.Node());
     if (IsDouble(f[1]) || IsDouble(f[4])) d.fix = std::string(kFloat64Fix);
     else d.fix = fmt::format("Declare '{}' as {} in the graph's outputs or value_info, or insert a Cast to {} after "
                              "{}.", f[2], f[4], f[1], f.Node());
   }},
  {{"runtime.type-error",
    R"re(Type Error: Type '(.+?)' of input parameter \(([^)]*)\) of operator \((\w+)\) )re"
    R"re(in node \(([^)]*)\) is invalid)re"},
   {.node = 4, .op_type = 3, .tensor = 2},
   [](const Facts& f) { return fmt::format("{} does not accept {} for its input '{}'", f.Node(), f[1], f[2]); },
   [](const Facts& f, Diagnosis& d) {
     d.cause = fmt::format("{} is outside the type constraints of {} at the model's opset.", f[1], f[3]);
     if (IsDouble(f[1])) d.fix = std::string(kFloat64Fix);
     else d.fix = fmt::format("Cast '{}' to a type {} accepts (see its type constraints; float32 suits most arithmetic "
                              "operators), or compute it in that type in the export.", f[2], f[3]);
   }},
  {{"runtime.type-error",
    // The types hold parentheses ("tensor(float)"), and 1.29 prints no ")" after the second one.
    R"re(Type Error: Type parameter \((\w+)\) of Optype \((\w+)\) bound to different types )re"
    R"re(\(((?:[^()]|\([^()]*\))+) and ((?:[^()]|\([^()]*\))+)\)? in node \(([^)]*)\))re"},
   {.node = 5, .op_type = 2},
   [](const Facts& f) {
     return fmt::format("{} mixes {} and {} for its type parameter {}, which must be one type", f.Node(), f[3], f[4],
                        f[1]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.cause = fmt::format("The inputs of {} bound to type parameter {} have different element types; ONNX operators "
                           "do not promote types.", f.Node(), f[1]);
     if (IsDouble(f[3]) || IsDouble(f[4])) d.fix = std::string(kFloat64Fix);
     else d.fix = fmt::format("Insert a Cast so that the inputs of {} share one type.", f.Node());
   }},

  // ---- the graph (load)
  {{"runtime.invalid-graph", R"re(Graph output \(([^)]*)\) does not exist in the graph)re"}, {.output = 1},
   [](const Facts& f) { return fmt::format("graph output '{}' is produced by no node", f[1]); },
   [](const Facts& f, Diagnosis& d) {
     d.cause = "The graph lists an output that no node writes: a node was removed or renamed after the export.";
     d.fix = fmt::format("Remove '{}' from graph.output, or restore the node that produces it.", f[1]);
   }},
  {{"runtime.invalid-graph",
    R"re(Node input '([^']*)' is not a graph input, initializer, or output of a previous node)re"}, {.tensor = 1},
   [](const Facts& f) {
     return fmt::format("'{}' is read by a node but is no graph input, initializer or output of an earlier node", f[1]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.cause = "A node reads a value that nothing produces: a broken or hand-edited graph (graph.undefined-value).";
     d.fix = fmt::format("Produce '{}' (as an input, initializer or node output before its reader) or remove the node "
                         "reading it.", f[1]);
   }},
  {{"runtime.invalid-graph", R"re(Duplicate definition of name \(([^)]*)\))re"}, {.tensor = 1},
   [](const Facts& f) { return fmt::format("'{}' is defined more than once", f[1]); },
   [](const Facts& f, Diagnosis& d) {
     d.cause = "ONNX graphs are single-assignment: two nodes, or a node and an input or initializer, write the same "
               "name.";
     d.fix = fmt::format("Rename one of the definitions of '{}'.", f[1]);
   }},
  {{"runtime.invalid-graph", R"re(the graph is not acyclic)re"}, {},
   [](const Facts&) { return std::string("the graph has a cycle"); },
   [](const Facts&, Diagnosis& d) {
     d.cause = "A node depends on its own output, directly or through others; ONNX graphs must be acyclic.";
     d.fix = "Break the cycle; recurrence belongs in the body of a Loop or Scan node.";
   }},
  {{"runtime.invalid-graph", R"re(ModelProto does not have a graph)re"}, {},
   [](const Facts&) { return std::string("the model has no graph"); },
   [](const Facts&, Diagnosis& d) {
     d.cause = "The file parsed as a ModelProto without a graph: an empty file, another protobuf message, or a failed "
               "export.";
     d.fix = "See the file layer's findings; export the model again.";
   }},
  {{"runtime.invalid-graph", R"re(Node \(([^)]*)\) Op \(([\w.]+)\) \[(Shape|Type)InferenceError\] (.*))re"},
   {.node = 1, .op_type = 2},
   [](const Facts& f) {
     return fmt::format("ONNX Runtime's {} inference fails at {}", f[3] == "Shape" ? "shape" : "type", f.Node());
   }},

  // ---- inputs fed to a run
  {{"runtime.invalid-input",
    R"re(Got invalid dimensions for input: (\S+) for the following indices (.*?)(?: Please fix|$))re"}, {.input = 1},
   [](const Facts& f) {
     bool fixed_batch = false;
     return fmt::format("input '{}' has the wrong shape: {}", f[1], DescribeBadDimensions(f[2], &fixed_batch));
   },
   [](const Facts& f, Diagnosis& d) {
     static const std::regex kFirstIndex(R"re(index: (\d+))re");
     std::smatch m;
     const std::string list = f[2];
     if (std::regex_search(list, m, kFirstIndex)) d.location.dimension = m[1];
     bool fixed_batch = false;
     DescribeBadDimensions(list, &fixed_batch);
     if (fixed_batch) {
       // Dimension 0 fixed at 1 is almost always a batch axis exported without dynamic_axes.
       d.heuristic = true;
       d.cause = "The model's batch dimension is fixed to 1: it was exported without dynamic axes "
                 "(graph.static-batch).";
       d.fix = fmt::format("Feed batches of 1, or export with a dynamic batch "
                           "(torch.onnx.export(..., dynamic_shapes={{'{0}': {{0: 'batch'}}}}), or dynamic_axes={{'{0}': {{0: 'batch'}}}} "
                           "with dynamo=False).", f[1]);
     } else {
       d.fix = fmt::format("Feed '{}' with the dimensions the model declares (see `ortkit inspect`), or export with "
                           "those axes dynamic.", f[1]);
     }
   }},
  {{"runtime.invalid-input", R"re(Invalid rank for input: (\S+) Got: (\d+) Expected: (\d+))re"}, {.input = 1},
   [](const Facts& f) {
     return fmt::format("input '{}' has rank {}, but the model expects rank {}", f[1], f[2], f[3]);
   }},
  {{"runtime.invalid-input", R"re(Unexpected input data type\. Actual: \((.+?)\) , expected: \((.+?)\)(?:\.|\s|$))re"},
   {},
   [](const Facts& f) { return fmt::format("an input is {}, but the model expects {}", f[1], f[2]); },
   [](const Facts& f, Diagnosis& d) {
     const std::string_view numpy = NumpyNameOf(f[2]);
     if (!numpy.empty()) d.fix = fmt::format("Convert the input to {0} (numpy: x.astype(np.{0})).", numpy);
   }},
  {{"runtime.invalid-input", R"re(Invalid input name: ?(\S+))re"}, {.input = 1},
   [](const Facts& f) { return fmt::format("the model has no input named '{}'", f[1]); }},
  {{"runtime.invalid-input", R"re(Missing Input: (\S+))re"}, {.input = 1},
   [](const Facts& f) { return fmt::format("input '{}' was not fed, and {} needs it", f[1], f.Node()); }},
  {{"runtime.invalid-input",
    R"re(indices element out of data bounds, idx=(-?\d+) must be within the inclusive range \[(-?\d+), ?(-?\d+)\])re"},
   {},
   [](const Facts& f) {
     return fmt::format("{} got index {}, outside the valid range [{}, {}]", f.Node(), f[1], f[2], f[3]);
   },
   [](const Facts& f, Diagnosis& d) {
     // A Gather into a position table (GPT-2's wpe, BERT's position_embeddings) fails for a sequence longer than
     // the table, whatever the ids are.
     if (NameHas(f.at.node, {"pos", "wpe"})) {
       d.cause = fmt::format("A position beyond the position-embedding table: the sequence is longer than the {} "
                             "positions the model was made for.",
                             RowsUpTo(f[3]));
       d.fix = fmt::format("Feed sequences of at most {} tokens (truncate, or split into windows), or use a model "
                           "with a longer position table (max_position_embeddings).",
                           RowsUpTo(f[3]));
       return;
     }
     d.cause = fmt::format(
         "An index is outside the table it reads: a token id beyond the vocabulary (ids from another tokenizer), "
         "a position beyond the position table (a sequence longer than the {} rows), or an input filled with "
         "the wrong values.",
         RowsUpTo(f[3]));
     d.fix = fmt::format("Check the values of the index input: they must lie in [{}, {}]; if the node reads a "
                         "position table, keep sequences at most {} long.",
                         f[2], f[3], RowsUpTo(f[3]));
   }},

  // ---- shapes meeting at a node during a run
  {{"runtime.shape-mismatch", R"re(Attempting to broadcast an axis by a dimension other than 1\. (\d+) by (\d+))re"},
   {},
   [](const Facts& f) {
     return fmt::format("{} cannot broadcast a dimension of size {} against size {}", f.Node(), f[1], f[2]);
   }},
  {{"runtime.shape-mismatch",
    R"re(The input tensor cannot be reshaped to the requested shape\. )re"
    R"re(Input shape: ?(\{[^}]*\}), requested shape: ?(\{[^}]*\}))re"}, {},
   [](const Facts& f) { return fmt::format("{} cannot reshape a tensor of shape {} to {}", f.Node(), f[1], f[2]); }},
  {{"runtime.shape-mismatch",
    R"re(Non concat axis dimensions must match: Axis (\d+) has mismatched dimensions of (\d+) and (\d+))re"},
   {.dimension = 1},
   [](const Facts& f) {
     return fmt::format("{} cannot concatenate inputs whose dimension {} differs ({} and {})", f.Node(), f[1], f[2],
                        f[3]);
   }},
  {{"runtime.shape-mismatch", R"re(invalid expand shape)re"}, {},
   [](const Facts& f) {
     return fmt::format("{} cannot expand its input to the shape it is given: a dimension is neither 1 nor the "
                        "target size",
                        f.Node());
   },
   [](const Facts&, Diagnosis& d) {
     d.cause = "The shape given to Expand does not broadcast with its input: usually a size that comes from a table "
               "or a length fixed at export (a position or mask table shorter than the sequence) meeting another "
               "length.";
     d.fix = "Find where the node's target shape comes from (`ortkit validate --localize`, or the graph in Netron); "
             "keep the dimension within the table's size, or export with that length dynamic.";
   }},
  {{"runtime.shape-mismatch", R"re(MatMul dimension mismatch)re"}, {},
   [](const Facts& f) {
     return fmt::format("{}: the inner dimensions of its two inputs differ (A[..., M, K] x B[..., K, N] needs equal K)",
                        f.Node());
   }},

  // ---- resources
  {{"runtime.out-of-memory", R"re(Failed to allocate memory for requested buffer of size (\d+))re"}, {},
   [](const Facts& f) {
     const auto bytes = ToNumber(f[1]);
     return bytes ? fmt::format("{} could not allocate {} ({} bytes)", f.Node(), HumanBytes(*bytes), f[1])
                  : fmt::format("{} could not allocate {} bytes", f.Node(), f[1]);
   },
   [](const Facts& f, Diagnosis& d) {
     constexpr std::uint64_t kNoMachineHolds = std::uint64_t{1} << 42;  // 4 TiB
     if (ToNumber(f[1]).value_or(kNoMachineHolds) < kNoMachineHolds) return;
     d.heuristic = true;
     d.cause = "No machine holds a buffer this large: the size comes from a shape computed from input values "
               "(ConstantOfShape, Expand, Tile, Range) or from a wrong dimension, not from a batch that is merely too "
               "big.";
     d.fix = fmt::format("Check the values that feed the shape of {}; an index or length input filled with the wrong "
                         "values is the usual source.", f.Node());
   }},
  {{"runtime.provider-unavailable",
    R"re(execution provider '([\w-]+)' \((\w+)\) is not available in this ONNX Runtime build)re"}, {},
   [](const Facts& f) {
     return fmt::format("the {} execution provider ({}) is not in this ONNX Runtime build", f[1], f[2]);
   }},
  {{"runtime.provider-unavailable", R"re((\w+) execution provider is not (?:enabled|supported) in this build)re"}, {},
   [](const Facts& f) { return fmt::format("the {} execution provider is not in this ONNX Runtime build", f[1]); }},
  {{"runtime.provider-unavailable", R"re(Unknown provider name '([^']*)')re"}, {},
   [](const Facts& f) { return fmt::format("ONNX Runtime knows no execution provider named '{}'", f[1]); },
   [](const Facts&, Diagnosis& d) {
     d.cause = "The provider name is misspelt, or belongs to another ONNX Runtime version.";
     d.fix = "Use one of the names the message lists, spelt as it spells them.";
   }},
  // A GPU build on a machine without the CUDA libraries it links against (ONNX Runtime 1.29: "Failed to load
  // library .../libonnxruntime_providers_cuda.so with error: libcublasLt.so.13: cannot open shared object file").
  {{"env.cuda-library-missing",
    R"re(Failed to load library (\S*?)([^/\s]+) with error: (\S+): cannot open shared object file)re"}, {},
   [](const Facts& f) {
     return fmt::format("{} needs {}, which the dynamic loader cannot find", f[2], f[3]);
   },
   [](const Facts& f, Diagnosis& d) {
     d.fix = fmt::format("Install the library of that major version ({}) and put its folder on LD_LIBRARY_PATH (for "
                         "CUDA 13: pip install 'onnxruntime-gpu[cuda,cudnn]', or NVIDIA's CUDA and cuDNN packages); "
                         "`ortkit env --provider cuda` lists every library the build needs and where it looked.",
                         f[3]);
   }},
  {{"runtime.provider-unavailable", R"re((\w*): Failed to load shared library)re"}, {},
   [](const Facts& f) { return fmt::format("the execution provider's shared library could not be loaded ({})", f[1]); },
   [](const Facts&, Diagnosis& d) {
     d.cause = "The provider's library (e.g. libonnxruntime_providers_cuda.so) is not next to libonnxruntime.so, or a "
               "library it needs (CUDA, cuDNN, TensorRT) is missing or of the wrong version.";
   }},

  // ---- the generic verdict, when nothing above names the problem
  {{"runtime.invalid-graph", R"re(This is an invalid model|^Invalid model)re"}, {},
   [](const Facts& f) {
     return f.at.node.empty() && f.at.op_type.empty() ? std::string("ONNX Runtime rejects the graph")
                                                      : "ONNX Runtime rejects " + f.Node();
   }},
});
// clang-format on

const std::vector<std::regex>& CompiledPatterns() {
  static const std::vector<std::regex> compiled = [] {
    std::vector<std::regex> out;
    for (const auto& entry : kEntries) out.emplace_back(entry.known.pattern.begin(), entry.known.pattern.end());
    return out;
  }();
  return compiled;
}

struct Matched {
  const Entry* entry = nullptr;
  std::smatch match;
};

Matched Match(const std::string& text) {
  Matched out;
  const auto& patterns = CompiledPatterns();
  for (std::size_t i = 0; i < kEntries.size(); ++i) {
    if (std::regex_search(text, out.match, patterns[i])) {
      out.entry = &kEntries[i];
      return out;
    }
  }
  return out;
}

void Fill(std::string& field, const std::smatch& match, int group) {
  if (group > 0 && match[group].matched && match[group].length() > 0) field = match[group].str();
}

}  // namespace

std::span<const KnownRuntimeMessage> KnownRuntimeMessages() {
  static const std::vector<KnownRuntimeMessage> known = [] {
    std::vector<KnownRuntimeMessage> out;
    for (const auto& entry : kEntries) out.push_back(entry.known);
    return out;
  }();
  return known;
}

std::optional<std::size_t> MatchKnownRuntimeMessage(std::string_view message) {
  const Unwrapped unwrapped = Unwrap(message);
  const Matched matched = Match(unwrapped.text);
  if (matched.entry == nullptr) return std::nullopt;
  return static_cast<std::size_t>(matched.entry - kEntries.data());
}

Diagnosis TranslateRuntimeError(std::string_view message, const Location& context, bool during_run) {
  const Unwrapped unwrapped = Unwrap(message);
  Location at = context;
  if (at.file.empty()) at.file = unwrapped.file;
  if (!unwrapped.node.empty()) at.node = unwrapped.node;
  if (!unwrapped.op_type.empty()) at.op_type = unwrapped.op_type;
  const std::string words = unwrapped.text.empty() ? std::string("ONNX Runtime gave no message") : unwrapped.text;

  const Matched matched = Match(unwrapped.text);
  if (matched.entry == nullptr) {
    const Facts facts{matched.match, unwrapped, at};
    std::string text = at.node.empty() && at.op_type.empty() ? words : facts.Node() + " failed: " + words;
    return Diagnose(during_run ? "runtime.run-failed" : "runtime.load-failed", std::move(text), std::move(at));
  }
  const Entry& entry = *matched.entry;
  const std::smatch& m = matched.match;
  Fill(at.node, m, entry.groups.node);
  Fill(at.op_type, m, entry.groups.op_type);
  Fill(at.input, m, entry.groups.input);
  Fill(at.output, m, entry.groups.output);
  Fill(at.tensor, m, entry.groups.tensor);
  Fill(at.dimension, m, entry.groups.dimension);
  const Facts facts{m, unwrapped, at};
  Diagnosis d = Diagnose(entry.known.code, entry.describe(facts) + "; ONNX Runtime says: " + words, at);
  if (entry.specialise != nullptr) entry.specialise(facts, d);
  return d;
}

Diagnosis TranslateSessionError(const Error& error, const Location& context) {
  const bool configuring = error.kind == ErrorKind::kUnavailable || error.kind == ErrorKind::kInvalidArgument;
  if (configuring && !MatchKnownRuntimeMessage(error.message)) {
    return Diagnose("runtime.provider-unavailable", error.message, context);
  }
  return TranslateRuntimeError(error.message, context);
}

}  // namespace ortkit
