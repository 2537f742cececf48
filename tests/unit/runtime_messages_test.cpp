// TranslateRuntimeError against the messages ONNX Runtime 1.29 really produces: every case builds
// a model, loads it (and runs it, for run-time messages) with a real session, and checks the
// diagnosis. Each case also names a near-miss that must load and run cleanly, where one exists.

#include "ortkit/diagnose/runtime_messages.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include <gtest/gtest.h>

#include <onnxruntime_cxx_api.h>

#include "ortkit/runtime/runtime.h"
#include "test_models.h"

namespace ortkit {
namespace {

Runtime& TestRuntime() {
  static const std::unique_ptr<Runtime> runtime = [] {
    auto created = Runtime::Create();
    if (!created.ok()) std::abort();  // no runtime: nothing below can run
    return std::move(created).value();
  }();
  return *runtime;
}

bool ProviderAvailable(std::string_view ort_name) {
  const auto available = Runtime::AvailableProviders();
  return std::find(available.begin(), available.end(), ort_name) != available.end();
}

/// ONNX text, with node i named names[i] (ONNX 1.12's parser has no syntax for node names).
onnx::ModelProto Model(std::string_view text, const std::vector<std::string>& names = {}) {
  onnx::ModelProto model = testing::ParseModelText(text);
  for (std::size_t i = 0; i < names.size() && static_cast<int>(i) < model.graph().node_size(); ++i) {
    model.mutable_graph()->mutable_node(static_cast<int>(i))->set_name(names[i]);
  }
  return model;
}

/// Loads DIR/model/model.onnx, whose initializer w (4 floats) is external data at `location`: the
/// runtime's message, or "" when it loads.
std::string LoadWithExternalWeight(testing::TempDir& dir, const std::string& location) {
  onnx::ModelProto model =
      Model(R"(<ir_version: 8, opset_import: ["" : 17]> g (float[4] x) => (float[4] y) { y = Add(x, w) })");
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"location", location}, {"length", "16"}}) {
    auto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  auto session = Session::Create(TestRuntime(), dir.WriteModel("model/model.onnx", model), SessionConfig{});
  return session.ok() ? "" : session.error().message;
}

NamedBuffer Floats(std::string name, std::vector<std::int64_t> shape) {
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  return {std::move(name), std::move(shape), std::vector<float>(static_cast<std::size_t>(count), 1.0f)};
}

NamedBuffer Ints(std::string name, std::vector<std::int64_t> shape, std::vector<std::int64_t> values) {
  return {std::move(name), std::move(shape), std::move(values)};
}

/// The runtime's message for loading `bytes` from a file; "" when it loads.
std::string LoadFileError(std::string_view bytes, const SessionConfig& config = {}) {
  testing::TempDir dir;
  auto session = Session::Create(TestRuntime(), dir.Write("model.onnx", bytes), config);
  return session.ok() ? "" : session.error().message;
}

/// The runtime's message for loading `model` and, when `feed` is set, running it once; "" when both succeed.
std::string LoadAndRunError(const onnx::ModelProto& model, const std::optional<std::vector<NamedBuffer>>& feed) {
  testing::TempDir dir;
  auto session = Session::Create(TestRuntime(), dir.WriteModel("model.onnx", model), SessionConfig{});
  if (!session.ok()) return session.error().message;
  if (!feed) return "";
  Status run = RunOnce(**session, *feed);
  return run.ok() ? "" : run.error().message;
}

/// The message of the Ort::Exception that `configure` throws; "" when it throws none.
std::string OrtOptionsError(const std::function<void(Ort::SessionOptions&)>& configure) {
  TestRuntime();  // without an environment, ONNX Runtime fails for want of a logger before it looks at providers
  try {
    Ort::SessionOptions options;
    configure(options);
    return "";
  } catch (const Ort::Exception& e) {
    return e.what();
  }
}

struct Case {
  std::string name;
  /// Produces the runtime's message; nullopt when this build cannot (e.g. it has the provider).
  std::function<std::optional<std::string>()> produce;
  /// Loads (and runs) a similar, healthy model: must give no message. Null: no near-miss exists.
  std::function<std::string()> near_miss;
  bool during_run = false;
  std::string code;
  Location where;  ///< expected location, every field but file compared exactly
  std::vector<std::string> message_has;
  std::string fix_has;
};

using Feed = std::vector<NamedBuffer>;

/// A case whose message comes from loading `text` (and running it on `feed`), with a near-miss
/// that changes the model (`healthy_text`) or the feed (`healthy_feed`).
Case Make(std::string name, std::string text, std::vector<std::string> names, std::optional<Feed> feed,
          std::optional<std::string> healthy_text, std::optional<Feed> healthy_feed) {
  Case c;
  c.name = std::move(name);
  c.during_run = feed.has_value();
  c.produce = [=]() -> std::optional<std::string> { return LoadAndRunError(Model(text, names), feed); };
  if (healthy_text || healthy_feed) {
    c.near_miss = [=] {
      return LoadAndRunError(Model(healthy_text.value_or(text), names), healthy_feed ? healthy_feed : feed);
    };
  }
  return c;
}

