#pragma once
// The arithmetic of quantising constant weights, apart from any graph: int8 per output channel
// (symmetric, as ONNX Runtime's integer kernels take them) and 4-bit blocks along the reduction axis
// (MatMulNBits' layout). Pure functions over float spans; the passes put the results in the graph.

#include <cstdint>
#include <span>
#include <vector>

namespace ortkit {

/// Int8 weights with one scale per channel and zero points of 0.
struct Int8Channels {
  std::vector<std::int8_t> values;  ///< the input's layout
  std::vector<float> scales;        ///< one per channel
};

/// Quantises a [rows, cols] row-major matrix symmetrically, one scale per column (`per_column`: the
/// output channels of a MatMul's [K, N] weight) or per row (a Conv's [M, ...] or a transposed Gemm's
/// weight). With `reduce_range` the values use 7 bits ([-63, 63]): on x86 without VNNI the 8-bit
/// multiply-add saturates a 16-bit sum when both operands use their full range. A channel of zeros
/// gets scale 1 so that dequantising gives its zeros back.
Int8Channels QuantizeInt8PerChannel(std::span<const float> weights, std::int64_t rows, std::int64_t cols,
                                    bool per_column, bool reduce_range);

/// 4-bit weights in MatMulNBits' layout for a [K, N] weight: for each column n, ceil(K / block) blocks of
/// `block` values along K, two to a byte (the first in the low nibble), a float scale per block and, when
/// asymmetric, a 4-bit zero point per block packed the same way (symmetric blocks use MatMulNBits'
/// default zero point, 8). A partial last block is padded with zeros.
struct Int4Blocks {
  std::int64_t k = 0;
  std::int64_t n = 0;
  std::int64_t block = 0;
  std::int64_t blocks_per_column = 0;
  std::vector<std::uint8_t> packed;       ///< [N, blocks_per_column, block / 2]
  std::vector<float> scales;              ///< [N * blocks_per_column]
  std::vector<std::uint8_t> zero_points;  ///< [N * ceil(blocks_per_column / 2)]; empty when symmetric
};

/// `block` must be a power of two of at least 16. Asymmetric blocks span [min(0, lowest), max(0,
/// highest)] in 16 steps; symmetric ones map the value of largest magnitude to -8.
Int4Blocks QuantizeInt4Blocks(std::span<const float> weights, std::int64_t k, std::int64_t n, std::int64_t block,
                              bool symmetric);

/// The float value of element (row, col) of a [K, N] weight that `blocks` holds (for tests and error
/// estimates).
float DequantizeInt4(const Int4Blocks& blocks, std::int64_t row, std::int64_t col);

}  // namespace ortkit
