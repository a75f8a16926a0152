// The narrow family's variants, five per dtype: `narrow_<dtype>_simt_warprows` (lanes along K,
// one warp per row slice), `_splitrows` (the same, a long slice's steps shared by up to 8 warps
// of a CTA), both for every block shape, layout and leading dimension, `_nlanes` (lanes
// along N, blocks at most 8 high), `_mlanes` (lanes along M: a lane a row of C, blocks at most
// 16 high) and `_packed` (a block row's packed values streamed in
// 16-byte chunks, tiny blocks at N <= 4); f64 accumulates in f64. The load width and the rows a
// warp owns follow the block shape (warp_shape.hpp); the columns a warp computes follow N.
#include "../kernel_parts/simt_operands.cuh"
#include "../runtime/cuda_check.hpp"
#include "../variant.hpp"
#include "heuristic.hpp"
#include "column_lanes_kernel.cuh"
#include "narrow_kernel.cuh"
#include "packed_rows_kernel.cuh"
#include "row_lanes_kernel.cuh"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace bsrmm::cuda::narrow {
namespace {

template <typename T>
bool narrow_supports(const MatmulArgs& args, const DeviceTraits& device) {
  return simt_supports<T>(args, device);
}

// Whether a row-major dense operand can be read (or written) in runs of `run_bytes` along its
// rows: its base and every row start aligned to the run.
template <typename T>
bool runs_fit(const DenseView& dense, std::size_t run_bytes) {
  return dense.layout == BSRMM_LAYOUT_ROW_MAJOR && aligned_to(dense.data, run_bytes) &&
         (std::size_t(dense.ld) * sizeof(T)) % run_bytes == 0;
}

// Reads of B in runs where every run a lane asks for starts aligned to the run's size.
template <typename T>
BReads b_reads_for(const DenseView& b, int vec, int cols) {
  const bool row_major = b.layout == BSRMM_LAYOUT_ROW_MAJOR;
  const std::size_t row_step_bytes = std::size_t(row_major ? b.ld : 1) * sizeof(T);
  const std::size_t col_step_bytes = std::size_t(row_major ? 1 : b.ld) * sizeof(T);
  const std::size_t row_run = std::min<std::size_t>(16, std::size_t(cols) * sizeof(T));
  if (cols > 1 && runs_fit<T>(b, row_run)) return BReads::row_runs;
  // Consecutive k are adjacent in a column-major B, and in a row-major B of one column with ld 1.
  const std::size_t column_run = std::size_t(vec) * sizeof(T);
  if (row_step_bytes == sizeof(T) && aligned_to(b.data, column_run) &&
      (b.cols == 1 || col_step_bytes % column_run == 0))
    return BReads::column_runs;
  return BReads::elements;
}

static_assert(kMaxSplit == kWarps, "a slice splits over the warps of one CTA");

// How the lanes-along-K kernel's warps cover A's blocks: the launch and the rankings read the same.
WarpShape along_k_shape(const MatmulArgs& args) {
  return choose_warp_shape(args.a.block_height, args.a.block_width,
                           int32_t(bsrmm::detail::element_size(args.a.dtype)),
                           reinterpret_cast<std::uintptr_t>(args.a.values));
}

double mean_row_blocks(const BsrView& a) {
  return double(a.nnzb) / double(std::max<int64_t>(a.block_row_count, 1));
}

// Chunks of N the lanes-along-K kernel runs each row slice for (columns_per_warp columns each).
int64_t column_chunks_of(int64_t n) {
  const int cols = columns_per_warp(n);
  return (n + cols - 1) / cols;
}

// Warps per row slice for the `splitrows` variants (heuristic.hpp's warps_per_slice).
int32_t split_for(const MatmulArgs& args, const WarpShape& shape) {
  const BsrView& a = args.a;
  return warps_per_slice(a.block_row_count * shape.slices, column_chunks_of(args.c.cols),
                         lanes_along_k_fill(shape, mean_row_blocks(a)).steps, facts_of(args).skewed);
}

template <typename T, int Vec, int Cols>
void launch_with(const NarrowParams<T>& p, int64_t ctas, cudaStream_t stream) {
  narrow_kernel<T, Vec, Cols><<<unsigned(ctas), kThreads, 0, stream>>>(p);
  check_launch("narrow_kernel");
}

template <typename T, int Vec>
void launch_cols(const NarrowParams<T>& p, int cols, int64_t ctas, cudaStream_t stream) {
  switch (cols) {
    case 1: return launch_with<T, Vec, 1>(p, ctas, stream);
    case 2: return launch_with<T, Vec, 2>(p, ctas, stream);
    case 4: return launch_with<T, Vec, 4>(p, ctas, stream);
    case 8: return launch_with<T, Vec, 8>(p, ctas, stream);
    default: return launch_with<T, Vec, kMaxCols>(p, ctas, stream);
  }
}

template <typename T, bool Split>
void narrow_launch(const MatmulArgs& args, const DeviceTraits&) {
  if (args.c.rows == 0 || args.c.cols == 0) return;
  const BsrView& a = args.a;
  NarrowParams<T> p{};
  fill_operands<T>(p, args);
  p.shape = along_k_shape(args);
  const int cols = columns_per_warp(args.c.cols);
  p.b_reads = b_reads_for<T>(args.b, p.shape.vec, cols);
  p.column_chunks = int32_t(column_chunks_of(args.c.cols));

  const int64_t units = a.block_row_count * p.shape.slices;
  p.split = Split ? split_for(args, p.shape) : 1;
  const int64_t slices_per_cta = kWarps / p.split;
  const int64_t ctas = (units + slices_per_cta - 1) / slices_per_cta * p.column_chunks;
  if (ctas > INT32_MAX)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "narrow CUDA kernel: ", ctas,
                 " CTAs exceed the 2^31-1 grid limit");
  const auto stream = static_cast<cudaStream_t>(args.stream);
  switch (p.shape.vec) {
    case 1: return launch_cols<T, 1>(p, cols, ctas, stream);
    case 2: return launch_cols<T, 2>(p, cols, ctas, stream);
    case 4:
      if constexpr (sizeof(T) <= 4) return launch_cols<T, 4>(p, cols, ctas, stream);
      break;
    case 8:
      if constexpr (sizeof(T) <= 2) return launch_cols<T, 8>(p, cols, ctas, stream);
      break;
    default:
      break;
  }
  detail::fail(BSRMM_STATUS_INTERNAL, "narrow CUDA kernel: no load width for ", p.shape.vec, " elements");
}

