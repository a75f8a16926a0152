// The end of a tile: the warps' accumulators (fp32, or f64) go through shared memory (the
// pipeline's, now free) so that C is read and written in whole 16-byte vectors along its
// contiguous dimension, whichever layout C has. Then out = activation(alpha*acc + beta*C + bias)
// in the accumulator type (kernel_parts/epilogue_math.hpp), rounded once to C's type. Partial vectors (the end of N, or a C
// whose base or ld forbids 16-byte access) go element by element.
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "tensorop_params.cuh"
#include "warp_mma.cuh"

#include <type_traits>

namespace bsrmm::cuda::sm80 {

template <class Cfg>
struct Epilogue {
  using T = typename Cfg::T;
  using Acc = typename Cfg::Acc;
  using Pair = std::conditional_t<std::is_same_v<Acc, double>, double2, float2>;
  static constexpr int V = Cfg::kVector;
  struct alignas(16) Vector {
    T v[V];
  };

  const typename Cfg::Params& p;
  int64_t row0;  // first row of C of the tile
  int64_t n0;    // first column of C of the tile

  __device__ Acc finish(Acc acc, T old, int64_t row) const {
    const Acc c_old = p.beta != Acc(0) ? Element<T>::to_acc(old) : Acc(0);
    const Acc bias = p.bias ? Element<T>::to_acc(static_cast<const T*>(p.bias)[row]) : Acc(0);
    return epilogue::finish(acc, p.alpha, p.beta, c_old, bias, p.activation);
  }

  __device__ T* at(int64_t row, int64_t col) const {
    T* c = static_cast<T*>(p.c);
    return p.c_col_major ? c + col * p.ldc + row : c + row * p.ldc + col;
  }

  // Call after every thread's last read of the pipeline's shared memory.
  __device__ void store(const WarpMma<Cfg>& mma, Acc* tile) const {
    const int g = mma.lane / 4;
    const int t = mma.lane % 4;
#pragma unroll
    for (int i = 0; i < Cfg::kMmaRows; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::kMmaCols; ++j) {
        Acc* out = tile + (mma.warp_m0 + i * 16 + g) * Cfg::kCStride + mma.warp_n0 + j * 8 + 2 * t;
        *reinterpret_cast<Pair*>(out) = Pair{mma.acc[i][j][0], mma.acc[i][j][1]};
        *reinterpret_cast<Pair*>(out + 8 * Cfg::kCStride) = Pair{mma.acc[i][j][2], mma.acc[i][j][3]};
      }
    __syncthreads();
    if (p.c_col_major)
      write_col_major(tile);
    else
      write_row_major(tile);
  }

 private:
  // Each thread writes V consecutive columns of one row.
  __device__ void write_row_major(const Acc* tile) const {
    constexpr int per_row = Cfg::kBN / V;
    for (int index = threadIdx.x; index < Cfg::kBM * per_row; index += Cfg::kThreads) {
      const int r = index / per_row;
      const int c = (index % per_row) * V;
      const int64_t row = row0 + r;
      const int64_t col = n0 + c;
      if (col >= p.n) continue;
      const Acc* acc = tile + r * Cfg::kCStride + c;
      if (p.c_vector_ok && col + V <= p.n) {
        Vector* out = reinterpret_cast<Vector*>(at(row, col));
        Vector old{};
        if (p.beta != Acc(0)) old = *out;
        Vector result;
#pragma unroll
        for (int e = 0; e < V; ++e) result.v[e] = Element<T>::from_acc(finish(acc[e], old.v[e], row));
        *out = result;
      } else {
        for (int e = 0; e < V && col + e < p.n; ++e) {
          T* out = at(row, col + e);
          *out = Element<T>::from_acc(finish(acc[e], p.beta != Acc(0) ? *out : T(), row));
        }
      }
    }
  }

  // Each thread writes V consecutive rows of one column; consecutive threads take consecutive
  // columns so their shared-memory reads fall in distinct banks.
  __device__ void write_col_major(const Acc* tile) const {
    for (int index = threadIdx.x; index < Cfg::kBN * (Cfg::kBM / V); index += Cfg::kThreads) {
      const int c = index % Cfg::kBN;
      const int r = (index / Cfg::kBN) * V;
      const int64_t col = n0 + c;
      if (col >= p.n) continue;
      const int64_t row = row0 + r;
      if (p.c_vector_ok) {
        Vector* out = reinterpret_cast<Vector*>(at(row, col));
        Vector old{};
        if (p.beta != Acc(0)) old = *out;
        Vector result;
#pragma unroll
        for (int e = 0; e < V; ++e)
          result.v[e] = Element<T>::from_acc(finish(tile[(r + e) * Cfg::kCStride + c], old.v[e], row + e));
        *out = result;
      } else {
        for (int e = 0; e < V; ++e) {
          T* out = at(row + e, col);
          *out = Element<T>::from_acc(finish(tile[(r + e) * Cfg::kCStride + c], p.beta != Acc(0) ? *out : T(), row + e));
        }
      }
    }
  }
};

}  // namespace bsrmm::cuda::sm80
