// ortkit_make_model: writes the models that the demo, the end-to-end tests and the docs use.
//   ortkit_make_model demo-encoder OUT.onnx [--static-batch N] [--baked-batch N] [--seed N]
//   ortkit_make_model bert-tiny OUT.onnx [--layers N] [--hidden H] [--vocab V]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <onnx/defs/parser.h>
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
             std::vector<std::string> dims, int elem_type = onnx::TensorProto::FLOAT) {
    auto* v = list->Add();
    v->set_name(name);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    for (auto& d : dims) {
      auto* dim = tensor->mutable_shape()->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  }

 private:
  onnx::GraphProto* graph_;
  std::mt19937 rng_;
};

// One Transformer encoder block: pre-norm multi-head self-attention and a ReLU feed-forward
// network, with dynamic batch and sequence axes.
// `seed`: the weights' random seed (models of the same shapes with other weights: versions of one model).
onnx::ModelProto DemoEncoder(const std::string& batch, long long baked_batch, unsigned seed) {
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
  GraphBuilder b(graph, seed);
  b.Value(graph->mutable_input(), "x", {batch, "seq_len", std::to_string(kHidden)});
  b.Value(graph->mutable_output(), "y", {batch, "seq_len", std::to_string(kHidden)});

  const float w_scale = 1.0f / std::sqrt(static_cast<float>(kHidden));
  auto* ln1 =
      b.Node("LayerNormalization", {"x", b.Filled("ln1.gamma", kHidden, 1), b.Filled("ln1.beta", kHidden, 0)}, "ln1");
  GraphBuilder::IntAttr(ln1, "axis", -1);
  GraphBuilder::FloatAttr(ln1, "epsilon", 1e-5f);
  const std::string heads_shape = b.Ints("heads_shape", {0, 0, kHeads, kHeadDim});
  for (const char* p : {"q", "k", "v"}) {
    const std::string name(p);
    b.Node("MatMul", {"ln1", b.Weight(name + ".weight", {kHidden, kHidden}, w_scale)}, name + ".proj");
    b.Node("Reshape", {name + ".proj", heads_shape}, name + ".heads");
    auto* t = b.Node("Transpose", {name + ".heads"}, name + ".t");
    GraphBuilder::IntsAttr(t, "perm",
                           name == "k" ? std::vector<long long>{0, 2, 3, 1} : std::vector<long long>{0, 2, 1, 3});
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
  auto* ln2 = b.Node("LayerNormalization",
                     {"residual1", b.Filled("ln2.gamma", kHidden, 1), b.Filled("ln2.beta", kHidden, 0)}, "ln2");
  GraphBuilder::IntAttr(ln2, "axis", -1);
  b.Node("MatMul", {"ln2", b.Weight("ffn.up.weight", {kHidden, kFfn}, w_scale)}, "ffn.up");
  b.Node("Add", {"ffn.up", b.Filled("ffn.up.bias", kFfn, 0.01f)}, "ffn.up.biased");
  b.Node("Relu", {"ffn.up.biased"}, "ffn.act");
  b.Node("MatMul",
         {"ffn.act", b.Weight("ffn.down.weight", {kFfn, kHidden}, 1.0f / std::sqrt(static_cast<float>(kFfn)))},
         "ffn.down");
  b.Node("Add", {"residual1", "ffn.down"}, "y");
  return model;
}

struct BertOptions {
  long long layers = 2;
  long long hidden = 128;
  long long heads = 4;
  long long vocab = 2000;
  long long max_positions = 512;
};

// A small BERT-like encoder: word, position and token-type embeddings, then post-norm encoder
// layers whose attention adds a large negative bias at masked key positions, so that outputs at
// real positions do not depend on padding (up to round-off).
onnx::ModelProto BertTiny(const BertOptions& options) {
  const long long hidden = options.hidden, heads = options.heads, head_dim = hidden / heads, ffn = 4 * hidden;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("ortkit_make_model");
  model.set_producer_version("1");
  model.set_doc_string("A small BERT-like encoder with random weights.");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("bert_tiny");
  GraphBuilder b(graph, 11);
  for (const char* name : {"input_ids", "attention_mask", "token_type_ids"}) {
    b.Value(graph->mutable_input(), name, {"batch", "seq_len"}, onnx::TensorProto::INT64);
  }
  b.Value(graph->mutable_output(), "last_hidden_state", {"batch", "seq_len", std::to_string(hidden)});

  // Embeddings.
  b.Node("Gather", {b.Weight("embeddings.word", {options.vocab, hidden}, 0.02f), "input_ids"}, "emb.word");
  b.Node("Gather", {b.Weight("embeddings.token_type", {2, hidden}, 0.02f), "token_type_ids"}, "emb.type");
  b.Node("Shape", {"input_ids"}, "ids.shape");
  auto* seq = b.Node("Gather", {"ids.shape", b.Ints("one_index", {1})}, "seq_len.vec");
  GraphBuilder::IntAttr(seq, "axis", 0);
  b.Node("Squeeze", {"seq_len.vec"}, "seq_len.scalar");
  auto* zero = graph->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  auto* one = graph->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::INT64);
  one->add_int64_data(1);
  b.Node("Range", {"zero", "seq_len.scalar", "one"}, "positions");
  b.Node("Gather", {b.Weight("embeddings.position", {options.max_positions, hidden}, 0.02f), "positions"},
         "emb.position");
  b.Node("Add", {"emb.word", "emb.type"}, "emb.sum1");
  b.Node("Add", {"emb.sum1", "emb.position"}, "emb.sum");
  auto* ln =
      b.Node("LayerNormalization",
             {"emb.sum", b.Filled("embeddings.ln.gamma", hidden, 1), b.Filled("embeddings.ln.beta", hidden, 0)}, "emb");
  GraphBuilder::IntAttr(ln, "axis", -1);

  // Attention bias: 0 where the mask is 1, -10000 where it is 0, shaped [batch, 1, 1, seq_len].
  auto* cast = b.Node("Cast", {"attention_mask"}, "mask.float");
  GraphBuilder::IntAttr(cast, "to", onnx::TensorProto::FLOAT);
  b.Node("Sub", {b.Scalar("mask.one", 1.0f), "mask.float"}, "mask.inverted");
  b.Node("Mul", {"mask.inverted", b.Scalar("mask.penalty", -10000.0f)}, "mask.bias.2d");
  b.Node("Unsqueeze", {"mask.bias.2d", b.Ints("mask.axes", {1, 2})}, "mask.bias");

  const float w_scale = 1.0f / std::sqrt(static_cast<float>(hidden));
  const std::string heads_shape = b.Ints("heads_shape", {0, 0, heads, head_dim});
  const std::string hidden_shape = b.Ints("hidden_shape", {0, 0, hidden});
  const std::string scale = b.Scalar("sqrt_head_dim", std::sqrt(static_cast<float>(head_dim)));
  std::string x = "emb";
  for (long long layer = 0; layer < options.layers; ++layer) {
    const std::string p = "layer" + std::to_string(layer) + ".";
    for (const char* projection : {"q", "k", "v"}) {
      const std::string name = p + projection;
      b.Node("MatMul", {x, b.Weight(name + ".weight", {hidden, hidden}, w_scale)}, name + ".proj");
      b.Node("Add", {name + ".proj", b.Filled(name + ".bias", hidden, 0.0f)}, name + ".biased");
      b.Node("Reshape", {name + ".biased", heads_shape}, name + ".heads");
      auto* t = b.Node("Transpose", {name + ".heads"}, name + ".t");
      GraphBuilder::IntsAttr(
          t, "perm",
          std::string(projection) == "k" ? std::vector<long long>{0, 2, 3, 1} : std::vector<long long>{0, 2, 1, 3});
    }
    b.Node("MatMul", {p + "q.t", p + "k.t"}, p + "scores.raw");
    b.Node("Div", {p + "scores.raw", scale}, p + "scores.scaled");
    b.Node("Add", {p + "scores.scaled", "mask.bias"}, p + "scores");
    auto* softmax = b.Node("Softmax", {p + "scores"}, p + "attention");
    GraphBuilder::IntAttr(softmax, "axis", -1);
    b.Node("MatMul", {p + "attention", p + "v.t"}, p + "context.heads");
    auto* back = b.Node("Transpose", {p + "context.heads"}, p + "context.t");
    GraphBuilder::IntsAttr(back, "perm", {0, 2, 1, 3});
    b.Node("Reshape", {p + "context.t", hidden_shape}, p + "context");
    b.Node("MatMul", {p + "context", b.Weight(p + "attn.out.weight", {hidden, hidden}, w_scale)}, p + "attn.out");
    b.Node("Add", {x, p + "attn.out"}, p + "residual1");
    auto* ln1 =
        b.Node("LayerNormalization",
               {p + "residual1", b.Filled(p + "ln1.gamma", hidden, 1), b.Filled(p + "ln1.beta", hidden, 0)}, p + "ln1");
    GraphBuilder::IntAttr(ln1, "axis", -1);
    // GELU written with Erf (opset 17 has no Gelu op); ONNX Runtime fuses the pattern.
    b.Node("MatMul", {p + "ln1", b.Weight(p + "ffn.up.weight", {hidden, ffn}, w_scale)}, p + "ffn.up");
    b.Node("Add", {p + "ffn.up", b.Filled(p + "ffn.up.bias", ffn, 0.01f)}, p + "ffn.pre");
    b.Node("Div", {p + "ffn.pre", b.Scalar(p + "sqrt2", std::sqrt(2.0f))}, p + "gelu.scaled");
    b.Node("Erf", {p + "gelu.scaled"}, p + "gelu.erf");
    b.Node("Add", {p + "gelu.erf", b.Scalar(p + "gelu.one", 1.0f)}, p + "gelu.plus1");
    b.Node("Mul", {p + "ffn.pre", p + "gelu.plus1"}, p + "gelu.prod");
    b.Node("Mul", {p + "gelu.prod", b.Scalar(p + "gelu.half", 0.5f)}, p + "ffn.act");
    b.Node("MatMul",
           {p + "ffn.act", b.Weight(p + "ffn.down.weight", {ffn, hidden}, 1.0f / std::sqrt(static_cast<float>(ffn)))},
           p + "ffn.down");
    b.Node("Add", {p + "ln1", p + "ffn.down"}, p + "residual2");
    const std::string out = layer + 1 == options.layers ? "last_hidden_state" : p + "out";
    auto* ln2 =
        b.Node("LayerNormalization",
               {p + "residual2", b.Filled(p + "ln2.gamma", hidden, 1), b.Filled(p + "ln2.beta", hidden, 0)}, out);
    GraphBuilder::IntAttr(ln2, "axis", -1);
    x = out;
  }
  return model;
}

