// cpu_blocked_simd: packs the rows of B that A uses into column strips in the compute type,
// then runs the register-blocked kernel of blocked_rows.cpp over chunks of block rows (and of
// columns, when there are too few rows to feed every thread).
#include "../common/error.hpp"
#include "../common/half.hpp"
#include "blocked_rows.hpp"
#include "cpu_backend.hpp"
#include "partition.hpp"

#include <algorithm>

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;

// Chunks per thread: contiguous chunks of equal estimated work, handed out dynamically, so an
// estimate that is off for one chunk is absorbed by the others.
constexpr int64_t chunks_per_thread = 4;

// Multiply-adds below which a product runs on the calling thread: waking a sleeping worker costs
// about as much (~10-20 us on a loaded machine) as such a product on one core.
constexpr int64_t inline_work = int64_t{1} << 16;

// Parts to split the block rows into: one (the calling thread) for a small product.
int64_t row_parts(const MatmulArgs& args, int64_t threads) {
  const int64_t work = args.a.nnzb * args.a.block_height * args.a.block_width * args.c.cols;
  return threads == 1 || work < inline_work ? 1 : threads * chunks_per_thread;
}

// Blocks at most this wide, whose block columns serve at most `few_uses` block rows on average,
// read B in place at any N (see run()).
constexpr int32_t tiny_block = 8;
constexpr int64_t few_uses = 16;

inline float widen(float x) { return x; }
inline double widen(double x) { return x; }
inline float widen(f16_t x) { return detail::to_float(x); }
inline float widen(bf16_t x) { return detail::to_float(x); }

// Packed rows [row_begin, row_end) into the strip layout of BlockedProblem::b: packed row q is
// row used_columns[q / bw] * bw + q % bw of B (any layout and dtype), zeros beyond B's columns.
template <typename T, typename S>
void pack_rows(const bsrmm_dense& b, const BsrView& a, T* packed, int64_t packed_rows,
               int64_t width, int64_t NR, int64_t row_begin, int64_t row_end) {
  const S* in = static_cast<const S*>(b.data);
  const bool row_major = b.layout == BSRMM_LAYOUT_ROW_MAJOR;
  const int64_t bw = a.block_width;
  for (int64_t j0 = 0; j0 < width; j0 += NR) {
    const int64_t strip_width = std::min(NR, width - j0);
    const int64_t valid = std::max<int64_t>(0, std::min(strip_width, b.cols - j0));
    T* strip = packed + j0 * packed_rows;
    for (int64_t q = row_begin; q < row_end; ++q) {
      const int64_t k = int64_t{a.used_columns[q / bw]} * bw + q % bw;
      T* out = strip + q * strip_width;
      for (int64_t j = 0; j < valid; ++j) {
        const S x = row_major ? in[k * b.ld + j0 + j] : in[(j0 + j) * b.ld + k];
        out[j] = static_cast<T>(widen(x));
      }
      std::fill(out + valid, out + strip_width, T(0));
    }
  }
}

template <typename T>
void pack_b(const bsrmm_dense& b, const BsrView& a, T* packed, int64_t packed_rows, int64_t width,
            int64_t NR, detail::ThreadPool& pool, bool single_thread) {
  const int64_t parts = single_thread ? 1 : std::min<int64_t>(packed_rows, pool.size() * chunks_per_thread);
  pool.run(parts, [&](int64_t part) {
    const int64_t begin = packed_rows * part / parts;
    const int64_t end = packed_rows * (part + 1) / parts;
    switch (b.dtype) {
      case BSRMM_DTYPE_F16: pack_rows<T, f16_t>(b, a, packed, packed_rows, width, NR, begin, end); break;
      case BSRMM_DTYPE_BF16: pack_rows<T, bf16_t>(b, a, packed, packed_rows, width, NR, begin, end); break;
      case BSRMM_DTYPE_F64: pack_rows<T, double>(b, a, packed, packed_rows, width, NR, begin, end); break;
      case BSRMM_DTYPE_F32: pack_rows<T, float>(b, a, packed, packed_rows, width, NR, begin, end); break;
      case BSRMM_DTYPE_FLOAT8_E4M3:  // never here: an fp8 B arrives widened to f32 (fp8_widen.hpp)
      case BSRMM_DTYPE_FLOAT8_E5M2: break;
    }
  });
}

