// Shared-memory tiles of 128-byte rows in the 128-byte swizzle (TMA's SWIZZLE_128B, wgmma's
// b128): row r's 16-byte unit u sits at unit u ^ (r % 8), so the 8 rows that one stmatrix
// writes (or one column of units) fall in different banks. 64 such rows are one 64 x 64 box of
// 16-bit elements (8 KB), the epilogues' staging chunk.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::sm90 {

struct SwizzledRows {
  static constexpr int kRowBytes = 128;
  static constexpr int kChunkBytes = 64 * kRowBytes;  // one 64 x 64 box
  uint8_t* base;

  __device__ uint8_t* unit(int row, int unit) const { return base + row * kRowBytes + ((unit ^ (row & 7)) * 16); }
  // The same in 64-row chunk `chunk` of a tile of several.
  __device__ uint8_t* unit(int chunk, int row, int unit) const {
    return base + chunk * kChunkBytes + row * kRowBytes + ((unit ^ (row & 7)) * 16);
  }
  __device__ uint8_t* chunk(int chunk) const { return base + chunk * kChunkBytes; }
};

}  // namespace bsrmm::cuda::sm90