int Usage(FILE* to = stderr, int code = 2) {
  std::fprintf(to,
               "usage: ortkit_make_model demo-encoder OUT.onnx [--static-batch N] [--baked-batch N] [--seed N]\n"
               "       ortkit_make_model bert-tiny OUT.onnx [--layers N] [--hidden H] [--vocab V]\n"
               "       ortkit_make_model from-text OUT.onnx < MODEL.txt\n"
               "  demo-encoder   a Transformer encoder block with dynamic batch and seq_len axes\n"
               "  bert-tiny      a small BERT-like encoder (input_ids, attention_mask, token_type_ids)\n"
               "  from-text      a model in ONNX's textual syntax, read from stdin\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) return Usage(stdout, 0);
  if (argc < 3) return Usage();
  const std::string kind = argv[1];
  const std::string out = argv[2];
  std::string batch = "batch";
  long long baked_batch = 0;
  unsigned seed = 7;
  BertOptions bert;
  if ((argc - 3) % 2 != 0) return Usage();
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long value = std::atoll(argv[i + 1]);
    if (flag == "--static-batch")
      batch = argv[i + 1];
    else if (flag == "--baked-batch")
      baked_batch = value;
    else if (flag == "--seed" && value >= 0 && value <= UINT32_MAX)
      seed = static_cast<unsigned>(value);
    else if (flag == "--layers" && value > 0)
      bert.layers = value;
    else if (flag == "--hidden" && value > 0 && value % bert.heads == 0)
      bert.hidden = value;
    else if (flag == "--vocab" && value > 1)
      bert.vocab = value;
    else
      return Usage();
  }
  onnx::ModelProto model;
  if (kind == "from-text") {
    // ONNX's textual syntax, as the unit tests write their models: from-text OUT.onnx < MODEL.txt
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    auto status = onnx::OnnxParser::Parse(model, text.c_str());
    if (!status.IsOK()) {
      std::fprintf(stderr, "ortkit_make_model: the text does not parse: %s\n", status.ErrorMessage().c_str());
      return 2;
    }
  } else if (kind == "demo-encoder")
    model = DemoEncoder(batch, baked_batch, seed);
  else if (kind == "bert-tiny")
    model = BertTiny(bert);
  else
    return Usage();
  std::ofstream file(out, std::ios::binary);
  if (!file || !model.SerializeToOstream(&file)) {
    std::fprintf(stderr, "ortkit_make_model: cannot write %s\n", out.c_str());
    return 2;
  }
  return 0;
}