// N = 1 (a matrix-vector product): B's column in the compute type and contiguous (in place
// when it already is), then the kernels' vector rows: no strips, A streamed once.
template <typename T>
void matrix_vector(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
                   const KernelSet& kernels) {
  constexpr int type = sizeof(T) == 8 ? 1 : 0;
  constexpr bsrmm_dtype compute = sizeof(T) == 8 ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32;
  const bsrmm_dense& b = args.b;
  const int64_t k = b.rows;
  const bool contiguous = b.layout == BSRMM_LAYOUT_COL_MAJOR || b.ld == 1;
  BlockedProblem problem{};
  problem.block_height = args.a.block_height;
  problem.block_width = args.a.block_width;
  problem.row_ptr = args.a.row_ptr;
  problem.col_idx = args.a.col_idx;
  if constexpr (sizeof(T) == 8) {
    problem.a_values = args.a.values;
  } else {
    problem.a_values = args.a.values_f32;
  }
  problem.c = args.c;
  problem.alpha = args.alpha;
  problem.beta = args.beta;
  problem.bias = args.bias;
  problem.activation = args.activation;
  problem.b_rows = k;
  if (b.dtype == compute && contiguous) {
    problem.b = b.data;
  } else if (k > 0) {
    const std::size_t bytes = static_cast<std::size_t>(k) * sizeof(T);
    if (workspace.size() < bytes) workspace = detail::Buffer::allocate(bytes, workspace.device());
    T* x = workspace.as<T>();
    const int64_t step = b.layout == BSRMM_LAYOUT_ROW_MAJOR ? b.ld : 1;
    switch (b.dtype) {
      case BSRMM_DTYPE_F16: for (int64_t i = 0; i < k; ++i) x[i] = widen(static_cast<const f16_t*>(b.data)[i * step]); break;
      case BSRMM_DTYPE_BF16: for (int64_t i = 0; i < k; ++i) x[i] = widen(static_cast<const bf16_t*>(b.data)[i * step]); break;
      case BSRMM_DTYPE_F32: for (int64_t i = 0; i < k; ++i) x[i] = static_cast<T>(static_cast<const float*>(b.data)[i * step]); break;
      case BSRMM_DTYPE_F64: for (int64_t i = 0; i < k; ++i) x[i] = static_cast<T>(static_cast<const double*>(b.data)[i * step]); break;
      case BSRMM_DTYPE_FLOAT8_E4M3:  // never here: an fp8 B arrives widened to f32 (fp8_widen.hpp)
      case BSRMM_DTYPE_FLOAT8_E5M2: break;
    }
    problem.b = x;
  }
  const std::vector<RowRange> ranges =
      split_rows(args.a.work_prefix, args.a.block_row_count, row_parts(args, pool.size()));
  const RowsFunction rows = kernels.vector_rows[type];
  pool.run(static_cast<int64_t>(ranges.size()), [&](int64_t task) {
    const RowRange range = ranges[static_cast<size_t>(task)];
    rows(problem, range.begin, range.end, 0, 1);
  });
}