Case Load(std::string name, std::string text, std::vector<std::string> names, std::optional<std::string> healthy_text) {
  return Make(std::move(name), std::move(text), std::move(names), std::nullopt, std::move(healthy_text), std::nullopt);
}

Case Run(std::string name, std::string text, std::vector<std::string> names, Feed feed, Feed healthy_feed) {
  return Make(std::move(name), std::move(text), std::move(names), std::move(feed), std::nullopt,
              std::move(healthy_feed));
}

Case With(Case c, std::string code, Location where, std::vector<std::string> message_has, std::string fix_has = "") {
  c.code = std::move(code);
  c.where = std::move(where);
  c.message_has = std::move(message_has);
  c.fix_has = std::move(fix_has);
  return c;
}

Location At(std::string node, std::string op_type) {
  Location l;
  l.node = std::move(node);
  l.op_type = std::move(op_type);
  return l;
}
Location Input(std::string input, std::string node = "", std::string op_type = "") {
  Location l = At(std::move(node), std::move(op_type));
  l.input = std::move(input);
  return l;
}
Location Tensor(std::string tensor, std::string node = "", std::string op_type = "") {
  Location l = At(std::move(node), std::move(op_type));
  l.tensor = std::move(tensor);
  return l;
}

// Models shared with the fixtures that tests/e2e/check_runtime_errors.sh checks.
constexpr const char* kErfDouble =
    R"(<ir_version: 8, opset_import: ["" : 17]> g (double[N] x) => (double[N] y) { y = Erf(x) })";
constexpr const char* kIrVersion99 =
    R"(<ir_version: 99, opset_import: ["" : 17]> g (float[N] x) => (float[N] y) { y = Relu(x) })";
constexpr const char* kRelu =
    R"(<ir_version: 8, opset_import: ["" : 17]> g (float[N] x) => (float[N] y) { y = Relu(x) })";
constexpr const char* kMicrosoftGelu =
    R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]> g (float[N] x) => (float[N] y) { y = com.microsoft.Gelu(x) })";
constexpr const char* kOpset30 =
    R"(<ir_version: 10, opset_import: ["" : 30]> g (float[N] x) => (float[N] y) { y = Relu(x) })";

