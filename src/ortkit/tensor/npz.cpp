#include "ortkit/tensor/npz.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <string>

#include <fmt/format.h>

#include "ortkit/core/files.h"
#include "ortkit/core/units.h"
#include "ortkit/tensor/npy.h"

namespace ortkit {
namespace {

// Deflate cannot expand data by more than 1032:1, so a member that claims more is lying about its
// size; checking this first keeps a 1 KB archive from making ortkit allocate gigabytes.
constexpr std::uint64_t kMaxDeflateRatio = 1032;
constexpr std::string_view kNpySuffix = ".npy";
// numpy.savez dates every member 1980-01-01, the zip epoch; so does ortkit, for reproducible files.
constexpr time_t kZipEpoch = 315532800;

struct ArchiveDiscarder {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
using Archive = std::unique_ptr<zip_t, ArchiveDiscarder>;

struct MemberCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using Member = std::unique_ptr<zip_file_t, MemberCloser>;

std::string ZipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// Why libzip could not open the archive. A truncated download starts like a zip but has lost the
// central directory at its end, which libzip reports as "Not a zip archive"; say so.
Error OpenFailure(std::string_view name, int code, std::string_view head) {
  const ErrorKind kind = code == ZIP_ER_OPEN || code == ZIP_ER_READ ? ErrorKind::kIo : ErrorKind::kInvalidArgument;
  if (code == ZIP_ER_NOZIP && head.starts_with(std::string_view("PK\x03\x04", 4))) {
    return MakeError(kind,
                     fmt::format("{}: starts like a zip archive but its central directory (at the end) is missing or "
                                 "damaged: the file is probably truncated",
                                 name));
  }
  if (code == ZIP_ER_NOZIP && head.starts_with("\x93NUMPY")) {
    return MakeError(kind, fmt::format("{}: is an .npy file, not an .npz archive", name));
  }
  return MakeError(kind, fmt::format("{}: not a readable .npz (zip) archive: {}", name, ZipErrorText(code)));
}

Result<NamedTensor> ReadMember(zip_t* archive, zip_uint64_t index, const zip_stat_t& stat,
                               std::string_view archive_name, std::uint64_t archive_bytes, const HeaderCheck& check) {
  const std::string member_name = stat.name;
  const std::string label = fmt::format("{}:{}", archive_name, member_name);
  if (!member_name.ends_with(kNpySuffix)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: member is not an .npy file; .npz archives hold NAME.npy members only", label));
  }
  if ((stat.valid & ZIP_STAT_ENCRYPTION_METHOD) != 0 && stat.encryption_method != ZIP_EM_NONE) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: member is encrypted; numpy never encrypts .npz members", label));
  }
  if ((stat.valid & ZIP_STAT_COMP_METHOD) != 0 && !zip_compression_method_supported(stat.comp_method, 0)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: compressed with zip method {}, which this libzip cannot decompress (numpy writes "
                                 "stored or deflated members)",
                                 label, stat.comp_method));
  }
  const bool stored = (stat.valid & ZIP_STAT_COMP_METHOD) != 0 && stat.comp_method == ZIP_CM_STORE;
  if ((stat.valid & ZIP_STAT_SIZE) == 0 || (stat.valid & ZIP_STAT_COMP_SIZE) == 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: the archive does not record the member's size", label));
  }
  if (stat.comp_size > archive_bytes) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: the archive says the member is {} bytes compressed, more than the whole archive's {}: "
                    "the archive is corrupt",
                    label, stat.comp_size, archive_bytes));
  }
  if ((stored && stat.size != stat.comp_size) ||
      (!stored && stat.comp_size < std::numeric_limits<std::uint64_t>::max() / kMaxDeflateRatio &&
       stat.size > stat.comp_size * kMaxDeflateRatio + 1024)) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: the archive says the member is {} bytes compressed to {}, which {}: the archive is corrupt",
                    label, stat.size, stat.comp_size,
                    stored ? "a stored member cannot be" : "exceeds deflate's 1032:1 maximum"));
  }
  if (!stored && stat.size > kMaxInflatedBytes) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: the member is {} compressed and inflates to {}, over ortkit's limit of {} for a "
                    "compressed member: save it uncompressed (numpy.savez, not savez_compressed) or as "
                    "an .npy file",
                    label, HumanBytes(stat.comp_size), HumanBytes(stat.size), HumanBytes(kMaxInflatedBytes)));
  }
  Member file(zip_fopen_index(archive, index, 0));
  if (file == nullptr) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: cannot open the member: {}", label, zip_strerror(archive)));
  }
  ByteReader read = [&](std::byte* destination, std::size_t size) -> Result<std::size_t> {
    const zip_int64_t got = zip_fread(file.get(), destination, size);
    if (got < 0) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{}: the member's data is corrupt: {}", label, zip_file_strerror(file.get())));
    }
    return static_cast<std::size_t>(got);
  };
  std::string tensor_name = member_name.substr(0, member_name.size() - kNpySuffix.size());
  ORTKIT_ASSIGN_OR_RETURN(Tensor tensor, ReadNpyStream(read, stat.size, label, check, tensor_name));
  return NamedTensor{std::move(tensor_name), std::move(tensor)};
}

