#include "ortkit/model/model_file.h"

#include "ortkit/core/files.h"
#include "ortkit/core/text.h"
#include "ortkit/core/units.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <fstream>

#include <cstring>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

namespace ortkit {
namespace {

std::string SizeText(std::uint64_t bytes) {
  return bytes < 1024 ? fmt::format("{} bytes", bytes) : fmt::format("{}, {} bytes", HumanBytes(bytes), bytes);
}

namespace pbio = google::protobuf::io;
using WireType = google::protobuf::internal::WireFormatLite::WireType;

constexpr std::uint64_t kProtobufLimit = 2147483647ULL;  // 2 GiB - 1: protobuf's message limit

std::string_view TrimLeft(std::string_view s) {
  std::size_t i = 0;
  // Skip a UTF-8 byte-order mark and white space.
  if (s.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

bool LooksLikeText(std::string_view head) {
  if (head.empty()) return false;
  std::size_t printable = 0;
  for (unsigned char c : head) {
    if (c == 0) return false;
    if (std::isprint(c) || std::isspace(c) || c >= 0x80) ++printable;
  }
  return printable == head.size();
}

// Field numbers of onnx.ModelProto, with their wire types, for the structural walk below.
bool IsModelProtoField(int number, int wire_type) {
  constexpr int kVarint = 0, kLength = 2;
  switch (number) {
    case 1:
    case 5: return wire_type == kVarint;  // ir_version, model_version
    case 2:
    case 3:
    case 4:
    case 6:
    case 7:
    case 8:
    case 14:
    case 20:
    case 25: return wire_type == kLength;
    default: return false;
  }
}

const char* ModelFieldName(int number) {
  switch (number) {
    case 1: return "ir_version";
    case 2: return "producer_name";
    case 3: return "producer_version";
    case 4: return "domain";
    case 5: return "model_version";
    case 6: return "doc_string";
    case 7: return "graph";
    case 8: return "opset_import";
    case 14: return "metadata_props";
    case 20: return "training_info";
    case 25: return "functions";
    default: return "unknown";
  }
}

struct WalkResult {
  enum Kind { kOk, kTruncated, kNotOnnx } kind = kOk;
  std::string detail;
};

std::string ByteCount(std::uint64_t n) { return fmt::format("{} byte{}", n, n == 1 ? "" : "s"); }

// Reads a length-delimited string field whose length is already consumed; keeps at most 200 bytes
// of it, so a corrupted length cannot make a name allocate much.
bool ReadShortString(pbio::CodedInputStream& in, std::uint64_t length, std::string* out) {
  constexpr std::uint64_t kKeep = 200;
  const int keep = static_cast<int>(std::min(length, kKeep));
  return in.ReadString(out, keep) && in.Skip(static_cast<int>(length - static_cast<std::uint64_t>(keep)));
}

// Skips one field's payload; false when the file ends first or the wire type is invalid.
bool SkipPayload(pbio::CodedInputStream& in, int wire_type, std::uint64_t end) {
  std::uint64_t v;
  switch (wire_type) {
    case 0: return in.ReadVarint64(&v);
    case 1: return in.Skip(8);
    case 5: return in.Skip(4);
    case 2: {
      if (!in.ReadVarint64(&v)) return false;
      const std::uint64_t start = static_cast<std::uint64_t>(in.CurrentPosition());
      return v <= end - std::min(start, end) && in.Skip(static_cast<int>(v));
    }
    default: return false;
  }
}

// " 'name' (OpType)" or " 'name' (its raw data declares ...)" for the graph element (NodeProto or
// TensorProto) the file ends in, read up to the cut; "" when not even its name survived.
std::string DescribeCutElement(pbio::CodedInputStream& in, bool is_node, std::uint64_t end) {
  // NodeProto: name 3, op_type 4. TensorProto: name 8, raw_data 9. Both are written before the
  // bulky fields (attributes, data), so they survive most cuts.
  const int name_field = is_node ? 3 : 8;
  std::string name, op_type, raw_data_cut;
  while (true) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const int number = static_cast<int>(tag >> 3), wire_type = static_cast<int>(tag & 7);
    std::uint64_t length = 0;
    if (wire_type == 2 && (number == name_field || (is_node && number == 4) || (!is_node && number == 9))) {
      if (!in.ReadVarint64(&length)) break;
      const std::uint64_t start = static_cast<std::uint64_t>(in.CurrentPosition());
      const std::uint64_t present = end - std::min(start, end);
      if (!is_node && number == 9) {
        if (length > present) {
          raw_data_cut = fmt::format("its raw data declares {}, {} present", ByteCount(length), present);
          break;
        }
        if (!in.Skip(static_cast<int>(length))) break;
        continue;
      }
      if (length > present) break;
      if (!ReadShortString(in, length, number == 4 && is_node ? &op_type : &name)) break;
      continue;
    }
    if (!SkipPayload(in, wire_type, end)) break;
  }
  std::string out = name.empty() ? "" : fmt::format(" '{}'", name);
  if (!op_type.empty()) out += fmt::format(" ({})", op_type);
  if (!raw_data_cut.empty()) out += fmt::format(" ({})", raw_data_cut);
  return out;
}

// Called with `in` at the start of a truncated graph field: names the element the file ends in,
// so a cut through the weights reads differently from a cut through the node list.
std::string DescribeGraphCut(pbio::CodedInputStream& in, std::uint64_t end) {
  int nodes = 0, initializers = 0;
  while (true) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const int number = static_cast<int>(tag >> 3), wire_type = static_cast<int>(tag & 7);
    if (wire_type != 2) {
      if (!SkipPayload(in, wire_type, end)) break;
      continue;
    }
    std::uint64_t length;
    if (!in.ReadVarint64(&length)) break;
    const std::uint64_t start = static_cast<std::uint64_t>(in.CurrentPosition());
    if (length <= end - std::min(start, end)) {
      nodes += number == 1;
      initializers += number == 5;
      if (!in.Skip(static_cast<int>(length))) break;
      continue;
    }
    switch (number) {  // GraphProto fields
      case 1: return fmt::format("inside node #{}{}", nodes, DescribeCutElement(in, /*is_node=*/true, end));
      case 5:
        return fmt::format("inside initializer #{}{}", initializers, DescribeCutElement(in, /*is_node=*/false, end));
      case 11: return "inside the graph inputs";
      case 12: return "inside the graph outputs";
      case 13: return "inside the graph's value_info";
      case 15: return "inside the sparse initializers";
      default: return fmt::format("inside graph field {}", number);
    }
  }
  return fmt::format("after {} node{} and {} initializer{}", nodes, nodes == 1 ? "" : "s", initializers,
                     initializers == 1 ? "" : "s");
}

// Walks the top-level fields of ModelProto without materialising them, to tell a truncated file
// ("field graph at byte 12 declares 5000 bytes, the file ends after 300") from bytes that were
// never a model. Reads through `stream`, skipping payloads, so it costs no memory.
WalkResult WalkTopLevel(pbio::ZeroCopyInputStream* stream, std::uint64_t total_size) {
  pbio::CodedInputStream in(stream);
  in.SetTotalBytesLimit(INT_MAX);
  int fields = 0;
  while (true) {
    const std::uint64_t offset = static_cast<std::uint64_t>(in.CurrentPosition());
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (offset < total_size && fields == 0)
        return {WalkResult::kNotOnnx, "the first byte is not a protobuf field tag"};
      if (offset < total_size) {
        return {WalkResult::kNotOnnx, fmt::format("an invalid protobuf tag at byte {}", offset)};
      }
      return {};
    }
    const int number = static_cast<int>(tag >> 3);
    const int wire_type = static_cast<int>(tag & 7);
    if (!IsModelProtoField(number, wire_type)) {
      if (fields == 0) {
        return {WalkResult::kNotOnnx,
                fmt::format("it starts with protobuf field {} (wire type {}), which ONNX models never have", number,
                            wire_type)};
      }
      // Unknown fields after valid ones: newer ONNX versions may add fields. Skip them.
    }
    ++fields;
    switch (wire_type) {
      case 0: {
        std::uint64_t v;
        if (!in.ReadVarint64(&v)) {
          return {WalkResult::kTruncated,
                  fmt::format("the file ends inside field {} at byte {}", ModelFieldName(number), offset)};
        }
        break;
      }
      case 1:
        if (!in.Skip(8))
          return {WalkResult::kTruncated, fmt::format("the file ends inside a fixed64 field at byte {}", offset)};
        break;
      case 5:
        if (!in.Skip(4))
          return {WalkResult::kTruncated, fmt::format("the file ends inside a fixed32 field at byte {}", offset)};
        break;
      case 2: {
        std::uint64_t length;
        if (!in.ReadVarint64(&length)) {
          return {WalkResult::kTruncated, fmt::format("the file ends inside the length of field {} at byte {}",
                                                      ModelFieldName(number), offset)};
        }
        const std::uint64_t start = static_cast<std::uint64_t>(in.CurrentPosition());
        // No ONNX file holds a field of 2 GiB or more (protobuf's limit), and every writer puts
        // ir_version first: random bytes that decode as an overlong first field are not a cut model.
        constexpr std::uint64_t kProtobufFieldLimit = std::uint64_t{1} << 31;
        if ((length > total_size || start + length > total_size) && (length >= kProtobufFieldLimit || fields == 1)) {
          return {WalkResult::kNotOnnx,
                  fmt::format("field {} at byte {} declares {} in a file of {}{}: the bytes are not an ONNX model "
                              "that was cut short",
                              ModelFieldName(number), offset, ByteCount(length), ByteCount(total_size),
                              length >= kProtobufFieldLimit ? ", more than protobuf allows" : " as its first field")};
        }
        if (length > total_size || start + length > total_size) {
          std::string detail =
              fmt::format("field {} at byte {} declares {}, but the file ends {} later", ModelFieldName(number), offset,
                          ByteCount(length), ByteCount(total_size - std::min(start, total_size)));
          if (number == 7) detail += ", " + DescribeGraphCut(in, total_size);
          return {WalkResult::kTruncated, std::move(detail)};
        }
        if (!in.Skip(static_cast<int>(length))) {
          return {WalkResult::kTruncated,
                  fmt::format("the file ends inside field {} at byte {}", ModelFieldName(number), offset)};
        }
        break;
      }
      default:
        return {WalkResult::kNotOnnx, fmt::format("protobuf wire type {} at byte {} is not valid", wire_type, offset)};
    }
  }
}

Diagnosis FileDiagnosis(std::string_view code, std::string message, const std::string& name) {
  Location location;
  location.file = name;
  return Diagnosis(Diagnose(code, std::move(message), std::move(location)));
}

// Diagnoses for content that is recognisably not an ONNX protobuf, or none.
std::vector<Diagnosis> DiagnoseContent(std::string_view head, std::uint64_t size, const std::string& name) {
  std::vector<Diagnosis> out;
  const std::string size_text = SizeText(size);
  switch (GuessContent(head)) {
    case ContentGuess::kEmpty:
      out.push_back(FileDiagnosis("file.empty", fmt::format("'{}' is empty (0 bytes)", name), name));
      break;
    case ContentGuess::kGitLfsPointer: {
      std::string oid_size;
      auto pos = head.find("\nsize ");
      if (pos != std::string_view::npos) {
        auto end = head.find('\n', pos + 6);
        oid_size =
            fmt::format("; the real file is {} bytes",
                        head.substr(pos + 6, end == std::string_view::npos ? std::string_view::npos : end - pos - 6));
      }
      out.push_back(
          FileDiagnosis("file.git-lfs-pointer",
                        fmt::format("'{}' is a {}-byte Git LFS pointer, not the model{}", name, size, oid_size), name));
      break;
    }
    case ContentGuess::kHtml:
      out.push_back(FileDiagnosis("file.html-page",
                                  fmt::format("'{}' ({}) is an HTML page, not an ONNX model", name, size_text), name));
      break;
    case ContentGuess::kJson:
      out.push_back(FileDiagnosis(
          "file.json-document", fmt::format("'{}' ({}) is a JSON document, not an ONNX model", name, size_text), name));
      break;
    case ContentGuess::kText:
      out.push_back(FileDiagnosis(
          "file.text-file", fmt::format("'{}' ({}) is a text file, not a binary ONNX model", name, size_text), name));
      break;
    case ContentGuess::kZip:
      out.push_back(FileDiagnosis("file.not-onnx",
                                  fmt::format("'{}' ({}) is a zip archive (a PyTorch .pt/.pth checkpoint, TorchScript "
                                              "or .keras file?), not an ONNX model",
                                              name, size_text),
                                  name));
      break;
    case ContentGuess::kHdf5:
      out.push_back(FileDiagnosis(
          "file.not-onnx",
          fmt::format("'{}' ({}) is an HDF5 file (a Keras .h5 model?), not an ONNX model", name, size_text), name));
      break;
    case ContentGuess::kOrtFormat: {
      auto d = FileDiagnosis(
          "file.not-onnx",
          fmt::format("'{}' ({}) is in ONNX Runtime's ORT format, not an ONNX protobuf", name, size_text), name);
      d.fix = "Use the .onnx model the ORT file was converted from; ortkit reads ONNX protobuf files.";
      out.push_back(std::move(d));
      break;
    }
    case ContentGuess::kBinary: break;
  }
  return out;
}

// Protobuf's parser refuses messages nested deeper than this (protobuf's own default is 100; ONNX
// models nest a graph three levels per If/Loop body, and real ones stay far below).
constexpr int kRecursionLimit = 1000;

// How deep the message nests, following the ONNX schema through every message-typed field (graphs
// inside node attributes, types inside types), counted up to `stop_at` + 1 at most. Iterative, so
// that a depth bomb cannot exhaust the stack here either.
int NestingDepth(pbio::ZeroCopyInputStream* stream, int stop_at) {
  namespace pb = google::protobuf;
  using pb::internal::WireFormatLite;
  pbio::CodedInputStream in(stream);
  in.SetTotalBytesLimit(INT_MAX);
  struct Level {
    const pb::Descriptor* type;
    pbio::CodedInputStream::Limit limit;
  };
  std::vector<Level> stack{{onnx::ModelProto::descriptor(), 0}};
  int deepest = 1;
  while (true) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) {  // the end of the current message, or of the data
      if (stack.size() == 1) break;
      in.PopLimit(stack.back().limit);
      stack.pop_back();
      continue;
    }
    const pb::FieldDescriptor* field =
        stack.back().type->FindFieldByNumber(static_cast<int>(WireFormatLite::GetTagFieldNumber(tag)));
    if (field != nullptr && field->type() == pb::FieldDescriptor::TYPE_MESSAGE &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::uint32_t length = 0;
      if (!in.ReadVarint32(&length)) break;
      stack.push_back(
          {field->message_type(), in.PushLimit(static_cast<int>(std::min<std::uint32_t>(length, INT_MAX)))});
      deepest = std::max(deepest, static_cast<int>(stack.size()));
      if (deepest > stop_at) break;
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) break;
  }
  return deepest;
}

