#include "ortkit/model/external_data.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "ortkit/core/files.h"
#include "ortkit/core/units.h"
#include "ortkit/model/graph_walk.h"

namespace ortkit {
namespace {

bool ParseInt(const std::string& text, std::int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && *out >= 0;
}

void AddTensor(const onnx::TensorProto& tensor, std::vector<ExternalTensor>* out, std::vector<Diagnosis>* problems) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
  ExternalTensor entry;
  entry.tensor = tensor.name();
  bool ok = true;
  for (const auto& kv : tensor.external_data()) {
    if (kv.key() == "location")
      entry.location = kv.value();
    else if (kv.key() == "offset")
      ok = ok && ParseInt(kv.value(), &entry.offset);
    else if (kv.key() == "length")
      ok = ok && ParseInt(kv.value(), &entry.length);
  }
  if (entry.location.empty() || !ok) {
    if (problems != nullptr) {
      Location where;
      where.tensor = tensor.name();
      problems->push_back(
          Diagnose("external-data.bad-location",
                   fmt::format("tensor '{}' is marked as external data but its entry {}", tensor.name(),
                               entry.location.empty() ? "has no location"
                                                      : "has an offset or length that is not a non-negative integer"),
                   where));
    }
    return;
  }
  out->push_back(std::move(entry));
}

}  // namespace

Result<std::filesystem::path> ResolveExternalLocation(const std::filesystem::path& base, const std::string& location) {
  namespace fs = std::filesystem;
  const fs::path relative(location);
  auto outside = [&](std::string_view why) {
    return MakeError(ErrorKind::kInvalidModel,
                     fmt::format("the external data location '{}' {}, outside the model's folder", location, why));
  };
  if (relative.is_absolute()) return outside("is an absolute path");
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(fs::absolute(base, ec), ec);
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("the model's folder {}: {}", base.string(), ec.message()));
  const fs::path full = fs::weakly_canonical(folder / relative, ec);
  if (ec) return MakeError(ErrorKind::kIo, fmt::format("external data file '{}': {}", location, ec.message()));
  // Inside when the folder's components are a prefix of the file's.
  auto [in_folder, in_file] = std::mismatch(folder.begin(), folder.end(), full.begin(), full.end());
  const bool empty_tail = in_folder != folder.end() && in_folder->empty() && std::next(in_folder) == folder.end();
  if (in_folder != folder.end() && !empty_tail) {
    const bool climbs = std::any_of(relative.begin(), relative.end(), [](const fs::path& p) { return p == ".."; });
    return outside(climbs ? fmt::format("climbs out with '..' to {}", full.string())
                          : fmt::format("leads through a symbolic link to {}", full.string()));
  }
  return full;
}

std::vector<ExternalTensor> ListExternalTensors(const onnx::ModelProto& model, std::vector<Diagnosis>* problems) {
  std::vector<ExternalTensor> out;
  ForEachGraph(model.graph(), [&](const onnx::GraphProto& graph, const std::string&) {
    for (const auto& init : graph.initializer()) AddTensor(init, &out, problems);
    for (const auto& node : graph.node()) {
      for (const auto& attr : node.attribute()) {
        if (attr.has_t()) AddTensor(attr.t(), &out, problems);
        for (const auto& t : attr.tensors()) AddTensor(t, &out, problems);
      }
    }
  });
  return out;
}