std::vector<Case> Cases() {
  const std::string v17 = R"(<ir_version: 8, opset_import: ["" : 17]> )";
  std::vector<Case> cases;
  auto add = [&](Case c) { cases.push_back(std::move(c)); };

  // ---- load: the file and its versions
  {
    Case c;
    c.name = "protobuf_parse_failed_file";
    c.produce = [] { return LoadFileError("this is not a model at all \x01\x02\xff\xff\xff"); };
    c.near_miss = [] { return LoadFileError(Model(kRelu).SerializeAsString()); };
    add(With(c, "runtime.protobuf-parse-failed", {}, {"cannot parse", "Protobuf parsing failed"}));
  }
  {
    Case c;
    c.name = "protobuf_parse_failed_bytes";
    c.produce = []() -> std::optional<std::string> {
      auto session = Session::CreateFromBytes(TestRuntime(), "not a model \xff\xff", SessionConfig{});
      return session.ok() ? "" : session.error().message;
    };
    c.near_miss = [] {
      auto session = Session::CreateFromBytes(TestRuntime(), Model(kRelu).SerializeAsString(), SessionConfig{});
      return session.ok() ? "" : session.error().message;
    };
    add(With(c, "runtime.protobuf-parse-failed", {}, {"protobuf parsing failed"}));
  }
  add(With(
      Load("unsupported_ir_version", kIrVersion99, {"relu_1"}, v17 + "g (float[N] x) => (float[N] y) { y = Relu(x) }"),
      "runtime.unsupported-ir-version", {}, {"IR version 99", "up to 13", "Unsupported model IR version: 99"},
      "model.ir_version = 13"));
  add(With(Load("opset_too_new", kOpset30, {"relu_1"},
                R"(<ir_version: 10, opset_import: ["" : 26]> g (float[N] x) => (float[N] y) { y = Relu(x) })"),
           "graph.opset-too-new", {}, {"opset 30 of domain ai.onnx", "up to opset 26"}, "opset_version=26"));
  // No near-miss: importing com.foo turns this into runtime.unknown-op, and ONNX Runtime imports
  // its own domains (com.microsoft) implicitly.
  add(With(Load("missing_opset_import", v17 + "g (float[N] x) => (float[N] y) { y = com.foo.Bar(x) }", {"bar_1"},
                std::nullopt),
           "runtime.missing-opset-import", At("bar_1", "Bar"),
           {"domain 'com.foo'", "No opset import for domain 'com.foo'"}, "make_opsetid('com.foo', 1)"));

  // ---- load: operators
  add(With(
      Load(
          "unknown_custom_op",
          R"(<ir_version: 8, opset_import: ["" : 17, "com.foo" : 1]> g (float[N] x) => (float[N] y) { y = com.foo.Bar(x) })",
          {"bar_1"}, kMicrosoftGelu),
      "runtime.unknown-op", At("", "Bar"), {"operator Bar of domain 'com.foo'", "is not a registered function/op"},
      "register_custom_ops_library"));
  add(With(Load("unknown_op_at_opset",
                R"(<ir_version: 8, opset_import: ["" : 9]> g (float[N] x) => (float[N] y) { y = Gelu(x) })", {"gelu_1"},
                R"(<ir_version: 9, opset_import: ["" : 20]> g (float[N] x) => (float[N] y) { y = Gelu(x) })"),
           "runtime.unknown-op", At("gelu_1", "Gelu"), {"does not exist at opset 9", "No Op registered for Gelu"},
           "export with a newer opset"));
  add(With(Load("input_count", v17 + "g (float[N] x) => (float[N] y) { y = Relu(x, x) }", {"relu_1"},
                v17 + "g (float[N] x) => (float[N] y) { y = Relu(x) }"),
           "runtime.input-count", At("relu_1", "Relu"), {"has 2 inputs; the Relu-14 schema takes exactly 1"}));
  add(With(Load("output_count", v17 + "g (float[N] x) => (float[N] y, float[N] z) { y, z = Relu(x) }", {"relu_1"},
                v17 + "g (float[N] x) => (float[N] y, float[N] z) { y = Relu(x) z = Relu(x) }"),
           "runtime.input-count", At("relu_1", "Relu"), {"has 2 outputs; the Relu-14 schema takes exactly 1"}));
  add(With(Load("not_implemented", kErfDouble, {"erf_1"}, v17 + "g (float[N] x) => (float[N] y) { y = Erf(x) }"),
           "runtime.not-implemented", At("erf_1", "Erf"),
           {"no CPU kernel for Erf-13 at node 'erf_1'", "Could not find an implementation for Erf(13)"}, "float32"));
  add(With(Load("not_implemented_old_opset",
                R"(<ir_version: 3, opset_import: ["" : 3]> g (float[N] x) => (float[N] y) { y = Relu(x) })", {"relu_1"},
                R"(<ir_version: 3, opset_import: ["" : 7]> g (float[N] x) => (float[N] y) { y = Relu(x) })"),
           "runtime.not-implemented", At("relu_1", "Relu"), {"no CPU kernel for Relu-1"}, "convert_version"));
  add(With(Load("not_implemented_batchwise_rnn",
                v17 + "g (float[2,3,5] x, float[1,4,5] w, float[1,4,4] r) => (float[2,3,1,4] y) "
                      "{ y = RNN <hidden_size = 4, layout = 1> (x, w, r) }",
                {"rnn_1"},
                v17 + "g (float[3,2,5] x, float[1,4,5] w, float[1,4,4] r) => (float[3,1,2,4] y) "
                      "{ y = RNN <hidden_size = 4> (x, w, r) }"),
           "runtime.not-implemented", {}, {"do not implement layout = 1", "Batchwise recurrent operations"},
           "batch_first=False"));

  // ---- load: types
  add(With(Load("type_error_output", v17 + "g (double[N] x) => (float[N] y) { y = Relu(x) }", {"relu_1"},
                v17 + "g (double[N] x) => (double[N] y) { y = Relu(x) }"),
           "runtime.type-error", Tensor("y", "relu_1"),
           {"produces tensor(double) for 'y', but the model declares 'y' as tensor(float)"}, "float32"));
  add(With(Load("type_error_input", v17 + "g (uint8[N] x) => (uint8[N] y) { y = Relu(x) }", {"relu_1"},
                v17 + "g (int8[N] x) => (int8[N] y) { y = Relu(x) }"),
           "runtime.type-error", Tensor("x", "relu_1", "Relu"), {"does not accept tensor(uint8) for its input 'x'"},
           "Cast 'x' to a type Relu accepts"));
  add(With(Load("type_error_mixed", v17 + "g (float[N] x, double[N] z) => (float[N] y) { y = Add(x, z) }", {"add_1"},
                v17 + "g (float[N] x, float[N] z) => (float[N] y) { y = Add(x, z) }"),
           "runtime.type-error", At("add_1", "Add"),
           {"mixes tensor(float) and tensor(double) for its type parameter T"}, "float32"));

  // ---- load: the graph
  add(With(Load("graph_output_missing", v17 + "g (float[N] x) => (float[N] y) { z = Relu(x) }", {"relu_1"},
                v17 + "g (float[N] x) => (float[N] y) { y = Relu(x) }"),
           "runtime.invalid-graph",
           [] {
             Location l;
             l.output = "y";
             return l;
           }(),
           {"graph output 'y' is produced by no node"}));
  add(With(Load("undefined_value", v17 + "g (float[N] x) => (float[N] y) { y = Relu(q) }", {"relu_1"},
                v17 + "g (float[N] x) => (float[N] y) { y = Relu(x) }"),
           "runtime.invalid-graph", Tensor("q"), {"'q' is read by a node"}));
  add(With(Load("duplicate_name", v17 + "g (float[N] x) => (float[N] y) { y = Relu(x) y = Relu(x) }",
                {"relu_1", "relu_2"}, v17 + "g (float[N] x) => (float[N] y) { z = Relu(x) y = Relu(z) }"),
           "runtime.invalid-graph", Tensor("y"), {"'y' is defined more than once"}));
  add(With(Load("cycle", v17 + "g (float[N] x) => (float[N] y) { a = Add(x, b) b = Relu(a) y = Relu(b) }", {},
                v17 + "g (float[N] x) => (float[N] y) { a = Add(x, x) b = Relu(a) y = Relu(b) }"),
           "runtime.invalid-graph", {}, {"the graph has a cycle"}));
  {
    Case c;
    c.name = "no_graph";
    c.produce = [] { return LoadFileError(""); };
    c.near_miss = [] { return LoadFileError(Model(kRelu).SerializeAsString()); };
    add(With(c, "runtime.invalid-graph", {}, {"the model has no graph"}));
  }
  add(With(Load("shape_inference_error", v17 + "g (float[N, 4] x) => (float[N, 4] y) { y = Softmax<axis = 5>(x) }",
                {"softmax_1"}, v17 + "g (float[N, 4] x) => (float[N, 4] y) { y = Softmax<axis = 1>(x) }"),
           "runtime.invalid-graph", At("softmax_1", "Softmax"),
           {"shape inference fails at node 'softmax_1' (Softmax)", "'axis' must be in [-2 , 1]"}));
  add(With(Load("invalid_model", v17 + "g (float[N] x) => (float[N] y) { y = Cast(x) }", {"cast_1"},
                v17 + "g (float[N] x) => (float[N] y) { y = Cast<to = 1>(x) }"),
           "runtime.invalid-graph", At("cast_1", "Cast"),
           {"ONNX Runtime rejects node 'cast_1' (Cast)", "Required attribute 'to' is missing"}));

  // ---- run: inputs
  const std::string relu_1x4 = v17 + "g (float[1, 4] x) => (float[1, 4] y) { y = Relu(x) }";
  add(With(
      Run("invalid_dimensions", relu_1x4, {"relu_1"}, {Floats("x", {3, 4})}, {Floats("x", {1, 4})}),
      "runtime.invalid-input",
      [] {
        Location l;
        l.input = "x";
        l.dimension = "0";
        return l;
      }(),
      {"input 'x' has the wrong shape: dimension 0 is 3 where the model expects 1"}, "dynamic_axes"));
  const std::string relu_nx4 = v17 + "g (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) }";
  add(With(Run("invalid_rank", relu_nx4, {"relu_1"}, {Floats("x", {2})}, {Floats("x", {2, 4})}),
           "runtime.invalid-input", Input("x"), {"input 'x' has rank 1, but the model expects rank 2"}));
  add(With(Run("invalid_type", relu_nx4, {"relu_1"}, {Ints("x", {1, 4}, {1, 2, 3, 4})}, {Floats("x", {1, 4})}),
           "runtime.invalid-input", {}, {"an input is tensor(int64), but the model expects tensor(float)"},
           "astype(np.float32)"));
  add(With(Run("invalid_name", relu_nx4, {"relu_1"}, {Floats("xx", {1, 4})}, {Floats("x", {1, 4})}),
           "runtime.invalid-input", Input("xx"), {"the model has no input named 'xx'"}));
  const std::string add_n = v17 + "g (float[N] x, float[M] z) => (float[K] y) { y = Add(x, z) }";
  add(With(Run("missing_input", add_n, {"add_1"}, {Floats("x", {3})}, {Floats("x", {3}), Floats("z", {3})}),
           "runtime.invalid-input", Input("z", "add_1", "Add"), {"input 'z' was not fed"}));
  add(With(
      Run("index_out_of_range", v17 + "g (float[3, 4] x, int64[N] i) => (float[N, 4] y) { y = Gather(x, i) }",
          {"gather_1"}, {Floats("x", {3, 4}), Ints("i", {2}, {1, 7})}, {Floats("x", {3, 4}), Ints("i", {2}, {1, 2})}),
      "runtime.invalid-input", At("gather_1", "Gather"), {"got index 7, outside the valid range [-3, 2]"}));

  // ---- run: shapes
  add(With(Run("expand", v17 + "g (float[N] x, int64[2] s) => (float[A, B] y) { y = Expand(x, s) }", {"expand_1"},
               {Floats("x", {3}), Ints("s", {2}, {2, 4})}, {Floats("x", {3}), Ints("s", {2}, {2, 3})}),
           "runtime.shape-mismatch", At("expand_1", "Expand"), {"node 'expand_1' (Expand) cannot expand its input"}));
  add(With(
      Run("broadcast", add_n, {"add_1"}, {Floats("x", {3}), Floats("z", {4})}, {Floats("x", {3}), Floats("z", {3})}),
      "runtime.shape-mismatch", At("add_1", "Add"), {"cannot broadcast a dimension of size 3 against size 4"}));
  add(With(Run("reshape", v17 + "g (float[N] x, int64[2] s) => (float[A, B] y) { y = Reshape(x, s) }", {"reshape_1"},
               {Floats("x", {6}), Ints("s", {2}, {4, 2})}, {Floats("x", {6}), Ints("s", {2}, {3, 2})}),
           "runtime.shape-mismatch", At("reshape_1", "Reshape"), {"cannot reshape a tensor of shape {6} to {4,2}"}));
  add(With(Run("concat", v17 + "g (float[N, M] x, float[A, B] z) => (float[K, L] y) { y = Concat<axis = 0>(x, z) }",
               {"concat_1"}, {Floats("x", {1, 2}), Floats("z", {1, 3})}, {Floats("x", {1, 2}), Floats("z", {4, 2})}),
           "runtime.shape-mismatch",
           [] {
             Location l = At("concat_1", "Concat");
             l.dimension = "1";
             return l;
           }(),
           {"dimension 1 differs (3 and 2)"}));
  add(With(Run("matmul", v17 + "g (float[N, K] x, float[L, M] z) => (float[N, M] y) { y = MatMul(x, z) }", {"matmul_1"},
               {Floats("x", {2, 3}), Floats("z", {4, 5})}, {Floats("x", {2, 3}), Floats("z", {3, 5})}),
           "runtime.shape-mismatch", At("matmul_1", "MatMul"), {"node 'matmul_1' (MatMul): the inner dimensions"}));

  // ---- run: resources. 2^50 floats is more than any address space holds, so the allocation
  // fails at once whatever the machine's overcommit policy.
  add(With(Run("out_of_memory", v17 + "g (int64[1] s) => (float[N] y) { y = ConstantOfShape(s) }", {"big"},
               {Ints("s", {1}, {std::int64_t{1} << 50})}, {Ints("s", {1}, {4})}),
           "runtime.out-of-memory", At("big", "ConstantOfShape"),
           {"could not allocate 4096.0 TiB (4503599627370496 bytes)"}, "values that feed the shape of node 'big'"));

  // ---- load: external data outside the model's folder (ONNX Runtime 1.29 checks every path)
  for (const bool absolute : {true, false}) {
    Case c;
    c.name = absolute ? "external_data_absolute" : "external_data_escapes";
    // w's 16 bytes live at `location`: inside the model's folder for the near miss, outside otherwise.
    auto load = [](bool inside, bool absolute) -> std::optional<std::string> {
      testing::TempDir dir;
      const auto weights = dir.Write(inside ? "model/w.bin" : "w.bin", std::string(16, '\0'));
      return LoadWithExternalWeight(dir, inside ? "w.bin" : absolute ? weights.string() : "../w.bin");
    };
    c.produce = [=] { return load(false, absolute); };
    c.near_miss = [=] { return load(true, absolute).value_or(""); };
    add(With(c, "external-data.path-escapes", Tensor("w"),
             {absolute ? "its external data location is an absolute path" : "resolves to", "ONNX Runtime refuses"}));
  }

  // ---- load: external data that did not travel with the model (PyTorch 2.x writes MODEL.onnx.data by default)
  {
    Case c;
    c.name = "external_data_left_behind";
    auto load = [](bool copied) -> std::optional<std::string> {
      testing::TempDir dir;
      if (copied) dir.Write("model/model.onnx.data", std::string(16, '\0'));
      return LoadWithExternalWeight(dir, "model.onnx.data");
    };
    c.produce = [=] { return load(false); };
    c.near_miss = [=] { return load(true).value_or(""); };
    add(With(c, "external-data.missing-file", Tensor("w"), {"cannot find the external data of initializer 'w'"}));
  }

  // ---- providers
  {
    Case c;
    c.name = "provider_not_in_build_ortkit";
    c.produce = []() -> std::optional<std::string> {
      if (ProviderAvailable("CUDAExecutionProvider")) return std::nullopt;
      SessionConfig config;
      config.provider = "cuda";
      return LoadFileError(Model(kRelu).SerializeAsString(), config);
    };
    c.near_miss = [] { return LoadFileError(Model(kRelu).SerializeAsString(), SessionConfig{}); };
    add(With(c, "runtime.provider-unavailable", {},
             {"the cuda execution provider (CUDAExecutionProvider) is not in this"}));
  }
  {
    Case c;
    c.name = "provider_not_enabled";
    c.produce = []() -> std::optional<std::string> {
      if (ProviderAvailable("CUDAExecutionProvider")) return std::nullopt;
      return OrtOptionsError([](Ort::SessionOptions& options) {
        OrtCUDAProviderOptionsV2* cuda = nullptr;
        Ort::ThrowOnError(Ort::GetApi().CreateCUDAProviderOptions(&cuda));
        std::unique_ptr<OrtCUDAProviderOptionsV2, decltype(Ort::GetApi().ReleaseCUDAProviderOptions)> holder(
            cuda, Ort::GetApi().ReleaseCUDAProviderOptions);
        options.AppendExecutionProvider_CUDA_V2(*cuda);
      });
    };
    add(With(c, "runtime.provider-unavailable", {}, {"the CUDA execution provider is not in this ONNX Runtime build"}));
  }
  {
    Case c;
    c.name = "provider_not_supported";
    c.produce = []() -> std::optional<std::string> {
      if (ProviderAvailable("XnnpackExecutionProvider")) return std::nullopt;
      return OrtOptionsError([](Ort::SessionOptions& options) { options.AppendExecutionProvider("XNNPACK", {}); });
    };
    add(With(c, "runtime.provider-unavailable", {},
             {"the XNNPACK execution provider is not in this ONNX Runtime build"}));
  }
  {
    Case c;
    c.name = "provider_unknown";
    c.produce = [] {
      return OrtOptionsError([](Ort::SessionOptions& options) { options.AppendExecutionProvider("NoSuch", {}); });
    };
    c.near_miss = [] {
      return OrtOptionsError([](Ort::SessionOptions& options) { options.AppendExecutionProvider("CPU", {}); });
    };
    add(With(c, "runtime.provider-unavailable", {}, {"no execution provider named 'NoSuch'"}));
  }
  {
    Case c;
    c.name = "provider_library_missing";
    c.produce = []() -> std::optional<std::string> {
      if (ProviderAvailable("CUDAExecutionProvider")) return std::nullopt;
      return OrtOptionsError(
          [](Ort::SessionOptions& options) { options.AppendExecutionProvider_CUDA(OrtCUDAProviderOptions{}); });
    };
    add(With(c, "runtime.provider-unavailable", {}, {"shared library could not be loaded"}));
  }
  {
    // A GPU build without its CUDA libraries (the tests run on one with LD_LIBRARY_PATH pointing at
    // .deps/onnxruntime-gpu-1.29.0/lib: tests/e2e/env.sh). ONNX Runtime says only "Failed to load shared
    // library"; ortkit's runtime asks the loader which library is missing.
    Case c;
    c.name = "cuda_library_missing";
    c.produce = []() -> std::optional<std::string> {
      if (!ProviderAvailable("CUDAExecutionProvider")) return std::nullopt;
      SessionConfig config;
      config.provider = "cuda";
      testing::TempDir dir;
      const auto model = testing::ParseModelText(
          R"(<ir_version: 8, opset_import: ["" : 17]> g (float[N] x) => (float[N] y) { y = Relu(x) })");
      auto session = Session::Create(TestRuntime(), dir.WriteModel("model.onnx", model), config);
      if (session.ok()) return std::nullopt;  // CUDA works here
      return session.error().message;
    };
    add(With(c, "env.cuda-library-missing", {}, {"which the dynamic loader cannot find"}));
  }
  return cases;
}

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class RuntimeMessageTest : public ::testing::TestWithParam<Case> {};