// `archive_bytes` (the archive's size) bounds what its directory may claim, and so what is allocated.
Result<std::vector<NamedTensor>> ReadArchive(zip_t* archive, std::string_view name, std::uint64_t archive_bytes,
                                             const HeaderCheck& check = nullptr) {
  const zip_int64_t entries = zip_get_num_entries(archive, 0);
  if (entries < 0)
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: cannot list the archive's members", name));
  std::vector<NamedTensor> tensors;
  std::set<std::string> seen;
  for (zip_int64_t i = 0; i < entries; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive, index, 0, &stat) != 0 || (stat.valid & ZIP_STAT_NAME) == 0 || stat.name == nullptr) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{}: member #{} cannot be read: {}", name, i, zip_strerror(archive)));
    }
    const std::string_view member(stat.name);
    if (member.ends_with('/')) continue;  // a folder entry some zip tools add
    ORTKIT_ASSIGN_OR_RETURN(NamedTensor tensor, ReadMember(archive, index, stat, name, archive_bytes, check));
    if (!seen.insert(tensor.name).second) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: two members are named '{}'", name, member));
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

// A libzip source that yields an .npy header and then a tensor's buffer, so that writing an
// archive never copies the data. Seekable because libzip rereads a member whose deflated form
// came out larger than the original, to store it instead.
struct NpySource {
  std::string header;
  const Tensor* tensor = nullptr;
  std::uint64_t position = 0;
  zip_error_t error;

  std::uint64_t size() const { return header.size() + tensor->byte_size(); }

  static zip_int64_t Callback(void* state, void* data, zip_uint64_t length, zip_source_cmd_t command) {
    auto* self = static_cast<NpySource*>(state);
    switch (command) {
      case ZIP_SOURCE_OPEN: self->position = 0; return 0;
      case ZIP_SOURCE_READ: return static_cast<zip_int64_t>(self->Read(static_cast<char*>(data), length));
      case ZIP_SOURCE_CLOSE: return 0;
      case ZIP_SOURCE_STAT: {
        auto* stat = static_cast<zip_stat_t*>(data);
        zip_stat_init(stat);
        stat->size = self->size();
        stat->mtime = kZipEpoch;
        stat->valid |= ZIP_STAT_SIZE | ZIP_STAT_MTIME;
        return sizeof(zip_stat_t);
      }
      case ZIP_SOURCE_ERROR: return zip_error_to_data(&self->error, data, length);
      case ZIP_SOURCE_FREE:
        zip_error_fini(&self->error);
        delete self;
        return 0;
      case ZIP_SOURCE_SEEK: {
        const zip_int64_t target =
            zip_source_seek_compute_offset(self->position, self->size(), data, length, &self->error);
        if (target < 0) return -1;
        self->position = static_cast<std::uint64_t>(target);
        return 0;
      }
      case ZIP_SOURCE_TELL: return static_cast<zip_int64_t>(self->position);
      case ZIP_SOURCE_SUPPORTS: return ZIP_SOURCE_SUPPORTS_SEEKABLE;
      default: zip_error_set(&self->error, ZIP_ER_OPNOTSUPP, 0); return -1;
    }
  }

