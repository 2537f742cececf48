#include "ortkit/model/external_data.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

#include <fmt/format.h>

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
        out.push_back(Diagnose("external-data.missing-file",
                               fmt::format("external data file '{}' (first needed by tensor '{}') is not at {}",
                                           t.location, t.tensor, full->string()),
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

}  // namespace ortkit