TEST_P(RuntimeMessageTest, TranslatesTheRealMessage) {
  const Case& c = GetParam();
  const std::optional<std::string> message = c.produce();
  if (!message) GTEST_SKIP() << "this ONNX Runtime build cannot produce the message";
  ASSERT_FALSE(message->empty()) << "the runtime accepted the model";
  Location context;
  context.file = "model.onnx";
  const Diagnosis d = TranslateRuntimeError(*message, context, c.during_run);
  SCOPED_TRACE("runtime said: " + *message + "\ndiagnosis: " + d.message);
  EXPECT_EQ(d.code, c.code);
  EXPECT_EQ(d.location.file, "model.onnx");
  EXPECT_EQ(d.location.node, c.where.node);
  EXPECT_EQ(d.location.op_type, c.where.op_type);
  EXPECT_EQ(d.location.input, c.where.input);
  EXPECT_EQ(d.location.output, c.where.output);
  EXPECT_EQ(d.location.tensor, c.where.tensor);
  EXPECT_EQ(d.location.dimension, c.where.dimension);
  for (const auto& part : c.message_has) EXPECT_NE(d.message.find(part), std::string::npos) << "missing: " << part;
  if (!c.fix_has.empty()) {
    EXPECT_NE(d.fix.find(c.fix_has), std::string::npos) << d.fix;
  }
  // The runtime's words stay, its plumbing goes.
  for (const char* noise : {"onnxruntime_src", ".cc:", ".h:", " was false.", "[ONNXRuntimeError]",
                            "Non-zero status code", "In Node, (", "loading '", "Load model from"}) {
    EXPECT_EQ(d.message.find(noise), std::string::npos) << "noise left: " << noise;
  }
}