// Where the family applies, one warp per slice first (measured, docs/perf-log.md entry 39), the
// split slices first on skewed rows at up to 32 columns (entry 79) and wherever even rows split
// (too few slices to fill the GPU: entry 92); the other is the tuner's next candidate. Lanes along
// N first for blocks at most 8 high from 32 columns on.
template <bool Split>
int narrow_preference(const MatmulArgs& args, const DeviceTraits&) {
  const Facts facts = facts_of(args);
  const int base = preferred(facts) ? 100 : 5;
  const bool split_first =
      facts.skewed ? split_slices_preferred(facts) : split_for(args, along_k_shape(args)) > 1;
  return Split == split_first ? base : base - 1;
}

template <typename T>
Variant narrow_variant(const char* name, bool split) {
  return Variant{name, &narrow_supports<T>, split ? &narrow_launch<T, true> : &narrow_launch<T, false>,
                 split ? &narrow_preference<true> : &narrow_preference<false>};
}

// ---- lanes along N (column_lanes_kernel.cuh): blocks at most 8 high ----

template <typename T>
bool column_lanes_supports(const MatmulArgs& args, const DeviceTraits& device) {
  return narrow_supports<T>(args, device) && args.a.block_height <= kColumnLanesMaxRows;
}

template <typename T, int Rows, int Vec, int Groups>
void column_lanes_launch_with(const ColumnLanesParams<T>& p, int64_t ctas, cudaStream_t stream) {
  column_lanes_kernel<T, Rows, Vec, Groups><<<unsigned(ctas), kColumnLanesWarps * 32, 0, stream>>>(p);
  check_launch("column_lanes_kernel");
}

