// cpu_rowwise_simd: B in the compute type and row-major (in place when it already is, else one
// conversion pass into the workspace), then rowwise_kernel.hpp over chunks of block rows.
// Small products run on the calling thread: waking the pool costs more than they do.
#include "../common/error.hpp"
#include "../common/half.hpp"
#include "blocked_rows.hpp"
#include "cpu_backend.hpp"
#include "partition.hpp"
#include "rowwise.hpp"

#include <algorithm>
#include <cstring>

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;

constexpr int64_t chunks_per_thread = 4;

// Multiply-adds below which the product runs on the calling thread: ~10-20 us of work on one
// core at tiny blocks, about what handing it to a sleeping worker costs on a loaded machine.
constexpr int64_t inline_work = int64_t{1} << 16;

// What one core's L2 holds, about (1 MiB on the AVX2 AMD EPYC measured, 1-2 MiB on AVX-512 Xeons).
constexpr int64_t l2_bytes_per_core = int64_t{1} << 20;

// The panel walk (rowwise_panels.hpp) for block rows of at least panel_b_rows B rows, where B
// (K x N in the compute type) is over panel_b_bytes. On the 2-core EPYC (32 MiB L3 on paper),
// 2x2 / 4x4 f64 power-law rows (8192^2, forced rowwise, 2 threads, interleaved): B 16-32 MiB
// (N 256-512) 1.6-2.3x faster in panels; B 8 MiB (N = 128) 0.96x / 1.13x, 4 MiB 0.82x / 1.0x
// (B stays cached and the chunk walk's pieces hit it). Rows of 16 blocks of 2x2 (32 B rows)
// gained as the longest did; 6x6 f64 rows of 16 blocks at 4 MiB lost (0.64x), f32 6x6 rows of
// 3 blocks (18 B rows) at 16 MiB lost (0.8x). docs/perf-log.md entry 87.
constexpr int64_t panel_b_bytes = int64_t{8} << 20;
constexpr int64_t panel_b_rows = 32;

inline float widen(float x) { return x; }
inline double widen(double x) { return x; }
inline float widen(f16_t x) { return detail::to_float(x); }
inline float widen(bf16_t x) { return detail::to_float(x); }

// Rows [begin, end) of B into `out` (row-major, `n` wide, the compute type T).
template <typename T, typename S>
void convert_rows(const bsrmm_dense& b, T* out, int64_t begin, int64_t end) {
  const S* in = static_cast<const S*>(b.data);
  const bool row_major = b.layout == BSRMM_LAYOUT_ROW_MAJOR;
  for (int64_t k = begin; k < end; ++k)
    for (int64_t j = 0; j < b.cols; ++j)
      out[k * b.cols + j] = static_cast<T>(widen(row_major ? in[k * b.ld + j] : in[j * b.ld + k]));
}

template <typename T>
const T* row_major_b(const bsrmm_dense& b, detail::ThreadPool& pool, detail::Buffer& workspace,
                     bool single_thread) {
  constexpr bsrmm_dtype compute = sizeof(T) == 8 ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32;
  if (b.dtype == compute && (b.layout == BSRMM_LAYOUT_ROW_MAJOR || b.cols == 1))
    return static_cast<const T*>(b.data);
  const std::size_t bytes = static_cast<std::size_t>(b.rows * b.cols) * sizeof(T);
  if (workspace.size() < bytes) workspace = detail::Buffer::allocate(bytes, workspace.device());
  T* out = workspace.as<T>();
  const int64_t parts = single_thread ? 1 : std::min<int64_t>(b.rows, pool.size() * chunks_per_thread);
  pool.run(parts, [&](int64_t part) {
    const int64_t begin = b.rows * part / parts;
    const int64_t end = b.rows * (part + 1) / parts;
    switch (b.dtype) {
      case BSRMM_DTYPE_F16: convert_rows<T, f16_t>(b, out, begin, end); break;
      case BSRMM_DTYPE_BF16: convert_rows<T, bf16_t>(b, out, begin, end); break;
      case BSRMM_DTYPE_F32: convert_rows<T, float>(b, out, begin, end); break;
      case BSRMM_DTYPE_F64: convert_rows<T, double>(b, out, begin, end); break;
      case BSRMM_DTYPE_FLOAT8_E4M3:  // never here: an fp8 B arrives widened to f32 (fp8_widen.hpp)
      case BSRMM_DTYPE_FLOAT8_E5M2: break;
    }
  });
  return out;
}