TEST_P(RuntimeMessageTest, SimilarHealthyModelLoadsAndRuns) {
  const Case& c = GetParam();
  if (!c.near_miss) GTEST_SKIP() << "no near-miss for this message";
  EXPECT_EQ(c.near_miss(), "");
}

INSTANTIATE_TEST_SUITE_P(Ort129, RuntimeMessageTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(RuntimeMessages, EveryKnownMessageIsProducedByARealSession) {
  std::set<std::size_t> covered;
  std::set<std::string> codes_not_produced;
  for (const Case& c : Cases()) {
    const auto message = c.produce();
    if (!message) {
      codes_not_produced.insert(c.code);
      continue;
    }
    if (auto index = MatchKnownRuntimeMessage(*message)) covered.insert(*index);
  }
  const auto known = KnownRuntimeMessages();
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (covered.count(i) == 0 && codes_not_produced.count(std::string(known[i].code)) == 0) {
      ADD_FAILURE() << "no case produces " << known[i].code << ": " << known[i].pattern;
    }
  }
}

TEST(RuntimeMessages, UnknownLoadMessageFallsBackWithTheMessageKept) {
  // A real message the table does not know: the runtime's verdict on a file that is not there.
  const std::string message = [] {
    auto session = Session::Create(TestRuntime(), "/nonexistent/ortkit/model.onnx", SessionConfig{});
    return session.ok() ? std::string() : session.error().message;
  }();
  ASSERT_FALSE(message.empty());
  EXPECT_FALSE(MatchKnownRuntimeMessage(message).has_value());
  const Diagnosis d = TranslateRuntimeError(message);
  EXPECT_EQ(d.code, "runtime.load-failed");
  EXPECT_EQ(d.location.file, "/nonexistent/ortkit/model.onnx");
  EXPECT_NE(d.message.find("File doesn't exist"), std::string::npos) << d.message;
}

