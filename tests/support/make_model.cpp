// ortkit_make_model: writes the models that the demo, the end-to-end tests and the docs use.
//   ortkit_make_model demo-encoder OUT.onnx [--static-batch N]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace {

class GraphBuilder {
 public:
  explicit GraphBuilder(onnx::GraphProto* graph, unsigned seed = 7) : graph_(graph), rng_(seed) {}

  std::string Weight(const std::string& name, std::vector<long long> dims, float scale) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    long long n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= d;
    }
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> data(static_cast<std::size_t>(n));
    for (auto& v : data) v = normal(rng_);
    t->set_raw_data(data.data(), data.size() * sizeof(float));
    return name;
  }

  std::string Filled(const std::string& name, long long size, float value) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(size);
    std::vector<float> data(static_cast<std::size_t>(size), value);
    t->set_raw_data(data.data(), data.size() * sizeof(float));
    return name;
  }

  std::string Ints(const std::string& name, std::vector<long long> values) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<long long>(values.size()));
    for (auto v : values) t->add_int64_data(v);
    return name;
  }

  std::string Scalar(const std::string& name, float value) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return name;
  }

  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> inputs, const std::string& output) {
    auto* node = graph_->add_node();
    node->set_op_type(op);
    node->set_name(output);
    for (auto& in : inputs) node->add_input(in);
    node->add_output(output);
    return node;
  }

  static void IntAttr(onnx::NodeProto* node, const std::string& name, long long value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void IntsAttr(onnx::NodeProto* node, const std::string& name, std::vector<long long> values) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto v : values) a->add_ints(v);
  }
  static void FloatAttr(onnx::NodeProto* node, const std::string& name, float value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
  }

  void Value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             std::vector<std::string> dims) {
    auto* v = list->Add();
    v->set_name(name);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    for (auto& d : dims) {
      auto* dim = tensor->mutable_shape()->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  }

 private:
  onnx::GraphProto* graph_;
  std::mt19937 rng_;
};

// One Transformer encoder block: pre-norm multi-head self-attention and a ReLU feed-forward
// network, with dynamic batch and sequence axes.
onnx::ModelProto DemoEncoder(const std::string& batch, long long baked_batch) {
  constexpr long long kHidden = 64, kHeads = 4, kHeadDim = kHidden / kHeads, kFfn = 256;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("ortkit_make_model");
  model.set_producer_version("1");
  model.set_doc_string("A Transformer encoder block (4 heads, hidden 64, FFN 256) with random weights.");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("encoder_block");
  GraphBuilder b(graph);
  b.Value(graph->mutable_input(), "x", {batch, "seq_len", std::to_string(kHidden)});
  b.Value(graph->mutable_output(), "y", {batch, "seq_len", std::to_string(kHidden)});

  const float w_scale = 1.0f / std::sqrt(static_cast<float>(kHidden));
  auto* ln1 = b.Node("LayerNormalization", {"x", b.Filled("ln1.gamma", kHidden, 1), b.Filled("ln1.beta", kHidden, 0)}, "ln1");
  GraphBuilder::IntAttr(ln1, "axis", -1);
  GraphBuilder::FloatAttr(ln1, "epsilon", 1e-5f);
  const std::string heads_shape = b.Ints("heads_shape", {0, 0, kHeads, kHeadDim});
  for (const char* p : {"q", "k", "v"}) {
    const std::string name(p);
    b.Node("MatMul", {"ln1", b.Weight(name + ".weight", {kHidden, kHidden}, w_scale)}, name + ".proj");
    b.Node("Reshape", {name + ".proj", heads_shape}, name + ".heads");
    auto* t = b.Node("Transpose", {name + ".heads"}, name + ".t");
    GraphBuilder::IntsAttr(t, "perm", name == "k" ? std::vector<long long>{0, 2, 3, 1} : std::vector<long long>{0, 2, 1, 3});
  }
  b.Node("MatMul", {"q.t", "k.t"}, "scores.raw");
  b.Node("Div", {"scores.raw", b.Scalar("sqrt_head_dim", std::sqrt(static_cast<float>(kHeadDim)))}, "scores");
  auto* softmax = b.Node("Softmax", {"scores"}, "attention");
  GraphBuilder::IntAttr(softmax, "axis", -1);
  b.Node("MatMul", {"attention", "v.t"}, "context.heads");
  auto* back = b.Node("Transpose", {"context.heads"}, "context.t");
  GraphBuilder::IntsAttr(back, "perm", {0, 2, 1, 3});
  // baked_batch > 0 imitates x.view(2, -1, hidden): the traced batch size is written into the graph.
  const std::vector<long long> hidden_shape =
      baked_batch > 0 ? std::vector<long long>{baked_batch, -1, kHidden} : std::vector<long long>{0, 0, kHidden};
  b.Node("Reshape", {"context.t", b.Ints("hidden_shape", hidden_shape)}, "context");
  b.Node("MatMul", {"context", b.Weight("out.weight", {kHidden, kHidden}, w_scale)}, "attn.out");
  b.Node("Add", {"x", "attn.out"}, "residual1");
  auto* ln2 = b.Node("LayerNormalization", {"residual1", b.Filled("ln2.gamma", kHidden, 1), b.Filled("ln2.beta", kHidden, 0)}, "ln2");
  GraphBuilder::IntAttr(ln2, "axis", -1);
  b.Node("MatMul", {"ln2", b.Weight("ffn.up.weight", {kHidden, kFfn}, w_scale)}, "ffn.up");
  b.Node("Add", {"ffn.up", b.Filled("ffn.up.bias", kFfn, 0.01f)}, "ffn.up.biased");
  b.Node("Relu", {"ffn.up.biased"}, "ffn.act");
  b.Node("MatMul", {"ffn.act", b.Weight("ffn.down.weight", {kFfn, kHidden}, 1.0f / std::sqrt(static_cast<float>(kFfn)))}, "ffn.down");
  b.Node("Add", {"residual1", "ffn.down"}, "y");
  return model;
}

int Usage() {
  std::fprintf(stderr,
               "usage: ortkit_make_model demo-encoder OUT.onnx [--static-batch N] [--baked-batch N]\n"
               "  demo-encoder   a Transformer encoder block with dynamic batch and seq_len axes\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  const std::string kind = argv[1];
  const std::string out = argv[2];
  std::string batch = "batch";
  long long baked_batch = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--static-batch") == 0) batch = argv[i + 1];
    else if (std::strcmp(argv[i], "--baked-batch") == 0) baked_batch = std::atoll(argv[i + 1]);
    else return Usage();
  }
  onnx::ModelProto model;
  if (kind == "demo-encoder") model = DemoEncoder(batch, baked_batch);
  else return Usage();
  std::ofstream file(out, std::ios::binary);
  if (!file || !model.SerializeToOstream(&file)) {
    std::fprintf(stderr, "ortkit_make_model: cannot write %s\n", out.c_str());
    return 2;
  }
  return 0;
}