/// A path that cannot be read at all: `diagnosis` says why, and the failure is kIo.
ModelLoad Unreadable(Diagnosis diagnosis) {
  ModelLoad load;
  load.failure = MakeError(ErrorKind::kIo, diagnosis.message);
  load.diagnoses.push_back(std::move(diagnosis));
  return load;
}

/// Bytes that are no usable model: the failure is kInvalidModel with the first error's message.
ModelLoad WithFailure(ModelLoad load) {
  if (load.model != nullptr || load.failure) return load;
  std::string message = "not a usable ONNX model";
  for (const auto& d : load.diagnoses) {
    if (d.severity == Severity::kError) {
      message = d.message;
      break;
    }
  }
  load.failure = MakeError(ErrorKind::kInvalidModel, std::move(message));
  return load;
}

ModelLoad ParseStream(pbio::ZeroCopyInputStream* walk_stream, pbio::ZeroCopyInputStream* parse_stream,
                      pbio::ZeroCopyInputStream* depth_stream, std::string_view head, std::uint64_t size,
                      const std::string& name) {
  ModelLoad load;
  load.diagnoses = DiagnoseContent(head, size, name);
  if (!load.diagnoses.empty()) return load;
  if (size > kProtobufLimit) {
    load.diagnoses.push_back(FileDiagnosis(
        "file.over-2gib", fmt::format("'{}' is {}, over protobuf's 2 GiB limit for one message", name, SizeText(size)),
        name));
    return load;
  }
  const WalkResult walk = WalkTopLevel(walk_stream, size);
  if (walk.kind == WalkResult::kTruncated) {
    load.diagnoses.push_back(FileDiagnosis(
        "file.truncated", fmt::format("'{}' ({}) is truncated: {}", name, SizeText(size), walk.detail), name));
    return load;
  }
  if (walk.kind == WalkResult::kNotOnnx) {
    load.diagnoses.push_back(FileDiagnosis(
        "file.not-onnx", fmt::format("'{}' ({}) is not an ONNX model: {}", name, SizeText(size), walk.detail), name));
    return load;
  }
  auto proto = std::make_unique<onnx::ModelProto>();
  pbio::CodedInputStream in(parse_stream);
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(kRecursionLimit);
  if (!proto->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    if (const int depth = NestingDepth(depth_stream, kRecursionLimit); depth > kRecursionLimit) {
      load.diagnoses.push_back(FileDiagnosis(
          "file.nesting-too-deep",
          fmt::format("'{}' ({}) nests its messages more than {} levels deep (graphs inside node attributes, or "
                      "types inside types); the protobuf parser refuses such depth",
                      name, SizeText(size), kRecursionLimit),
          name));
      return load;
    }
    load.diagnoses.push_back(
        FileDiagnosis("file.not-onnx",
                      fmt::format("'{}' ({}) is not a valid ONNX model: its top-level fields are intact but a nested "
                                  "message is corrupted (protobuf parsing failed)",
                                  name, SizeText(size)),
                      name));
    return load;
  }
  if (!proto->has_graph()) {
    load.diagnoses.push_back(FileDiagnosis(
        "file.no-graph", fmt::format("'{}' ({}) parses as a protobuf but holds no graph", name, SizeText(size)), name));
    return load;
  }
  load.model = std::make_unique<ModelFile>();
  load.model->size_bytes = size;
  load.model->proto = std::move(proto);
  return load;
}

}  // namespace

