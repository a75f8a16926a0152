// sddmm_blocked: X's rows and Y's columns as T-contiguous panels of the compute type (the
// operand itself where it already is one, else packed into the workspace by the pool), every
// stored block a bh x bw tile of dot products (sddmm_tile.hpp) over T in spans that keep the
// block's panel slices in L2, the blocks split evenly over the pool (each costs the same).
#include "../common/half.hpp"
#include "isa_clones.hpp"
#include "sddmm.hpp"
#include "sddmm_tile.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;

template <typename C, typename S>
BSRMM_CPU_INLINE C widen(S v) {
  if constexpr (std::is_same_v<C, double>) {
    return detail::to_double(v);
  } else {
    return detail::to_float(v);
  }
}

// Element (r, t) of an operand at data[r * r_stride + t * t_stride]: r is X's row or Y's
// column, t runs along T. One of the two strides is 1.
struct Strides {
  int64_t r;
  int64_t t;
};
Strides x_strides(const bsrmm_dense& x) {
  return x.layout == BSRMM_LAYOUT_ROW_MAJOR ? Strides{x.ld, 1} : Strides{1, x.ld};
}
Strides y_strides(const bsrmm_dense& y) {
  return y.layout == BSRMM_LAYOUT_ROW_MAJOR ? Strides{1, y.ld} : Strides{y.ld, 1};
}

// Element (r, t) at data[r * ld + t].
template <typename C>
struct Panel {
  const C* data;
  int64_t ld;
};

// Rows a packing task converts: enough to amortise the task, and for the transposing case a
// row group whose destination lines stay in L1 while t advances.
constexpr int64_t pack_rows_per_task = 16;

template <typename S, typename C>
void pack_rows(const S* src, Strides s, int64_t r_begin, int64_t r_end, int64_t t_count, C* dst) {
  if (s.t == 1) {
    for (int64_t r = r_begin; r < r_end; ++r)
      for (int64_t t = 0; t < t_count; ++t) dst[r * t_count + t] = widen<C>(src[r * s.r + t]);
  } else {
    for (int64_t t = 0; t < t_count; ++t)
      for (int64_t r = r_begin; r < r_end; ++r)
        dst[r * t_count + t] = widen<C>(src[r * s.r + t * s.t]);
  }
}

// The operand as a panel: in place when it already is one in the compute type, else packed
// into `scratch` (r_count x t_count elements).
template <typename S, typename C>
Panel<C> panel_of(const bsrmm_dense& d, Strides s, int64_t r_count, int64_t t_count, C* scratch,
                  detail::ThreadPool& pool) {
  if constexpr (std::is_same_v<S, C>) {
    if (s.t == 1) return Panel<C>{static_cast<const C*>(d.data), s.r};
  }
  const S* src = static_cast<const S*>(d.data);
  const int64_t tasks = (r_count + pack_rows_per_task - 1) / pack_rows_per_task;
  pool.run(tasks, [&](int64_t task) {
    const int64_t begin = task * pack_rows_per_task;
    pack_rows<S, C>(src, s, begin, std::min(r_count, begin + pack_rows_per_task), t_count,
                    scratch);
  });
  return Panel<C>{scratch, t_count};
}

template <typename S, typename C>
bool needs_packing(Strides s) {
  return !std::is_same_v<S, C> || s.t != 1;
}

template <typename S, typename C>
struct Job {
  backend::BsrView pattern;
  Panel<C> x;
  Panel<C> y;
  int64_t t_count;
  S* values;
  double alpha;
  double beta;
};

// NOTES: a span of 2 KiB per panel row keeps a 64 x 64 block's slices (256 KiB) in L2 while
// its tiles re-read them; the lane reduction per span is ~1% of the span's FMAs.
template <typename C>
constexpr int64_t t_span = sddmm_tile::Lanes<C>::count * 64;

template <typename S, typename C>
BSRMM_CPU_INLINE void store_block(const Job<S, C>& job, const C* partial, S* out, int64_t count) {
  for (int64_t e = 0; e < count; ++e) {
    double v = job.alpha * static_cast<double>(partial[e]);
    if (job.beta != 0.0) v += job.beta * detail::to_double(out[e]);
    out[e] = detail::Store<S>::from(v);
  }
}

