// The inner part of cpu_blocked_simd: computes a range of block rows x a range of columns of C
// from A's values and B packed in column strips, both already in the compute type (f32 or f64).
// Compiled once per instruction set (blocked_kernel.hpp): AVX-512 (blocked_rows_avx512.cpp),
// AVX2+FMA and baseline (blocked_rows.cpp); kernels() picks one when the library loads.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstdint>

namespace bsrmm::cpu {

struct BlockedProblem {
  int32_t block_height;
  int32_t block_width;
  const int32_t* row_ptr;
  const int32_t* col_idx;  // into the packed rows of B: block column p covers rows p * bw..
  const void* a_values;  // compute type, blocks row-major
  // B packed in strips of the kernel's tile_cols columns: strip s starts at element
  // s * tile_cols * b_rows and holds b_rows rows of min(tile_cols, b_width - s * tile_cols)
  // contiguous elements. b_width is B's column count rounded up to whole vectors (zeros beyond B).
  // Or, when b_in_place, the caller's B itself (row-major, compute type, columns a multiple of
  // the vector, every block column in use): strip s starts at column s * tile_cols, rows b_ld
  // apart, and col_idx are B's own block columns.
  const void* b;
  int64_t b_rows;
  int64_t b_width;
  bool b_in_place;
  int64_t b_ld;
  bsrmm_dense c;  // output in the operation's dtype
  double alpha;
  double beta;
  const void* bias;
  bsrmm_activation activation;
};

// Block rows [row_begin, row_end) x columns [col_begin, col_end) of C. col_begin is a multiple
// of the kernel's tile_cols; col_end may pass C.cols up to b_width (the surplus is computed, not
// stored).
using RowsFunction = void (*)(const BlockedProblem& problem, int64_t row_begin, int64_t row_end,
                              int64_t col_begin, int64_t col_end);

// One instruction set's kernels and the packing they expect, per compute type (f32, f64).
struct KernelSet {
  const char* isa;       // "avx512", "avx2" (x86-64-v3 or baseline, picked by ifunc)
  int lanes[2];          // elements per vector: f32, f64
  int tile_cols[2];      // the width of a packed strip: f32, f64
  RowsFunction rows[2];  // f32 (C in f32/f16/bf16), f64
  // N = 1: problem.b is B's column in the compute type, contiguous; columns unused.
  RowsFunction vector_rows[2];
  // Blocks at most tiny_height high with B read in place (any strip width then): a tile as
  // wide as the registers allow for so few rows, so A and each B row are read once per block
  // row instead of once per strip. Null where the ISA has too few registers for it.
  int tiny_height;
  int tiny_cols[2];
  RowsFunction tiny_rows[2];
};

// The kernels for this machine, chosen once: AVX-512 (F, VL, BW, DQ) where the CPU has it,
// else the AVX2 / baseline clones. BSRMM_CPU_ISA=avx2 in the environment keeps AVX-512 out
// (tests use it to run both).
const KernelSet& kernels();
const KernelSet& avx2_kernels();
// Null where AVX-512 was not compiled in (non-GCC, non-x86-64, ThreadSanitizer).
const KernelSet* avx512_kernels();

}  // namespace bsrmm::cpu