template <typename T>
void run(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
         const KernelSet& kernels) {
  constexpr int type = sizeof(T) == 8 ? 1 : 0;
  const int64_t L = kernels.lanes[type];
  int64_t NR = kernels.tile_cols[type];
  RowsFunction rows_function = kernels.rows[type];
  const int64_t n = args.c.cols;
  const int64_t rows = args.a.block_row_count;
  if (rows == 0 || n == 0) return;
  if (n == 1) {
    matrix_vector<T>(args, pool, workspace, kernels);
    return;
  }

  BlockedProblem problem{};
  problem.block_height = args.a.block_height;
  problem.block_width = args.a.block_width;
  problem.row_ptr = args.a.row_ptr;
  problem.col_idx = args.a.packed_col_idx;
  problem.a_values = sizeof(T) == 8 ? args.a.values : static_cast<const void*>(args.a.values_f32);
  problem.c = args.c;
  problem.alpha = args.alpha;
  problem.beta = args.beta;
  problem.bias = args.bias;
  problem.activation = args.activation;

  // Packing costs one pass over the rows of B that A uses; each packed element then feeds
  // 2 * (block rows that use its block column) * block_height flops from L1. A B that already
  // is one strip (at most tile_cols wide, whole vectors, row-major, the compute type) under a
  // matrix that uses every block column is read in place instead: at tiny blocks the copy costs
  // as much as the multiply. Wider ones are packed (rows a power-of-two leading dimension apart
  // fall into a few cache sets: f64 blocks of 16, N = 128, ran 1.4x slower in place), unless the
  // blocks are tiny and each block column serves few block rows (a stencil): the copy is then
  // the larger cost (3x3 f64 9-point stencil, N = 64, one core: 56 -> 46-51 ms in place; a full
  // 3x3 matrix, N = 256, runs 3x slower in place, so it packs).
  const int64_t width = (n + L - 1) / L * L;
  const int64_t packed_rows = args.a.used_column_count * args.a.block_width;
  constexpr bsrmm_dtype compute = sizeof(T) == 8 ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32;
  problem.b_in_place = args.b.dtype == compute && args.b.layout == BSRMM_LAYOUT_ROW_MAJOR &&
                       n % L == 0 &&
                       (n <= NR || (args.a.block_width <= tiny_block &&
                                    args.a.nnzb <= few_uses * args.a.used_column_count)) &&
                       args.a.used_column_count == args.a.block_col_count;
  if (problem.b_in_place) {
    problem.col_idx = args.a.col_idx;
    problem.b = args.b.data;
    problem.b_ld = args.b.ld;
    if (args.a.block_height <= kernels.tiny_height) {
      // In place, the strip width is free: the tiny tile's wider strips.
      NR = kernels.tiny_cols[type];
      rows_function = kernels.tiny_rows[type];
    }
  } else if (packed_rows > 0) {
    const std::size_t bytes = static_cast<std::size_t>(packed_rows * width) * sizeof(T);
    if (workspace.size() < bytes) workspace = detail::Buffer::allocate(bytes, workspace.device());
    pack_b<T>(args.b, args.a, workspace.as<T>(), packed_rows, width, NR, pool,
              row_parts(args, pool.size()) == 1);
  }
  if (!problem.b_in_place) problem.b = workspace.data();
  problem.b_rows = packed_rows;
  problem.b_width = width;

  const int64_t threads = pool.size();
  const int64_t parts = row_parts(args, threads);
  const std::vector<RowRange> ranges = split_rows(args.a.work_prefix, rows, parts);
  // Few block rows (a short, wide product): also split the columns so every thread has work.
  const int64_t col_tiles = (width + NR - 1) / NR;
  int64_t col_parts = 1;
  const int64_t wanted = threads * 2;
  if (parts > 1 && static_cast<int64_t>(ranges.size()) < wanted) {
    col_parts = std::min(col_tiles, (wanted + static_cast<int64_t>(ranges.size()) - 1) /
                                        static_cast<int64_t>(ranges.size()));
  }
  const int64_t tasks = static_cast<int64_t>(ranges.size()) * col_parts;
  pool.run(tasks, [&](int64_t task) {
    const RowRange range = ranges[static_cast<size_t>(task / col_parts)];
    const int64_t part = task % col_parts;
    const int64_t col_begin = col_tiles * part / col_parts * NR;
    const int64_t col_end = std::min(width, col_tiles * (part + 1) / col_parts * NR);
    if (col_begin >= col_end) return;
    rows_function(problem, range.begin, range.end, col_begin, col_end);
  });
}

}  // namespace

void matmul_blocked(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace) {
  matmul_blocked(args, pool, workspace, kernels());
}

void matmul_blocked(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
                    const KernelSet& kernels) {
  if (args.a.nnzb > 0 && (args.a.packed_col_idx == nullptr || args.a.used_columns == nullptr)) {
    detail::fail(BSRMM_STATUS_INTERNAL, "cpu_blocked_simd called without the plan's used columns");
  }
  if (args.a.dtype == BSRMM_DTYPE_F64) {
    run<double>(args, pool, workspace, kernels);
  } else {
    if (args.a.values_f32 == nullptr && args.a.nnzb > 0) {
      detail::fail(BSRMM_STATUS_INTERNAL, "cpu_blocked_simd called without f32 values of A");
    }
    run<float>(args, pool, workspace, kernels);
  }
}

}  // namespace bsrmm::cpu
