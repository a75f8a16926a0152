// The SIMT SDDMM kernel: every dtype (f32, f16, bf16 accumulate in f32; f64 in f64), any block
// shape, X and Y in either layout with any leading dimension. A CTA of 256 threads computes a
// tile of up to 32 x 32 outputs of one stored block; T streams through shared memory 32 at a
// time, converted to the accumulator type on the way in. A tile with fewer outputs than threads
// (small blocks) also splits each chunk of T across threads and sums the parts at the end, so
// no block shape leaves most of the CTA idle.
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "sddmm_params.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

constexpr int kSimtThreads = 256;
constexpr int kSimtTile = 32;   // rows and columns of a tile
constexpr int kSimtDepth = 32;  // T per chunk
// A thread's work items: (output, split) pairs, at most a whole 32 x 32 tile over 256 threads.
constexpr int kSimtItems = kSimtTile * kSimtTile / kSimtThreads;

template <typename T>
struct SimtTile {
  using Acc = typename Element<T>::Acc;
  Acc x[kSimtTile][kSimtDepth + 1];  // rows of X, T-contiguous (+1: conflict-free columns)
  Acc y[kSimtTile][kSimtDepth + 1];  // columns of Y, T-contiguous
  Acc partial[kSimtThreads];         // the splits' sums, when a tile splits T
};

// loads: the tile's rows of X and columns of Y for T in [t0, t0 + kSimtDepth), zero past T;
// consecutive threads walk each operand's contiguous dimension.
template <typename T>
__device__ void simt_load(const Params<T>& p, const Frame& f, int rows, int cols, int64_t t0,
                          SimtTile<T>& s) {
  using Acc = typename Element<T>::Acc;
  const bool x_t_fastest = p.x_t_step == 1;
  for (int e = threadIdx.x; e < kSimtTile * kSimtDepth; e += kSimtThreads) {
    const int i = x_t_fastest ? e / kSimtDepth : e % kSimtTile;
    const int t = x_t_fastest ? e % kSimtDepth : e / kSimtTile;
    const bool inside = i < rows && t0 + t < p.t_count;
    s.x[i][t] = inside ? Element<T>::to_acc(p.x[(f.row0 + i) * p.x_row_step + (t0 + t) * p.x_t_step])
                       : Acc(0);
  }
  const bool y_t_fastest = p.y_t_step == 1;
  for (int e = threadIdx.x; e < kSimtTile * kSimtDepth; e += kSimtThreads) {
    const int j = y_t_fastest ? e / kSimtDepth : e % kSimtTile;
    const int t = y_t_fastest ? e % kSimtDepth : e / kSimtTile;
    const bool inside = j < cols && t0 + t < p.t_count;
    s.y[j][t] = inside ? Element<T>::to_acc(p.y[(t0 + t) * p.y_t_step + (f.col0 + j) * p.y_col_step])
                       : Acc(0);
  }
}

// The work split of a tile of `outputs` elements: `splits` threads share each output's chunk.
struct SimtSplit {
  int outputs;
  int splits;
  __device__ SimtSplit(int rows, int cols) : outputs(rows * cols) {
    const int spare = kSimtThreads / outputs;
    splits = spare < 1 ? 1 : (spare > kSimtDepth ? kSimtDepth : spare);
  }
  __device__ int items() const { return outputs * splits; }
};

// main loop: item w = tid + k * 256 is output w % outputs, split w / outputs, summing the
// chunk's t = split, split + splits, ...
template <typename T>
__device__ void simt_accumulate(const SimtTile<T>& s, const SimtSplit& split, int cols,
                                typename Element<T>::Acc (&acc)[kSimtItems]) {
#pragma unroll
  for (int k = 0; k < kSimtItems; ++k) {
    const int w = threadIdx.x + k * kSimtThreads;
    if (w >= split.items()) break;
    const int o = w % split.outputs;
    const int i = o / cols;
    const int j = o % cols;
    for (int t = w / split.outputs; t < kSimtDepth; t += split.splits) acc[k] += s.x[i][t] * s.y[j][t];
  }
}

// epilogue: values = alpha * sum + beta * values (beta == 0 never reads them), after adding up
// the splits of each output through shared memory.
template <typename T>
__device__ void simt_store(const Params<T>& p, const Frame& f, const SimtSplit& split, int cols,
                           typename Element<T>::Acc (&acc)[kSimtItems], SimtTile<T>& s) {
  using Acc = typename Element<T>::Acc;
  if (split.splits > 1) {
    // items() <= 256 here: one item per thread.
    if (threadIdx.x < split.items()) s.partial[threadIdx.x] = acc[0];
    __syncthreads();
    if (threadIdx.x < split.outputs) {
      Acc sum = Acc(0);
      for (int k = 0; k < split.splits; ++k) sum += s.partial[k * split.outputs + threadIdx.x];
      acc[0] = sum;
    }
  }
  const int finished = split.splits > 1 ? split.outputs : split.items();
  T* block = p.values + f.block * p.block_height * p.block_width;
#pragma unroll
  for (int k = 0; k < kSimtItems; ++k) {
    const int o = threadIdx.x + k * kSimtThreads;
    if (o >= finished) break;
    T* out = block + int64_t(f.m0 + o / cols) * p.block_width + f.n0 + o % cols;
    const Acc old = p.beta != 0.0 ? Element<T>::to_acc(*out) : Acc(0);
    *out = Element<T>::from_acc(
        epilogue::finish(acc[k], Acc(p.alpha), Acc(p.beta), old, Acc(0), BSRMM_ACTIVATION_NONE));
  }
}

template <typename T>
__global__ void __launch_bounds__(kSimtThreads) simt_sddmm_kernel(Params<T> p) {
  using Acc = typename Element<T>::Acc;
  __shared__ SimtTile<T> s;
  const int64_t tiles = p.nnzb * p.tiles_m * p.tiles_n;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const Frame f = frame_of(p, tile, kSimtTile, kSimtTile);
    const int rows = min(kSimtTile, p.block_height - f.m0);
    const int cols = min(kSimtTile, p.block_width - f.n0);
    const SimtSplit split(rows, cols);
    Acc acc[kSimtItems];
#pragma unroll
    for (int k = 0; k < kSimtItems; ++k) acc[k] = Acc(0);
    for (int64_t t0 = 0; t0 < p.t_count; t0 += kSimtDepth) {
      __syncthreads();  // the previous chunk (or tile's epilogue) is done with s
      simt_load(p, f, rows, cols, t0, s);
      __syncthreads();
      simt_accumulate(s, split, cols, acc);
    }
    __syncthreads();  // s.partial reuses nothing of x / y, but the last chunk's readers finish
    simt_store(p, f, split, cols, acc, s);
  }
}

}  // namespace bsrmm::cuda::sddmm_kernels