TEST(RuntimeMessages, UnknownRunMessageFallsBackNamingTheNode) {
  const auto model =
      Model(R"(<ir_version: 8, opset_import: ["" : 17]> g (int64[N] x, int64[N] z) => (int64[N] y) { y = Div(x, z) })",
            {"div_1"});
  const std::string message = LoadAndRunError(model, Feed{Ints("x", {1}, {3}), Ints("z", {1}, {0})});
  ASSERT_FALSE(message.empty());
  const Diagnosis d = TranslateRuntimeError(message, {}, /*during_run=*/true);
  EXPECT_EQ(d.code, "runtime.run-failed");
  EXPECT_EQ(d.location.node, "div_1");
  EXPECT_EQ(d.location.op_type, "Div");
  EXPECT_EQ(d.message, "node 'div_1' (Div) failed: Integer division by zero");
}

// An index past a table is a position past the position table where the node reads one (GPT-2's wpe): the
// cause names the sequence length, not the vocabulary.
TEST(RuntimeMessages, AnIndexIntoAPositionTableIsASequenceTooLong) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[128, 4] x, int64[N] i) => (float[N, 4] y) { y = Gather(x, i) })";
  const Feed feed{Floats("x", {128, 4}), Ints("i", {2}, {1, 130})};
  const Diagnosis position =
      TranslateRuntimeError(LoadAndRunError(Model(text, {"/transformer/wpe/Gather"}), feed), {}, true);
  EXPECT_EQ(position.code, "runtime.invalid-input");
  EXPECT_NE(position.cause.find("longer than the 128 positions"), std::string::npos) << position.cause;
  EXPECT_EQ(position.cause.find("vocabulary"), std::string::npos) << position.cause;
  EXPECT_NE(position.fix.find("at most 128 tokens"), std::string::npos) << position.fix;
  const Diagnosis other = TranslateRuntimeError(LoadAndRunError(Model(text, {"gather_1"}), feed), {}, true);
  EXPECT_NE(other.cause.find("vocabulary"), std::string::npos) << other.cause;
  EXPECT_NE(other.cause.find("position table"), std::string::npos) << other.cause;
}

