// Runs of consecutive elements moved in as few memory operations as their size allows (16-, 8-
// or 4-byte words). The caller guarantees each run is aligned to its own size: the launchers
// check the base pointers and leading dimensions, the kernels start runs at multiples of the
// run's length.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::narrow {

// `Count` elements from `from` to `to`, through the read-only cache path where `ReadOnly` (data
// the kernel never writes: A, B) and plain loads otherwise (C, which the same kernel writes).
template <typename T, int Count, bool ReadOnly>
__device__ inline void copy_run(const T* from, T* to) {
  constexpr int kBytes = Count * int(sizeof(T));
  const auto move = [](auto* dst, const auto* src, int i) {
    if constexpr (ReadOnly) dst[i] = __ldg(src + i);
    else dst[i] = src[i];
  };
  if constexpr (kBytes % 16 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i)
      move(reinterpret_cast<uint4*>(to), reinterpret_cast<const uint4*>(from), i);
  } else if constexpr (kBytes == 8) {
    move(reinterpret_cast<uint2*>(to), reinterpret_cast<const uint2*>(from), 0);
  } else if constexpr (kBytes == 4) {
    move(reinterpret_cast<unsigned*>(to), reinterpret_cast<const unsigned*>(from), 0);
  } else {
#pragma unroll
    for (int i = 0; i < Count; ++i) to[i] = from[i];
  }
}

// A run of A or B into registers.
template <typename T, int Count>
__device__ inline void load_run(const T* from, T (&to)[Count]) {
  copy_run<T, Count, true>(from, to);
}

// A run of C: read (beta != 0) before the kernel overwrites it, then written.
template <typename T, int Count>
__device__ inline void load_run_coherent(const T* from, T (&to)[Count]) {
  copy_run<T, Count, false>(from, to);
}

template <typename T, int Count>
__device__ inline void store_run(T* to, const T (&from)[Count]) {
  copy_run<T, Count, false>(from, to);
}

}  // namespace bsrmm::cuda::narrow