template <typename T>
void run(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
         const RowwiseKernels& kernels, int64_t panel_min_b_rows) {
  const int64_t rows = args.a.block_row_count;
  if (rows == 0 || args.c.cols == 0) return;
  const int64_t work = args.a.nnzb * args.a.block_height * args.a.block_width * args.c.cols;
  const bool single_thread = pool.size() == 1 || work < inline_work;
  RowwiseProblem problem{};
  problem.block_height = args.a.block_height;
  problem.block_width = args.a.block_width;
  problem.row_ptr = args.a.row_ptr;
  problem.col_idx = args.a.col_idx;
  problem.a_values = sizeof(T) == 8 ? args.a.values : static_cast<const void*>(args.a.values_f32);
  problem.c = args.c;
  problem.alpha = args.alpha;
  problem.beta = args.beta;
  problem.bias = args.bias;
  problem.activation = args.activation;
  const T* b = args.a.nnzb > 0 ? row_major_b<T>(args.b, pool, workspace, single_thread) : nullptr;
  problem.b = b;
  problem.b_ld = b == args.b.data && args.b.layout == BSRMM_LAYOUT_ROW_MAJOR ? args.b.ld : args.b.cols;
  problem.panel_min_b_rows = panel_min_b_rows;
  const RowwiseFunction function = kernels.rows[sizeof(T) == 8 ? 1 : 0];
  const std::vector<RowRange> ranges =
      split_rows(args.a.work_prefix, rows, single_thread ? 1 : pool.size() * chunks_per_thread);
  pool.run(static_cast<int64_t>(ranges.size()), [&](int64_t task) {
    const RowRange range = ranges[static_cast<size_t>(task)];
    function(problem, range.begin, range.end);
  });
}

bool has_avx2_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace

const RowwiseKernels* rowwise_kernels() {
  static const RowwiseKernels* const chosen = [] {
    // The same ISA as the blocked kernels' (cpuid, BSRMM_CPU_ISA=avx2 keeps AVX-512 out).
    if (std::strcmp(kernels().isa, "avx512") == 0 && rowwise_kernels_avx512() != nullptr)
      return rowwise_kernels_avx512();
    return has_avx2_fma() ? rowwise_kernels_avx2() : nullptr;
  }();
  return chosen;
}

std::string rowwise_refusal(const MatmulArgs& args) {
  if (rowwise_kernels() == nullptr)
    return "it needs AVX2 with FMA or AVX-512, which this CPU lacks (or this build has neither: "
           "GCC on x86-64 compiles them)";
  if (args.a.block_height > rowwise_max_height && args.a.block_height % rowwise_band_height != 0)
    return "it takes blocks at most 8 high or a multiple of 8 high; this matrix has " +
           std::to_string(args.a.block_height);
  return "";
}