std::vector<Diagnosis> CheckExternalData(const ModelFile& model) {
  std::vector<Diagnosis> out;
  const auto tensors = ListExternalTensors(*model.proto, &out);
  const std::filesystem::path base = model.BaseDirectory();
  std::map<std::string, std::int64_t> file_sizes;  // location -> size, -1 when missing
  std::map<std::string, const onnx::TensorProto*> by_name;
  ForEachGraph(model.proto->graph(), [&](const onnx::GraphProto& graph, const std::string&) {
    for (const auto& init : graph.initializer()) by_name[init.name()] = &init;
  });

  for (const auto& t : tensors) {
    Location where;
    where.tensor = t.tensor;
    where.file = t.location;
    auto [it, inserted] = file_sizes.try_emplace(t.location, -1);
    if (inserted) {
      auto full = ResolveExternalLocation(base, t.location);
      if (!full.ok()) {
        // Not looked at any further: the file outside is none of the model's business.
        out.push_back(Diagnose("external-data.path-escapes",
                               fmt::format("tensor '{}': {}", t.tensor, full.error().message), where));
        continue;
      }
      std::error_code ec;
      if (std::filesystem::is_regular_file(*full, ec))
        it->second = static_cast<std::int64_t>(std::filesystem::file_size(*full, ec));
      if (it->second < 0) {
        // Something other than a file may sit there: say what, rather than that nothing is.
        const auto status = std::filesystem::status(*full, ec);
        const std::string found =
            std::filesystem::exists(status)
                ? fmt::format("{} is {}, not a regular file", full->string(), DescribeFileType(status))
                : fmt::format("is not at {}", full->string());
        out.push_back(Diagnose(
            "external-data.missing-file",
            fmt::format("external data file '{}' (first needed by tensor '{}') {}", t.location, t.tensor, found),
            where));
      }
    }
    const std::int64_t file_size = it->second;
    if (file_size < 0) continue;
    const std::int64_t length = t.length >= 0 ? t.length : file_size - t.offset;
    if (t.offset > file_size || length > file_size - t.offset) {
      // Both are non-negative int64 values read from the model, so their sum fits in uint64.
      const std::uint64_t end = static_cast<std::uint64_t>(t.offset) + static_cast<std::uint64_t>(length);
      out.push_back(Diagnose("external-data.out-of-range",
                             fmt::format("tensor '{}' reads bytes {}..{} of '{}', which has only {} bytes", t.tensor,
                                         t.offset, end, t.location, file_size),
                             where));
      continue;
    }
    auto found = by_name.find(t.tensor);
    if (found != by_name.end()) {
      const auto& proto = *found->second;
      const long long count = ElementCount(proto);
      const int element_size = ElementSize(proto.data_type());
      // The shape comes from the model too: count × size may not fit in 64 bits.
      unsigned long long expected = 0;
      const bool overflows = __builtin_mul_overflow(static_cast<unsigned long long>(count), element_size, &expected);
      if (count >= 0 && element_size > 0 && t.length >= 0 &&
          (overflows || expected != static_cast<unsigned long long>(t.length))) {
        out.push_back(Diagnose(
            "external-data.size-mismatch",
            fmt::format("tensor '{}' has {} elements of {} bytes ({}) but its external data length is {}", t.tensor,
                        count, element_size,
                        overflows ? std::string("more than 2^64 bytes") : fmt::format("{} bytes", expected), t.length),
            where));
      }
    }
  }
  return out;
}

namespace {

/// Calls `visit` on every TensorProto the model stores: initializers and Constant-like attributes,
/// in every graph. Depth-limited like ForEachGraph.
template <typename Visit>
Status ForEachStoredTensor(onnx::GraphProto& graph, int depth, Visit& visit) {
  if (depth > 64) return OkStatus();
  for (auto& tensor : *graph.mutable_initializer()) ORTKIT_RETURN_IF_ERROR(visit(tensor));
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) ORTKIT_RETURN_IF_ERROR(visit(*attr.mutable_t()));
      for (auto& t : *attr.mutable_tensors()) ORTKIT_RETURN_IF_ERROR(visit(t));
      if (attr.has_g()) ORTKIT_RETURN_IF_ERROR(ForEachStoredTensor(*attr.mutable_g(), depth + 1, visit));
      for (auto& g : *attr.mutable_graphs()) ORTKIT_RETURN_IF_ERROR(ForEachStoredTensor(g, depth + 1, visit));
    }
  }
  return OkStatus();
}

}  // namespace

