// cpu_rowwise_simd's panel walk, for block rows that bring many B rows when B is too large to
// stay cached (the policy is rowwise.cpp's; docs/perf-log.md entry 87). The chunk walk of
// rowwise_kernel.hpp re-walks a block row's blocks once per chunk of N (16 f64 columns on AVX2),
// so each pass reads one 128-byte piece of every B row the block row uses, scattered over B: with
// B out of cache that is a latency-bound gather the hardware prefetchers do not follow (2x2 f64
// power-law, B 16 MiB, N = 256: ~7 GB/s of B rows a thread). Here a block row's blocks are taken
// in groups whose B rows under a panel of columns fit L1; each group's B rows are read across the
// whole panel, chunk by chunk (a stream per B row), while the next group's are prefetched, and the
// sums are carried between groups in a small tile of C rows in L1. The last group writes C from
// the registers (the common epilogue) or through the tile (the general one).
// Included by rowwise_kernel.hpp inside its namespace and target, after chunk() and with_vectors.
#pragma once

// The tile of C rows a block row carries between groups: its panel of columns is this many bytes
// (256 f64 columns of a 2x2 block row: N = 256 in one panel).
constexpr int64_t panel_tile_bytes = 8 * 1024;

// A group's B rows under one panel: about half of L1, beside the tile (the power-law cell above:
// 8 KiB groups ran 1.2x and 32 KiB 1.1x the time of 16 KiB).
constexpr int64_t panel_group_bytes = 16 * 1024;

// One group of a block row's blocks, the blocks whose B rows are prefetched meanwhile (the next
// group's), and where its sums start and end.
struct PanelGroup {
  int32_t first_block, end_block;
  int32_t prefetch_begin, prefetch_end;
  bool from_tile;   // a group before this one left its sums in the tile
  bool to_c;        // the last group, fast epilogue: alpha * sums (+ beta * C) into C
};