TEST(RuntimeMessages, UnknownTextIsKeptWhole) {
  const Diagnosis load = TranslateRuntimeError("something ONNX Runtime 2.0 says\nover two lines");
  EXPECT_EQ(load.code, "runtime.load-failed");
  EXPECT_EQ(load.message, "something ONNX Runtime 2.0 says over two lines");
  EXPECT_EQ(TranslateRuntimeError("", {}, true).code, "runtime.run-failed");
}

TEST(RuntimeMessages, PythonPrefixAndFileAreRemoved) {
  const Diagnosis d = TranslateRuntimeError(
      "[ONNXRuntimeError] : 1 : FAIL : Load model from /m/model.onnx "
      "failed:/onnxruntime_src/onnxruntime/core/graph/model.cc:192 "
      "onnxruntime::Model::Model(onnx::ModelProto&&, const onnxruntime::PathString&) Unsupported model IR version: 12, "
      "max "
      "supported IR version: 10\n");
  EXPECT_EQ(d.code, "runtime.unsupported-ir-version");
  EXPECT_EQ(d.location.file, "/m/model.onnx");
  EXPECT_EQ(
      d.message,
      "the model's IR version 12 is not supported; this ONNX Runtime supports IR versions up to 10; ONNX Runtime says: "
      "Unsupported model IR version: 12, max supported IR version: 10");
}

