#pragma once
// .npz archives: a zip of NAME.npy members, as numpy.savez (stored) and numpy.savez_compressed
// (deflated) write them. Each member is decompressed straight into its tensor's buffer in
// libzip's chunks, never into a whole intermediate copy.

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "ortkit/core/result.h"
#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/tensor.h"

namespace ortkit {

/// Reads every member of an .npz, in archive order. Member "a.npy" becomes the tensor named "a".
/// Fails on the first member that is not an .npy (numpy's archives hold nothing else), is
/// encrypted, is corrupt or holds a dtype the .npy reader refuses; the message names the member.
/// `check`, when given, sees each member's header before the member is inflated. A deflated
/// member that would inflate beyond kMaxInflatedBytes is refused (stored members are bounded by
/// the archive's own size).
Result<std::vector<NamedTensor>> ReadNpz(const std::filesystem::path& path, const HeaderCheck& check = nullptr);

/// The most bytes one deflated member may inflate to.
inline constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t{2} << 30;

/// Parses an .npz held in memory. `name` labels every message.
Result<std::vector<NamedTensor>> ParseNpz(std::string_view bytes, std::string_view name);

enum class NpzCompression {
  kStored,    ///< numpy.savez
  kDeflated,  ///< numpy.savez_compressed
};

/// Writes `tensors` as NAME.npy members. Each member's data streams from the tensor's buffer
/// while the archive is written, so no copy of the data is made. Fails for duplicate or empty
/// names and for tensors .npy cannot hold (strings, bfloat16).
Status WriteNpz(const std::filesystem::path& path, std::span<const NamedTensor> tensors,
                NpzCompression compression = NpzCompression::kStored);

}  // namespace ortkit