// The group's sums for one chunk (NV vectors from column j; the last vector masked to `last`),
// from zero or from the tile, left in the tile or, for the last group under the common
// epilogue, written to C; the next group's B rows under the same columns prefetched.
template <typename T, int BH, int BW, int NV>
BSRMM_ROWWISE_INLINE void panel_chunk(const RowwiseProblem& p, const PanelGroup& group, int64_t j,
                                      typename RowVectors<T>::mask last, T* tile, int64_t tile_ld,
                                      int64_t row0) {
  using Z = RowVectors<T>;
  using vec = typename Z::vec;
  const int32_t bw = BW > 0 ? BW : p.block_width;
  const int64_t block = int64_t{BH} * bw;
  const T* values = static_cast<const T*>(p.a_values);
  const T* b = static_cast<const T*>(p.b) + j;
  const int64_t ldb = p.b_ld;
  vec acc[BH][NV];
#pragma GCC unroll 8
  for (int i = 0; i < BH; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      acc[i][v] = group.from_tile ? Z::load(tile + i * tile_ld + v * Z::lanes) : Z::zero();

  // The next group's B rows under this chunk: by the time the walk reaches them their whole panel
  // is on its way (without it, 1.5x the time on the power-law cell).
  constexpr int chunk_bytes = NV * Z::lanes * int{sizeof(T)};
  for (int32_t q = group.prefetch_begin; q < group.prefetch_end; ++q) {
    const T* rows_of_b = b + int64_t{p.col_idx[q]} * bw * ldb;
    for (int32_t k = 0; k < bw; ++k) {
      const char* row = reinterpret_cast<const char*>(rows_of_b + k * ldb);
#pragma GCC unroll 8
      for (int at = 0; at < chunk_bytes; at += 64) _mm_prefetch(row + at, _MM_HINT_T0);
    }
  }

  const bool last_whole = Z::full(last);  // read without a mask, as chunk()
#pragma GCC unroll 4
  for (int32_t q = group.first_block; q < group.end_block; ++q) {
    const T* a = values + int64_t{q} * block;
    const T* rows_of_b = b + int64_t{p.col_idx[q]} * bw * ldb;
#pragma GCC unroll 8
    for (int32_t k = 0; k < bw; ++k) {
      const T* b_row = rows_of_b + k * ldb;
      vec bv[NV];
#pragma GCC unroll 8
      for (int v = 0; v < NV - 1; ++v) bv[v] = Z::load(b_row + v * Z::lanes);
      bv[NV - 1] = last_whole ? Z::load(b_row + (NV - 1) * Z::lanes) : Z::load(last, b_row + (NV - 1) * Z::lanes);
#pragma GCC unroll 8
      for (int i = 0; i < BH; ++i) {
        const vec s = Z::set1(a[i * bw + k]);
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[i][v] = Z::fma(s, bv[v], acc[i][v]);
      }
    }
  }

  if (group.to_c) {
    store_scaled_rows<Z, T, BH, NV>(static_cast<T*>(p.c.data) + row0 * p.c.ld + j, p.c.ld, acc, last,
                                    p.alpha, p.beta);
    return;
  }
  // The tile is whole vectors wide: no masks.
#pragma GCC unroll 8
  for (int i = 0; i < BH; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) Z::store(tile + i * tile_ld + v * Z::lanes, acc[i][v]);
}

// Rows [row_begin, row_end), every column: block rows whose blocks bring at least
// p.panel_min_b_rows B rows walk in panels, the others as rows_shaped() walks them (chunk by chunk).
template <typename T, int BH, int BW>
void rows_panels(const RowwiseProblem& p, int64_t row_begin, int64_t row_end) {
  using Z = RowVectors<T>;
  using mask = typename Z::mask;
  constexpr int NVmax = max_vectors<Z>(BH);
  constexpr int64_t width = int64_t{NVmax} * Z::lanes;
  constexpr int64_t tile_cols = std::max<int64_t>(width, panel_tile_bytes / (BH * int64_t{sizeof(T)}) / width * width);
  alignas(64) T tile[BH * tile_cols];
  const int64_t n = p.c.cols;
  const int32_t bw = BW > 0 ? BW : p.block_width;
  const int64_t panel_cols = std::min<int64_t>(tile_cols, (n + width - 1) / width * width);
  const int32_t group_blocks =
      static_cast<int32_t>(std::max<int64_t>(1, panel_group_bytes / (int64_t{bw} * panel_cols * int64_t{sizeof(T)})));
  const bool fast_store = p.c.dtype == (sizeof(T) == 8 ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32) &&
                          p.c.layout == BSRMM_LAYOUT_ROW_MAJOR && p.bias == nullptr &&
                          p.activation == BSRMM_ACTIVATION_NONE;
  // The last chunk of N and its mask, as rows_shaped().
  const int64_t tail = n - (n - 1) / width * width;
  const int tail_vectors = static_cast<int>((tail + Z::lanes - 1) / Z::lanes);
  const mask last = Z::first(tail - int64_t{tail_vectors - 1} * Z::lanes);
  const int64_t tail_begin = n - tail;
  const int32_t blocks_end = p.row_ptr[row_end];

  for (int64_t r = row_begin; r < row_end; ++r) {
    const int32_t first = p.row_ptr[r];
    const int32_t end = p.row_ptr[r + 1];
    const int64_t row0 = r * BH;
    if (int64_t{end - first} * bw < p.panel_min_b_rows) {
      for (int64_t j0 = 0; j0 < tail_begin; j0 += width)
        chunk<T, BH, BW, NVmax>(p, r, 0, j0, Z::first(Z::lanes), fast_store);
      with_vectors<1, NVmax>(tail_vectors, [&](auto nv) {
        chunk<T, BH, BW, decltype(nv)::value>(p, r, 0, tail_begin, last, fast_store);
      });
      continue;
    }
    for (int64_t panel = 0; panel < n; panel += panel_cols) {
      const int64_t panel_end = std::min(n, panel + panel_cols);
      for (int32_t g = first; g < end; g += group_blocks) {
        PanelGroup group{};
        group.first_block = g;
        group.end_block = std::min(g + group_blocks, end);
        // As many blocks ahead as this group has (the next group, or the next rows' first blocks).
        group.prefetch_begin = group.end_block;
        group.prefetch_end = std::min(group.end_block + (group.end_block - g), blocks_end);
        group.from_tile = g != first;
        group.to_c = group.end_block == end && fast_store;
        int64_t j = panel;
        for (; j < std::min(panel_end, tail_begin); j += width)
          panel_chunk<T, BH, BW, NVmax>(p, group, j, Z::first(Z::lanes), tile + (j - panel), tile_cols, row0);
        if (j < panel_end) {
          with_vectors<1, NVmax>(tail_vectors, [&](auto nv) {
            panel_chunk<T, BH, BW, decltype(nv)::value>(p, group, j, last, tile + (j - panel), tile_cols, row0);
          });
        }
      }
      if (fast_store) continue;  // the last group wrote C (a row here has blocks: the minimum is >= 1)
      store_any<T>(tile, BH, tile_cols, panel_end - panel, p, row0, panel);
    }
  }
}
