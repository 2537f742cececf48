#pragma once
// .npy files: numpy's array format, header versions 1.0, 2.0 and 3.0.
// Reading accepts every layout numpy writes for ortkit's element types and hands back a C-ordered,
// native-endian Tensor: big-endian data is byte-swapped and Fortran-ordered data transposed.
// Object, unicode, byte-string, complex, datetime and structured arrays are refused with a
// message that says what the file holds. The header is untrusted: its length is bounded, its
// dict is parsed by a small literal parser that fails with a message on anything malformed, and
// the data size it implies is checked against the file before anything is allocated.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "ortkit/core/result.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// Fills up to `size` bytes at `destination` and returns how many it wrote; 0 only at the end.
using ByteReader = std::function<Result<std::size_t>(std::byte* destination, std::size_t size)>;

/// Called with a tensor's name and the element type and shape its header declares, before any of
/// its data is read (or, in an archive, inflated): the reader's caller refuses a tensor that cannot
/// fit the model at the cost of its header. An error stops the read and is returned as it is.
using HeaderCheck = std::function<Status(std::string_view tensor, DataType type, std::span<const std::int64_t> shape)>;

/// Longest header dict ortkit parses (numpy itself refuses headers over 10,000 bytes by default).
inline constexpr std::uint32_t kMaxNpyHeaderBytes = 1 << 20;

/// Reads a .npy file. The data goes straight from the file into the tensor's buffer, so peak
/// memory is the tensor and a few pages; only Fortran-ordered files need a second buffer.
/// `check`, when given, sees the header first (the tensor named after the file's stem).
Result<Tensor> ReadNpy(const std::filesystem::path& path, const HeaderCheck& check = nullptr);

/// Parses .npy bytes held in memory. `name` labels every message ("x.npy", "inputs.npz:a.npy").
Result<Tensor> ParseNpy(std::string_view bytes, std::string_view name);

/// Reads one .npy stream from `read`, which yields exactly `stream_size` bytes if the stream is
/// honest. The header's data size is checked against `stream_size` before the tensor is
/// allocated; a stream that then ends early or runs on past the data is reported too. `check`, when
/// given, sees the header (as the tensor `tensor`) before anything is allocated.
Result<Tensor> ReadNpyStream(const ByteReader& read, std::uint64_t stream_size, std::string_view name,
                             const HeaderCheck& check = nullptr, std::string_view tensor = {});

/// The header numpy would write for `tensor`: magic, version (1.0, or 2.0 when the dict is too
/// long for 1.0), length and dict, padded with spaces so the data starts 64-byte aligned.
/// Fails for string and bfloat16 tensors, which have no numeric numpy dtype.
Result<std::string> NpyHeaderFor(const Tensor& tensor);

/// Header and data of `tensor` as one string (for archives and tests).
Result<std::string> EncodeNpy(const Tensor& tensor);

/// Writes `tensor` to `path` as .npy, the data straight from the tensor's buffer.
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace ortkit
