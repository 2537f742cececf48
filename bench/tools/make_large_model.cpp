// ortkit_make_large_model SIZE_MB OUT.onnx [--external]: a real model of about SIZE_MB mebibytes of
// float32 weights (a chain of 2048×2048 MatMuls, y = x·W0·W1·…), for bench/large_model_memory.sh.
//
// The weights never sit in memory all at once: they are generated one 1 MiB chunk at a time and
// streamed to disk. With --external they go to OUT.onnx.data and the .onnx file holds only the
// graph. Without it, the protobuf wire format is written by hand around the streamed bytes: the
// small messages (header, nodes, each initializer's metadata) are serialised by protobuf, and each
// initializer's raw_data field is appended as tag, length and payload, so the file is exactly what
// ModelProto::SerializeToOstream would write for the same model, field order included.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace {

constexpr std::int64_t kWidth = 2048;  // 16 MiB per weight: a realistic tensor size for large models
constexpr std::uint64_t kWeightBytes = kWidth * kWidth * sizeof(float);
constexpr std::size_t kChunkFloats = 1 << 18;  // 1 MiB

// Deterministic values, uniform in [-a, a] with variance 1/width, so that the chain's activations
// keep their scale whatever its length (xorshift: cheap, and the same bytes on every machine).
class WeightStream {
 public:
  explicit WeightStream(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  void Fill(std::vector<float>& chunk) {
    const float scale = std::sqrt(3.0f / kWidth) / 8388608.0f;  // 2^23: 24-bit integers to [-a, a]
    for (auto& v : chunk) {
      state_ ^= state_ << 13;
      state_ ^= state_ >> 7;
      state_ ^= state_ << 17;
      v = static_cast<float>(static_cast<std::int32_t>(state_ >> 40) - 8388608) * scale;
    }
  }

 private:
  std::uint64_t state_;
};

bool WriteWeight(std::ofstream& out, std::uint64_t seed) {
  WeightStream stream(seed);
  std::vector<float> chunk(kChunkFloats);
  for (std::uint64_t written = 0; written < kWeightBytes; written += kChunkFloats * sizeof(float)) {
    stream.Fill(chunk);
    out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size() * sizeof(float)));
  }
  return static_cast<bool>(out);
}

std::string WeightName(int i) { return "w" + std::to_string(i); }

// Header, nodes, inputs and outputs; initializers carry metadata only (no data).
onnx::ModelProto BuildSkeleton(int layers) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("ortkit_make_large_model");
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("matmul_chain");
  std::string previous = "x";
  for (int i = 0; i < layers; ++i) {
    auto* node = graph->add_node();
    node->set_name("matmul_" + std::to_string(i));
    node->set_op_type("MatMul");
    node->add_input(previous);
    node->add_input(WeightName(i));
    previous = i + 1 == layers ? "y" : "h" + std::to_string(i);
    node->add_output(previous);
    auto* weight = graph->add_initializer();
    weight->set_name(WeightName(i));
    weight->set_data_type(onnx::TensorProto::FLOAT);
    weight->add_dims(kWidth);
    weight->add_dims(kWidth);
  }
  for (const char* name : {"x", "y"}) {
    auto* value = std::string(name) == "x" ? graph->add_input() : graph->add_output();
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_param("batch");
    tensor->mutable_shape()->add_dim()->set_dim_value(kWidth);
  }
  return model;
}