  std::uint64_t Read(char* out, std::uint64_t length) {
    std::uint64_t done = 0;
    if (position < header.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(length, header.size() - position);
      std::memcpy(out, header.data() + position, n);
      done += n;
      position += n;
    }
    if (done < length && position < size()) {
      const std::uint64_t offset = position - header.size();
      const std::uint64_t n = std::min<std::uint64_t>(length - done, tensor->byte_size() - offset);
      std::memcpy(out + done, tensor->data() + offset, n);
      done += n;
      position += n;
    }
    return done;
  }
};

}  // namespace

Result<std::vector<NamedTensor>> ReadNpz(const std::filesystem::path& path, const HeaderCheck& check) {
  const std::string name = path.string();
  ORTKIT_ASSIGN_OR_RETURN(const std::uint64_t size, RegularFileSize(path, "an .npz archive"));
  if (size == 0) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: the file is empty", name));
  }
  int code = 0;
  Archive archive(zip_open(name.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (archive == nullptr) {
    std::ifstream in(path, std::ios::binary);
    char head[8] = {};
    in.read(head, sizeof head);
    return OpenFailure(name, code, std::string_view(head, static_cast<std::size_t>(in.gcount())));
  }
  return ReadArchive(archive.get(), name, size, check);
}

Result<std::vector<NamedTensor>> ParseNpz(std::string_view bytes, std::string_view name) {
  // libzip takes zero bytes for an empty archive; a file of zero bytes is a failed download.
  if (bytes.empty()) return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: the file is empty", name));
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    return MakeError(ErrorKind::kInternal, fmt::format("{}: cannot wrap the bytes for libzip: {}", name, text));
  }
  Archive archive(zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (archive == nullptr) {
    zip_source_free(source);
    const int code = zip_error_code_zip(&error);
    zip_error_fini(&error);
    return OpenFailure(name, code, bytes);
  }
  zip_error_fini(&error);
  return ReadArchive(archive.get(), name, bytes.size());
}

Status WriteNpz(const std::filesystem::path& path, std::span<const NamedTensor> tensors, NpzCompression compression) {
  const std::string name = path.string();
  std::set<std::string> seen;
  for (const NamedTensor& t : tensors) {
    if (t.name.empty())
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: a tensor has an empty name", name));
    if (!seen.insert(t.name).second) {
      return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: two tensors are named '{}'", name, t.name));
    }
  }
  int code = 0;
  Archive archive(zip_open(name.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (archive == nullptr)
    return MakeError(ErrorKind::kIo, fmt::format("{}: cannot create: {}", name, ZipErrorText(code)));
  for (const NamedTensor& t : tensors) {
    auto header = NpyHeaderFor(t.tensor);
    if (!header.ok())
      return MakeError(header.error().kind, fmt::format("{}: tensor '{}': {}", name, t.name, header.error().message));
    auto* state = new NpySource{std::move(header).value(), &t.tensor, 0, {}};
    zip_error_init(&state->error);
    zip_source_t* source = zip_source_function(archive.get(), &NpySource::Callback, state);
    if (source == nullptr) {
      zip_error_fini(&state->error);
      delete state;
      return MakeError(ErrorKind::kInternal, fmt::format("{}: libzip: {}", name, zip_strerror(archive.get())));
    }
    const std::string member = t.name + std::string(kNpySuffix);
    const zip_int64_t index = zip_file_add(archive.get(), member.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{}: cannot add '{}': {}", name, member, zip_strerror(archive.get())));
    }
    const zip_int32_t method = compression == NpzCompression::kDeflated ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
    if (zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), method, 0) != 0) {
      return MakeError(ErrorKind::kInternal,
                       fmt::format("{}: cannot set compression: {}", name, zip_strerror(archive.get())));
    }
  }
  // zip_close writes everything; only then are the tensors read.
  zip_t* raw = archive.release();
  if (zip_close(raw) != 0) {
    std::string text = zip_strerror(raw);
    zip_discard(raw);
    return MakeError(ErrorKind::kIo, fmt::format("{}: writing the archive failed: {}", name, text));
  }
  return OkStatus();
}

}  // namespace ortkit