// Blocks [begin, end) of the pattern's stored order; `partial` holds bh * bw compute elements.
template <typename S, typename C>
BSRMM_CPU_INLINE void run_blocks(const Job<S, C>& job, int64_t begin, int64_t end, C* partial) {
  const backend::BsrView& p = job.pattern;
  const int32_t bh = p.block_height;
  const int32_t bw = p.block_width;
  const int64_t block_elements = int64_t{bh} * bw;
  int64_t row = std::upper_bound(p.row_ptr, p.row_ptr + p.block_row_count + 1, begin) - p.row_ptr - 1;
  for (int64_t b = begin; b < end; ++b) {
    while (p.row_ptr[row + 1] <= b) ++row;
    std::fill(partial, partial + block_elements, C{0});
    const C* x = job.x.data + row * bh * job.x.ld;
    const C* y = job.y.data + int64_t{p.col_idx[b]} * bw * job.y.ld;
    for (int64_t t = 0; t < job.t_count; t += t_span<C>) {
      const int64_t count = std::min(t_span<C>, job.t_count - t);
      sddmm_tile::dot_block<C>(bh, bw, x + t, job.x.ld, y + t, job.y.ld, count, partial);
    }
    store_block(job, partial, job.values + b * block_elements, block_elements);
  }
}

BSRMM_CPU_CLONES
void blocks_f32(const Job<float, float>& job, int64_t begin, int64_t end, float* partial) {
  run_blocks(job, begin, end, partial);
}
BSRMM_CPU_CLONES
void blocks_f16(const Job<f16_t, float>& job, int64_t begin, int64_t end, float* partial) {
  run_blocks(job, begin, end, partial);
}
BSRMM_CPU_CLONES
void blocks_bf16(const Job<bf16_t, float>& job, int64_t begin, int64_t end, float* partial) {
  run_blocks(job, begin, end, partial);
}
BSRMM_CPU_CLONES
void blocks_f64(const Job<double, double>& job, int64_t begin, int64_t end, double* partial) {
  run_blocks(job, begin, end, partial);
}

void blocks(const Job<float, float>& job, int64_t b, int64_t e, float* w) { blocks_f32(job, b, e, w); }
void blocks(const Job<f16_t, float>& job, int64_t b, int64_t e, float* w) { blocks_f16(job, b, e, w); }
void blocks(const Job<bf16_t, float>& job, int64_t b, int64_t e, float* w) { blocks_bf16(job, b, e, w); }
void blocks(const Job<double, double>& job, int64_t b, int64_t e, double* w) { blocks_f64(job, b, e, w); }

constexpr std::size_t round_up(std::size_t bytes) {
  return (bytes + detail::Buffer::host_alignment - 1) / detail::Buffer::host_alignment *
         detail::Buffer::host_alignment;
}

template <typename S, typename C>
void run(const SddmmArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace) {
  const backend::BsrView& p = args.pattern;
  const int64_t m = args.x.rows;
  const int64_t t_count = args.x.cols;
  const int64_t k = args.y.cols;
  const Strides xs = x_strides(args.x);
  const Strides ys = y_strides(args.y);
  const std::size_t x_bytes =
      needs_packing<S, C>(xs) ? round_up(static_cast<std::size_t>(m * t_count) * sizeof(C)) : 0;
  const std::size_t y_bytes =
      needs_packing<S, C>(ys) ? round_up(static_cast<std::size_t>(k * t_count) * sizeof(C)) : 0;
  if (workspace.size() < x_bytes + y_bytes) {
    workspace = detail::Buffer::allocate(x_bytes + y_bytes, workspace.device());
  }
  C* x_scratch = workspace.as<C>();
  C* y_scratch = reinterpret_cast<C*>(workspace.as<unsigned char>() + x_bytes);

  Job<S, C> job{p,
                panel_of<S, C>(args.x, xs, m, t_count, x_scratch, pool),
                panel_of<S, C>(args.y, ys, k, t_count, y_scratch, pool),
                t_count,
                static_cast<S*>(args.values.data),
                args.alpha,
                args.beta};
  const int64_t parts = std::min<int64_t>(p.nnzb, pool.size());
  const int64_t block_elements = int64_t{p.block_height} * p.block_width;
  pool.run(parts, [&](int64_t part) {
    std::vector<C> partial(static_cast<std::size_t>(block_elements));
    blocks(job, p.nnzb * part / parts, p.nnzb * (part + 1) / parts, partial.data());
  });
}

}  // namespace

void sddmm_blocked(const SddmmArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace) {
  if (args.pattern.nnzb == 0) return;
  switch (args.values.dtype) {
    case BSRMM_DTYPE_F32: run<float, float>(args, pool, workspace); break;
    case BSRMM_DTYPE_F16: run<f16_t, float>(args, pool, workspace); break;
    case BSRMM_DTYPE_BF16: run<bf16_t, float>(args, pool, workspace); break;
    case BSRMM_DTYPE_F64: run<double, double>(args, pool, workspace); break;
    case BSRMM_DTYPE_FLOAT8_E4M3:  // never here: fp8 SDDMM operands are refused
    case BSRMM_DTYPE_FLOAT8_E5M2: break;
  }
}

}  // namespace bsrmm::cpu