bool rowwise_preferred(const MatmulArgs& args) {
  if (!rowwise_refusal(args).empty()) return false;
  // N = 1: the blocked variant's matrix-vector loop streams A without masks (2x faster).
  const int64_t n = args.c.cols;
  if (n == 1) return false;
  // The AVX2 build's chunks are half as wide as AVX-512's (4 vectors of 8 f32 / 4 f64 lanes), so
  // a block row's B rows are walked twice as often: it wins over a narrower range (below).
  const bool avx2 = rowwise_kernels() == rowwise_kernels_avx2();
  const int64_t bw = args.a.block_width;
  if (args.a.block_height > rowwise_max_height) {
    // Taller blocks in 8-row bands. AVX-512 at N up to 64 (one core, every tall cell of the
    // coverage suite: 16x16 f64 N 32 2.75 vs 4.44 ms blocked, 16x16 f64 N 64 1.52 vs 2.33, 64x64
    // f64 N 16 2.17 vs 3.96, 128x128 f64 N 16 1.96 vs 2.82, 32x32 f64 N 4 0.21 vs 0.27, 16x64 f32
    // N 16 0.28 vs 0.39); timing both on the loaded 2-core machine picked blocked by noise in 3
    // of 11 cells. At N = 128 the two are within 10% either way (the shapes suite): both timed,
    // blocked first. docs/perf-log.md entry 53.
    // AVX2 (2-core AMD EPYC, f32 and f64): 16x16 at N 4-16 0.4-0.6x the blocked time, 32x32 at
    // N = 4 0.7-0.9x, but 32x32 from N = 16 and blocks 64 wide or more 1.1-2.2x (entry 79).
    // Since its stores lost vmaskmov (entry 88), f64 16 wide wins at N 8-128 (0.38-0.83x the
    // blocked time in two runs, uniform d 1/32 and 1/128); f64 32 wide at N 16-32 read 0.88-0.97x
    // in one run and 1.21-1.46x in the next, and f32 16x16 from N = 16 ties or loses, so they
    // keep the old range. `experiments/cpu_tall_block_sweep.py`, docs/perf-log.md entry 90.
    if (!avx2) return n <= 64;
    if (args.a.dtype == BSRMM_DTYPE_F64 && bw == 16) return n <= 128;
    return bw <= 32 && bw * n <= 256;
  }
  // Blocks up to 8 wide at N up to 128 (one core, 1x1-8x8, N 2-128, stencils and uniform
  // patterns: 1.2-4x the blocked variant, never more than 5% behind it; docs/perf-log.md entry
  // 46), and beyond where each block column serves few block rows (B has little reuse to pack
  // for: 2x2 power-law N = 256, 11.3 vs 13.7 ms). Wider N over a matrix that reuses B rows
  // packs them (blocked).
  const bool few_uses = args.a.nnzb <= 16 * args.a.block_col_count;
  if (bw > 8 || (n > 128 && !few_uses)) return false;
  // AVX2, N over more than one chunk: a block row whose B rows outgrow L2 re-reads them from L3
  // on each of its chunks (2x2 f64 power-law N = 256, a 4096-block row: 28 ms against 18
  // blocked; entry 79), unless the long rows walk in panels (B out of cache): 2x2 / 4x4 f64
  // power-law at N 256-512 then ran 1.9-2.5x faster than blocked (entry 87). max_row_blocks is 0
  // where unknown.
  const int64_t compute_bytes = args.a.dtype == BSRMM_DTYPE_F64 ? 8 : 4;
  const int64_t row_b_bytes = args.a.max_row_blocks * bw * n * compute_bytes;
  const int64_t panel_rows = rowwise_panel_min_b_rows(args);
  const bool long_rows_in_panels = panel_rows > 0 && args.a.max_row_blocks * bw >= panel_rows;
  return !(avx2 && n > 16 && row_b_bytes > l2_bytes_per_core && !long_rows_in_panels);
}

int64_t rowwise_panel_min_b_rows(const MatmulArgs& args) {
  // Measured on the AVX2 build only; AVX-512's chunks are twice as wide (256-byte pieces of each
  // B row a pass), so it keeps the chunk walk until measured there.
  if (rowwise_kernels() != rowwise_kernels_avx2()) return 0;
  const int64_t compute_bytes = args.a.dtype == BSRMM_DTYPE_F64 ? 8 : 4;
  return args.b.rows * args.c.cols * compute_bytes > panel_b_bytes ? panel_b_rows : 0;
}

void matmul_rowwise(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace) {
  matmul_rowwise(args, pool, workspace, rowwise_panel_min_b_rows(args));
}

void matmul_rowwise(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
                    int64_t panel_min_b_rows) {
  const std::string refusal = rowwise_refusal(args);
  if (!refusal.empty()) detail::fail(BSRMM_STATUS_UNSUPPORTED, rowwise_variant, " cannot run: ", refusal);
  if (args.a.dtype == BSRMM_DTYPE_F64) {
    run<double>(args, pool, workspace, *rowwise_kernels(), panel_min_b_rows);
  } else {
    if (args.a.values_f32 == nullptr && args.a.nnzb > 0)
      detail::fail(BSRMM_STATUS_INTERNAL, rowwise_variant, " called without f32 values of A");
    run<float>(args, pool, workspace, *rowwise_kernels(), panel_min_b_rows);
  }
}

}  // namespace bsrmm::cpu