// A lane's `per_lane` columns as one run of up to 16 bytes where B allows it, else one column
// per run. f64's 4 columns (two 16-byte runs) stay single columns: measured slower as runs on
// the H100 (4 x 4 f64 7-point stencil, N = 256: 0.098 against 0.078 ms; docs/perf-log.md entry 75).
template <typename T, int Rows>
void column_lanes_runs(const ColumnLanesParams<T>& p, int per_lane, bool runs, int64_t ctas, cudaStream_t stream) {
  if (!runs) {
    switch (per_lane) {
      case 1: return column_lanes_launch_with<T, Rows, 1, 1>(p, ctas, stream);
      case 2: return column_lanes_launch_with<T, Rows, 1, 2>(p, ctas, stream);
      default: return column_lanes_launch_with<T, Rows, 1, 4>(p, ctas, stream);
    }
  }
  switch (per_lane) {
    case 2: return column_lanes_launch_with<T, Rows, 2, 1>(p, ctas, stream);
    case 4:
      if constexpr (sizeof(T) <= 4) return column_lanes_launch_with<T, Rows, 4, 1>(p, ctas, stream);
      break;
    case 8:
      if constexpr (sizeof(T) == 2 && Rows <= kColumnLanesWideRows)
        return column_lanes_launch_with<T, Rows, 8, 1>(p, ctas, stream);
      break;
    default:
      break;
  }
  detail::fail(BSRMM_STATUS_INTERNAL, "narrow CUDA kernel (lanes along N): no run of ", per_lane, " columns for ",
               Rows, "-row blocks of ", sizeof(T), "-byte elements");
}

template <typename T>
void column_lanes_launch(const MatmulArgs& args, const DeviceTraits&) {
  if (args.c.rows == 0 || args.c.cols == 0) return;
  const BsrView& a = args.a;
  ColumnLanesParams<T> p{};
  fill_operands<T>(p, args);
  const int per_lane = column_lanes_per_lane(args.c.cols, a.block_height, int32_t(sizeof(T)));
  // One run per lane: its columns in one load of at most 16 bytes, from a B whose rows allow it.
  const bool runs =
      per_lane > 1 && per_lane * sizeof(T) <= 16 && runs_fit<T>(args.b, per_lane * sizeof(T));
  // Without runs a lane owns at most 4 single columns (its loads are 2-8 bytes each anyway).
  const int lane_columns = runs ? per_lane : std::min(per_lane, 4);
  p.c_runs = runs && runs_fit<T>(args.c, per_lane * sizeof(T));
  p.column_chunks = int32_t((args.c.cols + 32 * lane_columns - 1) / (32 * lane_columns));

  const int64_t warps = a.block_row_count * p.column_chunks;
  const int64_t ctas = (warps + kColumnLanesWarps - 1) / kColumnLanesWarps;
  if (ctas > INT32_MAX)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "narrow CUDA kernel (lanes along N): ", ctas,
                 " CTAs exceed the 2^31-1 grid limit");
  const auto stream = static_cast<cudaStream_t>(args.stream);
  const int32_t bh = a.block_height;
  if (bh <= 1) return column_lanes_runs<T, 1>(p, lane_columns, runs, ctas, stream);
  if (bh <= 2) return column_lanes_runs<T, 2>(p, lane_columns, runs, ctas, stream);
  if (bh <= 4) return column_lanes_runs<T, 4>(p, lane_columns, runs, ctas, stream);
  return column_lanes_runs<T, kColumnLanesMaxRows>(p, lane_columns, runs, ctas, stream);
}