int WriteExternal(onnx::ModelProto model, const std::filesystem::path& out_path) {
  const std::filesystem::path data_path = out_path.string() + ".data";
  std::ofstream data(data_path, std::ios::binary | std::ios::trunc);
  auto* graph = model.mutable_graph();
  for (int i = 0; i < graph->initializer_size(); ++i) {
    auto* weight = graph->mutable_initializer(i);
    weight->set_data_location(onnx::TensorProto::EXTERNAL);
    const std::pair<const char*, std::string> entries[] = {
        {"location", data_path.filename().string()},
        {"offset", std::to_string(static_cast<std::uint64_t>(i) * kWeightBytes)},
        {"length", std::to_string(kWeightBytes)}};
    for (const auto& [key, value] : entries) {
      auto* entry = weight->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    if (!WriteWeight(data, static_cast<std::uint64_t>(i))) return 1;
  }
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  return model.SerializeToOstream(&out) && data ? 0 : 1;
}

std::string Varint(std::uint64_t value) {
  std::string out;
  do {
    out += static_cast<char>((value & 0x7F) | (value > 0x7F ? 0x80 : 0));
    value >>= 7;
  } while (value != 0);
  return out;
}

std::string FieldHeader(int number, std::uint64_t length) {
  return Varint(static_cast<std::uint64_t>(number) << 3 | 2) + Varint(length);  // wire type 2: length-delimited
}

int WriteEmbedded(const onnx::ModelProto& model, const std::filesystem::path& out_path) {
  constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
  const std::string raw_data_header = FieldHeader(kTensorRawData, kWeightBytes);

  // ModelProto fields in number order: 1-6 (header), graph 7, opset_import 8. GraphProto: node 1,
  // name 2, initializer 5, input 11, output 12.
  onnx::ModelProto before_graph = model, after_graph;
  before_graph.clear_graph();
  before_graph.clear_opset_import();
  *after_graph.mutable_opset_import() = model.opset_import();
  onnx::GraphProto graph_head, graph_tail;
  *graph_head.mutable_node() = model.graph().node();
  graph_head.set_name(model.graph().name());
  *graph_tail.mutable_input() = model.graph().input();
  *graph_tail.mutable_output() = model.graph().output();

  std::vector<std::string> initializer_heads;  // each initializer's field header and metadata
  std::uint64_t graph_length = graph_head.ByteSizeLong() + graph_tail.ByteSizeLong();
  for (const auto& weight : model.graph().initializer()) {
    const std::string metadata = weight.SerializeAsString();
    const std::uint64_t length = metadata.size() + raw_data_header.size() + kWeightBytes;
    const std::string field_header = FieldHeader(kGraphInitializer, length);
    initializer_heads.push_back(field_header + metadata + raw_data_header);
    graph_length += field_header.size() + length;
  }

  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out << before_graph.SerializeAsString() << FieldHeader(kModelGraph, graph_length) << graph_head.SerializeAsString();
  for (std::size_t i = 0; i < initializer_heads.size(); ++i) {
    out << initializer_heads[i];
    if (!WriteWeight(out, static_cast<std::uint64_t>(i))) return 1;
  }
  out << graph_tail.SerializeAsString() << after_graph.SerializeAsString();
  return out ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && std::strcmp(argv[3], "--external") != 0)) {
    std::fprintf(stderr,
                 "usage: %s SIZE_MB OUT.onnx [--external]\n"
                 "  writes a MatMul chain with about SIZE_MB MiB of float32 weights (16 MiB per layer);\n"
                 "  --external stores them in OUT.onnx.data\n",
                 argv[0]);
    return 2;
  }
  const long size_mb = std::strtol(argv[1], nullptr, 10);
  if (size_mb <= 0) {
    std::fprintf(stderr, "SIZE_MB must be a positive number, not '%s'\n", argv[1]);
    return 2;
  }
  const bool external = argc == 4;
  const int layers =
      static_cast<int>((static_cast<std::uint64_t>(size_mb) * (1 << 20) + kWeightBytes - 1) / kWeightBytes);
  if (!external && static_cast<std::uint64_t>(layers) * kWeightBytes >= (1ULL << 31)) {
    std::fprintf(stderr, "an embedded model must stay under protobuf's 2 GiB limit: use --external\n");
    return 2;
  }
  const std::filesystem::path out_path(argv[2]);
  const onnx::ModelProto model = BuildSkeleton(layers);
  const int rc = external ? WriteExternal(model, out_path) : WriteEmbedded(model, out_path);
  if (rc != 0) {
    std::fprintf(stderr, "writing %s failed\n", out_path.c_str());
    return 1;
  }
  std::printf("%s: %d MatMul layers of %lldx%lld float32, %llu MiB of weights %s\n", out_path.c_str(), layers,
              static_cast<long long>(kWidth), static_cast<long long>(kWidth),
              static_cast<unsigned long long>(layers * kWeightBytes >> 20),
              external ? ("in " + out_path.string() + ".data").c_str() : "embedded");
  return 0;
}
