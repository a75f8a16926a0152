// cpu_rowwise_simd's vector operations on AVX2 + FMA (rowwise_kernel.hpp's `RowVectors<T>`):
// 8 f32 / 4 f64 lanes, the last vector of a chunk read through vmaskmov (a lane mask in a ymm
// register, its sign bits; masked-off lanes read as zero) and written in plain pieces (halves,
// quarters, one lane), never touching masked-off lanes. No vmaskmov store: on the Zen 3 EPYC it
// took 5-10x a vmovups (microcoded), and C's stores were most of a 1x1 / 2x2 row's time
// (entry 88).
// 16 ymm registers: 10 accumulators and chunks of up to 4 vectors leave B's vectors and the
// broadcast A value theirs. Included by rowwise_avx2.cpp only, under its target pragma: the
// row-wise nest on CPUs without AVX-512, where 1x1 / 2x2 blocks otherwise fell to the blocked
// kernel at 0.21-0.7x MKL (docs/perf-log.md entry 77).
#pragma once

#include <immintrin.h>

#include <cstdint>

#ifndef BSRMM_ROWWISE_INLINE
#define BSRMM_ROWWISE_INLINE inline __attribute__((always_inline))
#endif

namespace bsrmm::cpu {
namespace {  // NOLINT: per-TU code, as rowwise_kernel.hpp

template <typename T>
struct RowVectors;

template <>
struct RowVectors<float> {
  using vec = __m256;
  using mask = __m256i;
  static constexpr int lanes = 8;
  static constexpr int accumulators = 10;
  static constexpr int max_chunk_vectors = 4;
  static BSRMM_ROWWISE_INLINE vec zero() { return _mm256_setzero_ps(); }
  static BSRMM_ROWWISE_INLINE vec set1(float x) { return _mm256_set1_ps(x); }
  static BSRMM_ROWWISE_INLINE vec load(const float* p) { return _mm256_loadu_ps(p); }
  static BSRMM_ROWWISE_INLINE vec load(mask m, const float* p) { return _mm256_maskload_ps(p, m); }
  // Lanes [0, count) of `m` (every mask here is a prefix: first()), without vmaskmovps.
  static BSRMM_ROWWISE_INLINE void store(float* p, mask m, vec v) {
    int count = __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(m))));
    if (count == lanes) return _mm256_storeu_ps(p, v);
    __m128 part = _mm256_castps256_ps128(v);
    if (count >= 4) {
      _mm_storeu_ps(p, part);
      part = _mm256_extractf128_ps(v, 1);
      p += 4;
      count -= 4;
    }
    if (count >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
      part = _mm_movehl_ps(part, part);
      p += 2;
      count -= 2;
    }
    if (count == 1) _mm_store_ss(p, part);
  }
  static BSRMM_ROWWISE_INLINE void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
  static BSRMM_ROWWISE_INLINE bool full(mask m) { return _mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF; }
  static BSRMM_ROWWISE_INLINE vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static BSRMM_ROWWISE_INLINE vec mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
  // Lanes [0, count) on: lane i's sign bit set where i < count.
  static BSRMM_ROWWISE_INLINE mask first(int64_t count) {
    const int32_t n = count >= lanes ? lanes : static_cast<int32_t>(count);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
};

template <>
struct RowVectors<double> {
  using vec = __m256d;
  using mask = __m256i;
  static constexpr int lanes = 4;
  static constexpr int accumulators = 10;
  static constexpr int max_chunk_vectors = 4;
  static BSRMM_ROWWISE_INLINE vec zero() { return _mm256_setzero_pd(); }
  static BSRMM_ROWWISE_INLINE vec set1(double x) { return _mm256_set1_pd(x); }
  static BSRMM_ROWWISE_INLINE vec load(const double* p) { return _mm256_loadu_pd(p); }
  static BSRMM_ROWWISE_INLINE vec load(mask m, const double* p) { return _mm256_maskload_pd(p, m); }
  static BSRMM_ROWWISE_INLINE void store(double* p, mask m, vec v) {
    const int count = __builtin_popcount(static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(m))));
    if (count == lanes) return _mm256_storeu_pd(p, v);
    __m128d part = _mm256_castpd256_pd128(v);
    if (count >= 2) {
      _mm_storeu_pd(p, part);
      part = _mm256_extractf128_pd(v, 1);
      p += 2;
    }
    if (count % 2 == 1) _mm_store_sd(p, part);
  }
  static BSRMM_ROWWISE_INLINE void store(double* p, vec v) { _mm256_storeu_pd(p, v); }
  static BSRMM_ROWWISE_INLINE bool full(mask m) { return _mm256_movemask_pd(_mm256_castsi256_pd(m)) == 0xF; }
  static BSRMM_ROWWISE_INLINE vec fma(vec a, vec b, vec c) { return _mm256_fmadd_pd(a, b, c); }
  static BSRMM_ROWWISE_INLINE vec mul(vec a, vec b) { return _mm256_mul_pd(a, b); }
  static BSRMM_ROWWISE_INLINE mask first(int64_t count) {
    const int64_t n = count >= lanes ? lanes : count;
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
  }
};

}  // namespace
}  // namespace bsrmm::cpu