int column_lanes_preference(const MatmulArgs& args, const DeviceTraits&) {
  const Facts facts = facts_of(args);
  const int64_t warps = column_lanes_warps(args.a.block_row_count, facts.n, facts.block_height, facts.element_bytes);
  return column_lanes_preferred(facts.block_height, facts.n, facts.skewed, warps) ? 101 : 3;
}

template <typename T>
Variant column_lanes_variant(const char* name) {
  return Variant{name, &column_lanes_supports<T>, &column_lanes_launch<T>, &column_lanes_preference};
}

// ---- lanes along M (row_lanes_kernel.cuh): blocks at most 16 high ----

template <typename T>
bool row_lanes_supports(const MatmulArgs& args, const DeviceTraits& device) {
  return narrow_supports<T>(args, device) && args.a.block_height <= kRowLanesMaxRows;
}

// The widest load (up to 16 bytes) that divides a block's row and fits A's alignment: a lane's
// chunks then start at multiples of it.
template <typename T>
int row_lanes_vec(const BsrView& a) {
  for (int vec = 16 / int(sizeof(T)); vec > 1; vec /= 2)
    if (a.block_width % vec == 0 && aligned_to(a.values, std::size_t(vec) * sizeof(T))) return vec;
  return 1;
}

template <typename T, int Vec, int Cols>
void row_lanes_launch_with(const RowLanesParams<T>& p, int64_t ctas, cudaStream_t stream) {
  row_lanes_kernel<T, Vec, Cols><<<unsigned(ctas), kRowLanesThreads, 0, stream>>>(p);
  check_launch("row_lanes_kernel");
}

template <typename T, int Vec>
void row_lanes_cols_launch(const RowLanesParams<T>& p, int cols, int64_t ctas, cudaStream_t stream) {
  switch (cols) {
    case 1: return row_lanes_launch_with<T, Vec, 1>(p, ctas, stream);
    case 2: return row_lanes_launch_with<T, Vec, 2>(p, ctas, stream);
    default: return row_lanes_launch_with<T, Vec, kRowLanesMaxCols>(p, ctas, stream);
  }
}

template <typename T>
void row_lanes_launch(const MatmulArgs& args, const DeviceTraits&) {
  if (args.c.rows == 0 || args.c.cols == 0 || args.a.block_row_count == 0) return;
  const BsrView& a = args.a;
  RowLanesParams<T> p{};
  fill_operands<T>(p, args);
  const int vec = row_lanes_vec<T>(a);
  const int cols = row_lanes_cols(args.c.cols);
  p.b_reads = b_reads_for<T>(args.b, vec, cols);
  p.groups = 32 / a.block_height;
  p.chunks_per_row = a.block_width / vec;
  p.column_chunks = int32_t((args.c.cols + cols - 1) / cols);
  const int64_t warps = row_lanes_warps(a.block_row_count, a.block_height);
  const int64_t ctas = (warps + kRowLanesWarps - 1) / kRowLanesWarps * p.column_chunks;
  if (ctas > INT32_MAX)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "narrow CUDA kernel (lanes along M): ", ctas,
                 " CTAs exceed the 2^31-1 grid limit");
  const auto stream = static_cast<cudaStream_t>(args.stream);
  switch (vec) {
    case 1: return row_lanes_cols_launch<T, 1>(p, cols, ctas, stream);
    case 2: return row_lanes_cols_launch<T, 2>(p, cols, ctas, stream);
    case 4:
      if constexpr (sizeof(T) <= 4) return row_lanes_cols_launch<T, 4>(p, cols, ctas, stream);
      break;
    case 8:
      if constexpr (sizeof(T) <= 2) return row_lanes_cols_launch<T, 8>(p, cols, ctas, stream);
      break;
    default:
      break;
  }
  detail::fail(BSRMM_STATUS_INTERNAL, "narrow CUDA kernel (lanes along M): no load width for ", vec, " elements");
}

