#include "ortkit/optimize/weight_quantization.h"

#include <algorithm>
#include <cmath>

namespace ortkit {

Int8Channels QuantizeInt8PerChannel(std::span<const float> weights, std::int64_t rows, std::int64_t cols,
                                    bool per_column, bool reduce_range) {
  const float limit = reduce_range ? 63.0f : 127.0f;
  const std::int64_t channels = per_column ? cols : rows;
  Int8Channels out;
  out.values.resize(weights.size());
  out.scales.assign(static_cast<std::size_t>(channels), 0.0f);
  const auto channel_of = [&](std::int64_t i) { return per_column ? i % cols : i / cols; };
  const std::int64_t count = rows * cols;
  for (std::int64_t i = 0; i < count; ++i) {
    float& largest = out.scales[static_cast<std::size_t>(channel_of(i))];
    largest = std::max(largest, std::abs(weights[i]));
  }
  for (float& s : out.scales) s = s > 0 && std::isfinite(s) ? s / limit : 1.0f;
  for (std::int64_t i = 0; i < count; ++i) {
    const float q = std::nearbyint(weights[i] / out.scales[static_cast<std::size_t>(channel_of(i))]);
    out.values[i] = static_cast<std::int8_t>(std::clamp(q, -limit, limit));
  }
  return out;
}

namespace {

struct BlockScale {
  float scale = 1;
  int zero_point = 8;
};

BlockScale ScaleOf(const float* column_values, std::int64_t count, bool symmetric) {
  if (symmetric) {
    float extreme = 0;
    for (std::int64_t i = 0; i < count; ++i) {
      if (std::abs(column_values[i]) > std::abs(extreme)) extreme = column_values[i];
    }
    return {extreme != 0 ? extreme / -8.0f : 1.0f, 8};
  }
  float low = 0, high = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    low = std::min(low, column_values[i]);
    high = std::max(high, column_values[i]);
  }
  if (high - low <= 0) return {1.0f, 8};
  const float scale = (high - low) / 15.0f;
  return {scale, static_cast<int>(std::clamp(std::nearbyint(-low / scale), 0.0f, 15.0f))};
}

}  // namespace

Int4Blocks QuantizeInt4Blocks(std::span<const float> weights, std::int64_t k, std::int64_t n, std::int64_t block,
                              bool symmetric) {
  Int4Blocks out;
  out.k = k;
  out.n = n;
  out.block = block;
  out.blocks_per_column = (k + block - 1) / block;
  const std::int64_t blob = block / 2;
  out.packed.assign(static_cast<std::size_t>(n * out.blocks_per_column * blob), 0);
  out.scales.assign(static_cast<std::size_t>(n * out.blocks_per_column), 1.0f);
  const std::int64_t zp_per_column = (out.blocks_per_column + 1) / 2;
  if (!symmetric) out.zero_points.assign(static_cast<std::size_t>(n * zp_per_column), 0);
  std::vector<float> values(static_cast<std::size_t>(block));
  for (std::int64_t col = 0; col < n; ++col) {
    for (std::int64_t b = 0; b < out.blocks_per_column; ++b) {
      const std::int64_t begin = b * block;
      const std::int64_t count = std::min(block, k - begin);
      std::fill(values.begin(), values.end(), 0.0f);
      for (std::int64_t i = 0; i < count; ++i) values[i] = weights[(begin + i) * n + col];
      const BlockScale s = ScaleOf(values.data(), count, symmetric);
      const std::int64_t index = col * out.blocks_per_column + b;
      out.scales[index] = s.scale;
      if (!symmetric) {
        auto& byte = out.zero_points[col * zp_per_column + b / 2];
        byte |= static_cast<std::uint8_t>(s.zero_point << ((b % 2) * 4));
      }
      std::uint8_t* blob_bytes = &out.packed[index * blob];
      for (std::int64_t i = 0; i < block; ++i) {
        const float q = i < count ? std::nearbyint(values[i] / s.scale) + static_cast<float>(s.zero_point)
                                  : static_cast<float>(s.zero_point);
        const auto nibble = static_cast<std::uint8_t>(std::clamp(q, 0.0f, 15.0f));
        blob_bytes[i / 2] |= static_cast<std::uint8_t>(nibble << ((i % 2) * 4));
      }
    }
  }
  return out;
}

float DequantizeInt4(const Int4Blocks& blocks, std::int64_t row, std::int64_t col) {
  const std::int64_t b = row / blocks.block;
  const std::int64_t i = row % blocks.block;
  const std::int64_t index = col * blocks.blocks_per_column + b;
  const std::uint8_t byte = blocks.packed[index * (blocks.block / 2) + i / 2];
  const int q = (byte >> ((i % 2) * 4)) & 0xF;
  int zero_point = 8;
  if (!blocks.zero_points.empty()) {
    const std::int64_t zp_per_column = (blocks.blocks_per_column + 1) / 2;
    zero_point = (blocks.zero_points[col * zp_per_column + b / 2] >> ((b % 2) * 4)) & 0xF;
  }
  return static_cast<float>(q - zero_point) * blocks.scales[index];
}

}  // namespace ortkit