Status InlineExternalData(onnx::ModelProto& model, const std::filesystem::path& base, std::uint64_t max_bytes,
                          std::string_view purpose, std::string_view remedy) {
  namespace fs = std::filesystem;
  std::uint64_t inlined = 0;
  auto inline_tensor = [&](onnx::TensorProto& tensor) -> Status {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return OkStatus();
    std::string location;
    std::int64_t offset = 0;
    std::int64_t length = -1;
    for (const auto& entry : tensor.external_data()) {
      bool ok = true;
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") ok = ParseInt(entry.value(), &offset);
      if (entry.key() == "length") ok = ParseInt(entry.value(), &length);
      if (!ok) {
        return MakeError(ErrorKind::kInvalidModel, fmt::format("tensor '{}': external data {} '{}' is not a number",
                                                               tensor.name(), entry.key(), entry.value()));
      }
    }
    auto resolved = ResolveExternalLocation(base, location);
    if (!resolved.ok()) {
      return MakeError(resolved.error().kind, fmt::format("tensor '{}': {}", tensor.name(), resolved.error().message));
    }
    const fs::path file = *resolved;
    std::error_code ec;
    const auto file_size = fs::file_size(file, ec);
    if (ec)
      return MakeError(ErrorKind::kIo, fmt::format("tensor '{}': external data file '{}': {}", tensor.name(),
                                                   file.string(), ec.message()));
    if (length < 0) length = static_cast<std::int64_t>(file_size) - offset;
    if (length < 0 || static_cast<std::uint64_t>(offset) + static_cast<std::uint64_t>(length) > file_size) {
      return MakeError(
          ErrorKind::kInvalidModel,
          fmt::format("tensor '{}': external data range [{}, {}) lies outside '{}' ({} bytes)", tensor.name(), offset,
                      static_cast<std::uint64_t>(offset) + static_cast<std::uint64_t>(length), file.string(),
                      file_size));
    }
    inlined += static_cast<std::uint64_t>(length);
    if (inlined > max_bytes) {
      return MakeError(ErrorKind::kUnavailable,
                       fmt::format("{}, and they exceed {}; {}", purpose, HumanBytes(max_bytes), remedy));
    }
    std::string bytes(static_cast<std::size_t>(length), '\0');
    std::ifstream in(file, std::ios::binary);
    in.seekg(offset);
    if (!in.read(bytes.data(), length)) {
      return MakeError(ErrorKind::kIo, fmt::format("tensor '{}': reading {} bytes of '{}' failed", tensor.name(),
                                                   length, file.string()));
    }
    tensor.set_raw_data(std::move(bytes));
    tensor.clear_external_data();
    tensor.set_data_location(onnx::TensorProto::DEFAULT);
    return OkStatus();
  };
  return ForEachStoredTensor(*model.mutable_graph(), 0, inline_tensor);
}

Status WriteModel(onnx::ModelProto model, const std::filesystem::path& path, bool external_data) {
  constexpr std::size_t kExternalThreshold = 1024;
  constexpr std::uint64_t kAlignment = 4096;
  const std::string data_name = path.filename().string() + ".data";
  const std::filesystem::path data_path = path.parent_path() / data_name;
  ORTKIT_RETURN_IF_ERROR(CheckOutputFile(path, "the model"));
  if (external_data) {
    ORTKIT_RETURN_IF_ERROR(CheckOutputFile(data_path, "its external data"));
    std::ofstream data(data_path, std::ios::binary | std::ios::trunc);
    if (!data) return MakeError(ErrorKind::kIo, fmt::format("cannot write '{}'", data_path.string()));
    std::uint64_t offset = 0;
    auto move_out = [&](onnx::TensorProto& tensor) -> Status {
      if (tensor.data_location() == onnx::TensorProto::EXTERNAL || !tensor.has_raw_data() ||
          tensor.raw_data().size() < kExternalThreshold) {
        return OkStatus();
      }
      const std::uint64_t padding = (kAlignment - offset % kAlignment) % kAlignment;
      const std::string zeros(padding, '\0');
      data.write(zeros.data(), static_cast<std::streamsize>(padding));
      offset += padding;
      const std::string& bytes = tensor.raw_data();
      data.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      auto add = [&](const char* key, const std::string& value) {
        auto* entry = tensor.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
      };
      add("location", data_name);
      add("offset", std::to_string(offset));
      add("length", std::to_string(bytes.size()));
      offset += bytes.size();
      tensor.clear_raw_data();
      tensor.set_data_location(onnx::TensorProto::EXTERNAL);
      return OkStatus();
    };
    ORTKIT_RETURN_IF_ERROR(ForEachStoredTensor(*model.mutable_graph(), 0, move_out));
    if (!data.flush()) return MakeError(ErrorKind::kIo, fmt::format("writing '{}' failed", data_path.string()));
    data.close();
    std::error_code ignored;
    if (offset == 0) std::filesystem::remove(data_path, ignored);  // every tensor was small
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return MakeError(ErrorKind::kIo, fmt::format("cannot write '{}'", path.string()));
  if (!model.SerializeToOstream(&out) || !out.flush()) {
    return MakeError(ErrorKind::kIo,
                     fmt::format("writing '{}' failed (a model over 2 GiB needs external data)", path.string()));
  }
  return OkStatus();
}

}  // namespace ortkit