int row_lanes_preference(const MatmulArgs& args, const DeviceTraits&) {
  const Facts facts = facts_of(args);
  const BsrView& a = args.a;
  const int64_t warps = row_lanes_warps(a.block_row_count, facts.block_height);
  const LanesAlongKFill fill = lanes_along_k_fill(along_k_shape(args), mean_row_blocks(a));
  return row_lanes_preferred(facts.block_height, facts.n, facts.skewed, warps, fill) ? 102 : 2;
}

template <typename T>
Variant row_lanes_variant(const char* name) {
  return Variant{name, &row_lanes_supports<T>, &row_lanes_launch<T>, &row_lanes_preference};
}

// ---- packed rows (packed_rows_kernel.cuh): tiny blocks at N <= 4 (wider N in 4-column chunks) ----

template <typename T>
PackedShape packed_shape_for(const MatmulArgs& args) {
  using Acc = typename Element<T>::Acc;
  return choose_packed_shape(args.a.block_height, args.a.block_width, int32_t(sizeof(T)), int32_t(sizeof(Acc)),
                             packed_cols(args.c.cols));
}

// Why the packed kernel refuses these arguments ("" where it takes them).
template <typename T>
std::string packed_refusal(const MatmulArgs& args, const DeviceTraits& device) {
  if (!narrow_supports<T>(args, device)) return "operands of another dtype or misaligned";
  if (!aligned_to(args.a.values, 16)) return "A's values not 16-byte aligned";
  if (args.a.nnzb > INT32_MAX - (1 << 16)) return "more than 2^31 - 2^16 stored blocks";
  if ((args.c.cols + kPackedMaxCols - 1) / kPackedMaxCols > INT32_MAX) return "N above 2^33";
  if (!packed_shape_for<T>(args).ok())
    return "no lane map for " + std::to_string(args.a.block_height) + "x" + std::to_string(args.a.block_width) +
           " blocks (at most 16 high, 16 of 32 lanes busy, accumulators within 32 registers)";
  return "";
}

template <typename T>
bool packed_supports(const MatmulArgs& args, const DeviceTraits& device) {
  return packed_refusal<T>(args, device).empty();
}

template <typename T, int Rounds, int Cols>
void packed_launch_with(const PackedParams<T>& p, int sm_count, cudaStream_t stream) {
  if constexpr (!kPackedFits<T, Rounds, Cols>) {
    detail::fail(BSRMM_STATUS_INTERNAL, "packed CUDA kernel: ", Rounds, " rounds x ", Cols,
                 " columns exceed the accumulator budget");
  } else {
    // Persistent: as many CTAs as stay resident (warps then stride over the work items).
    static const int resident = [] {
      int per_sm = 0;
      check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, packed_rows_kernel<T, Rounds, Cols>,
                                                               kPackedThreads, 0),
                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      return std::max(per_sm, 1);
    }();
    const int64_t needed = (p.block_row_count * p.column_chunks + kPackedWarps - 1) / kPackedWarps;
    const int64_t ctas = std::min<int64_t>(needed, int64_t(resident) * std::max(sm_count, 1));
    packed_rows_kernel<T, Rounds, Cols><<<unsigned(ctas), kPackedThreads, 0, stream>>>(p);
    check_launch("packed_rows_kernel");
  }
}

template <typename T, int Cols>
void packed_launch_rounds(const PackedParams<T>& p, int rounds, int sm_count, cudaStream_t stream) {
  switch (rounds) {
    case 1: return packed_launch_with<T, 1, Cols>(p, sm_count, stream);
    case 2: return packed_launch_with<T, 2, Cols>(p, sm_count, stream);
    case 3: return packed_launch_with<T, 3, Cols>(p, sm_count, stream);
    default: return packed_launch_with<T, 4, Cols>(p, sm_count, stream);
  }
}