std::filesystem::path ModelFile::BaseDirectory() const {
  if (path.empty()) return std::filesystem::current_path();
  auto parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

ContentGuess GuessContent(std::string_view head) {
  if (head.empty()) return ContentGuess::kEmpty;
  if (head.substr(0, 4) == std::string_view("PK\x03\x04", 4)) return ContentGuess::kZip;
  if (head.substr(0, 4) == "\x89HDF") return ContentGuess::kHdf5;
  if (head.size() >= 8 && head.substr(4, 4) == "ORTM") return ContentGuess::kOrtFormat;
  if (head.rfind("version https://git-lfs.github.com/spec/", 0) == 0) return ContentGuess::kGitLfsPointer;
  if (!LooksLikeText(head.substr(0, 1024))) return ContentGuess::kBinary;
  const std::string_view trimmed = TrimLeft(head);
  const std::string lower = Lower(trimmed.substr(0, 256));
  if (lower.rfind("<!doctype html", 0) == 0 || lower.rfind("<html", 0) == 0 ||
      lower.find("<html") != std::string::npos || lower.find("<head>") != std::string::npos ||
      lower.find("<body") != std::string::npos) {
    return ContentGuess::kHtml;
  }
  if (!trimmed.empty() && (trimmed[0] == '{' || trimmed[0] == '[')) return ContentGuess::kJson;
  return ContentGuess::kText;
}

ModelLoad LoadModelFile(const std::filesystem::path& path) {
  ModelLoad load;
  const std::string name = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    auto d = FileDiagnosis("file.not-found", fmt::format("'{}' does not exist", name), name);
    if (path.is_relative()) d.message += fmt::format(" (relative to {})", std::filesystem::current_path().string());
    return Unreadable(std::move(d));
  }
  if (std::filesystem::is_directory(status)) {
    auto d = FileDiagnosis("file.is-directory", fmt::format("'{}' is a directory", name), name);
    if (std::filesystem::exists(path / "model.onnx", ec))
      d.fix = fmt::format("Pass '{}' instead.", (path / "model.onnx").string());
    return Unreadable(std::move(d));
  }
  if (!std::filesystem::is_regular_file(status)) {
    // Opening a named pipe would wait for a writer forever; a device has no size and no end.
    return Unreadable(FileDiagnosis(
        "file.not-regular", fmt::format("'{}' is {}, not a regular file", name, DescribeFileType(status)), name));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Unreadable(
        FileDiagnosis("file.unreadable", fmt::format("'{}' cannot be opened: {}", name, std::strerror(errno)), name));
  }
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  std::string head(4096, '\0');
  const ssize_t got = ::pread(fd, head.data(), head.size(), 0);
  if (got < 0) {
    const int read_errno = errno;
    ::close(fd);
    return Unreadable(FileDiagnosis("file.unreadable",
                                    fmt::format("'{}' cannot be read: {}", name, std::strerror(read_errno)), name));
  }
  head.resize(static_cast<std::size_t>(got));
  {
    pbio::FileInputStream walk_stream(fd, 1 << 20);
    // The parse stream must start at offset 0 again: a second stream over a dup'd descriptor.
    const int parse_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    pbio::FileInputStream parse_stream(parse_fd, 1 << 20);
    // Read only when the parse fails, to tell a depth bomb from corruption.
    const int depth_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    pbio::FileInputStream depth_stream(depth_fd, 1 << 16);
    load = ParseStream(&walk_stream, &parse_stream, &depth_stream, head, size, name);
    ::close(depth_fd);
    ::close(parse_fd);
  }
  ::close(fd);
  if (load.model) {
    load.model->path = path;
    auto ext = path.extension().string();
    if (ext != ".onnx" && ext != ".ONNX") {
      load.diagnoses.push_back(
          FileDiagnosis("file.unknown-extension", fmt::format("'{}' does not end in .onnx", name), name));
    }
  }
  return WithFailure(std::move(load));
}

ModelLoad ParseModelBytes(std::string_view bytes, const std::string& name) {
  pbio::ArrayInputStream walk_stream(bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX)));
  pbio::ArrayInputStream parse_stream(bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX)));
  pbio::ArrayInputStream depth_stream(bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX)));
  return WithFailure(
      ParseStream(&walk_stream, &parse_stream, &depth_stream, bytes.substr(0, 4096), bytes.size(), name));
}

}  // namespace ortkit