TEST(RuntimeMessages, NodeWithThousandsOfInputsIsTranslatedWithoutExhaustingTheStack) {
  std::string inputs = "x";
  for (int i = 0; i < 5000; ++i) inputs += ", x";
  const auto model =
      Model(R"(<ir_version: 8, opset_import: ["" : 17]> g (float[N] x) => (float[N] y) { y = Relu()" + inputs + ") }",
            {"relu_1"});
  const std::string message = LoadAndRunError(model, std::nullopt);
  ASSERT_GT(message.size(), 50000u);
  const Diagnosis d = TranslateRuntimeError(message);
  EXPECT_EQ(d.code, "runtime.input-count");
  EXPECT_EQ(d.location.node, "relu_1");
  EXPECT_NE(d.message.find("has 5001 inputs"), std::string::npos) << d.message.substr(0, 300);
}

TEST(RunOnce, RejectsABufferWhoseShapeDoesNotHoldItsValues) {
  testing::TempDir dir;
  const auto model =
      Model(R"(<ir_version: 8, opset_import: ["" : 17]> g (float[N, 3] x) => (float[N, 3] y) { y = Relu(x) })");
  auto session = Session::Create(TestRuntime(), dir.WriteModel("m.onnx", model), SessionConfig{});
  ASSERT_TRUE(session.ok()) << session.error().message;
  NamedBuffer buffer{"x", {2, 3}, std::vector<float>(5, 1.0f)};
  Status run = RunOnce(**session, std::span(&buffer, 1));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(run.error().message, "input 'x': shape [2, 3] holds 6 values, but 5 were given");
  NamedBuffer huge{"x", {std::int64_t{1} << 40, std::int64_t{1} << 40}, std::vector<float>()};
  Status overflow = RunOnce(**session, std::span(&huge, 1));
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.error().message.find("more values than memory can"), std::string::npos);
  buffer.values = std::vector<float>(6, 1.0f);
  Status fixed = RunOnce(**session, std::span(&buffer, 1));
  EXPECT_TRUE(fixed.ok()) << fixed.error().message;
}

// ---- Fixtures for tests/e2e/check_runtime_errors.sh: small binary models that ortkit check
// must reject in its runtime layer. Regenerate after changing a model above with
//   ORTKIT_REGENERATE_FIXTURES=1 build/tests/ortkit_unit_tests --gtest_also_run_disabled_tests
//     --gtest_filter='RuntimeFixtures.DISABLED_Regenerate'

struct Fixture {
  const char* file;
  const char* text;
  const char* node;
};
constexpr Fixture kFixtures[] = {
    {"erf_double.onnx", kErfDouble, "erf_1"},
    {"ir_version_99.onnx", kIrVersion99, "relu_1"},
    {"opset_30.onnx", kOpset30, "relu_1"},
};

std::string FixtureBytes(const Fixture& fixture) { return Model(fixture.text, {fixture.node}).SerializeAsString(); }

TEST(RuntimeFixtures, DISABLED_Regenerate) {
  if (std::getenv("ORTKIT_REGENERATE_FIXTURES") == nullptr) GTEST_SKIP() << "set ORTKIT_REGENERATE_FIXTURES=1";
  for (const auto& fixture : kFixtures) {
    const auto path = testing::SourcePath(std::string("tests/data/runtime/") + fixture.file);
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << FixtureBytes(fixture);
  }
}

TEST(RuntimeFixtures, CommittedFilesMatchTheirSource) {
  for (const auto& fixture : kFixtures) {
    std::ifstream in(testing::SourcePath(std::string("tests/data/runtime/") + fixture.file), std::ios::binary);
    ASSERT_TRUE(in) << fixture.file << " is missing; regenerate it (see above)";
    const std::string committed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(committed, FixtureBytes(fixture)) << fixture.file << " is stale; regenerate it (see above)";
  }
}

}  // namespace
}  // namespace ortkit