template <typename T>
void packed_launch(const MatmulArgs& args, const DeviceTraits& device) {
  if (args.c.rows == 0 || args.c.cols == 0 || args.a.block_row_count == 0) return;
  const BsrView& a = args.a;
  const PackedShape shape = packed_shape_for<T>(args);
  const int cols = packed_cols(args.c.cols);
  PackedParams<T> p{};
  fill_operands<T>(p, args);
  p.total_elems = a.nnzb * int64_t(a.block_height) * a.block_width;
  p.lanes = shape.lanes;
  p.iteration_blocks = shape.iteration_blocks;
  p.period_blocks = shape.period_blocks;
  const std::size_t run = std::min<std::size_t>(16, std::size_t(cols) * sizeof(T));
  p.column_chunks = int32_t((args.c.cols + cols - 1) / cols);
  p.b_row_runs = args.b.layout == BSRMM_LAYOUT_ROW_MAJOR && aligned_to(args.b.data, run) &&
                 (std::size_t(args.b.ld) * sizeof(T)) % run == 0;
  const auto stream = static_cast<cudaStream_t>(args.stream);
  switch (cols) {
    case 1: return packed_launch_rounds<T, 1>(p, shape.rounds, device.sm_count, stream);
    case 2: return packed_launch_rounds<T, 2>(p, shape.rounds, device.sm_count, stream);
    default: return packed_launch_rounds<T, 4>(p, shape.rounds, device.sm_count, stream);
  }
}

template <typename T>
int packed_preference(const MatmulArgs&, const DeviceTraits&) {
  return kPackedPreference;
}

template <typename T>
Variant packed_variant(const char* name) {
  Variant v{name, &packed_supports<T>, &packed_launch<T>, &packed_preference<T>};
  v.refusal = &packed_refusal<T>;
  return v;
}

}  // namespace
}  // namespace bsrmm::cuda::narrow

namespace bsrmm::cuda {

std::vector<Variant> narrow_variants() {
  using narrow::column_lanes_variant;
  using narrow::narrow_variant;
  using narrow::packed_variant;
  using narrow::row_lanes_variant;
  return {
      narrow_variant<float>("narrow_f32_simt_warprows", false),
      narrow_variant<__half>("narrow_f16_simt_warprows", false),
      narrow_variant<__nv_bfloat16>("narrow_bf16_simt_warprows", false),
      narrow_variant<double>("narrow_f64_simt_warprows", false),
      narrow_variant<float>("narrow_f32_simt_splitrows", true),
      narrow_variant<__half>("narrow_f16_simt_splitrows", true),
      narrow_variant<__nv_bfloat16>("narrow_bf16_simt_splitrows", true),
      narrow_variant<double>("narrow_f64_simt_splitrows", true),
      column_lanes_variant<float>("narrow_f32_simt_nlanes"),
      column_lanes_variant<__half>("narrow_f16_simt_nlanes"),
      column_lanes_variant<__nv_bfloat16>("narrow_bf16_simt_nlanes"),
      column_lanes_variant<double>("narrow_f64_simt_nlanes"),
      row_lanes_variant<float>("narrow_f32_simt_mlanes"),
      row_lanes_variant<__half>("narrow_f16_simt_mlanes"),
      row_lanes_variant<__nv_bfloat16>("narrow_bf16_simt_mlanes"),
      row_lanes_variant<double>("narrow_f64_simt_mlanes"),
      packed_variant<float>("narrow_f32_simt_packed"),
      packed_variant<__half>("narrow_f16_simt_packed"),
      packed_variant<__nv_bfloat16>("narrow_bf16_simt_packed"),
      packed_variant<double>("narrow_f64_simt_packed"),
  };
}

}  // namespace bsrmm::cuda
