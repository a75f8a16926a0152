// cpu_rowwise_simd's vector operations on AVX-512 (rowwise_kernel.hpp's `RowVectors<T>`):
// 16 f32 / 8 f64 lanes, masked loads and stores through k-registers. Included by
// rowwise_avx512.cpp only, under its target pragma.
#pragma once

#include <immintrin.h>

#include <cstdint>

#ifndef BSRMM_ROWWISE_INLINE
#define BSRMM_ROWWISE_INLINE inline __attribute__((always_inline))
#endif

namespace bsrmm::cpu {
namespace {  // NOLINT: per-TU code, as rowwise_kernel.hpp

// The AVX-512 operations the nest needs, per element type: 32 zmm registers, so 24
// accumulators (8 left for B and A) and chunks of up to 8 vectors.
template <typename T>
struct RowVectors;

template <>
struct RowVectors<float> {
  using vec = __m512;
  using mask = __mmask16;
  static constexpr int lanes = 16;
  static constexpr int accumulators = 24;
  static constexpr int max_chunk_vectors = 8;
  static BSRMM_ROWWISE_INLINE vec zero() { return _mm512_setzero_ps(); }
  static BSRMM_ROWWISE_INLINE vec set1(float x) { return _mm512_set1_ps(x); }
  static BSRMM_ROWWISE_INLINE vec load(const float* p) { return _mm512_loadu_ps(p); }
  static BSRMM_ROWWISE_INLINE vec load(mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static BSRMM_ROWWISE_INLINE void store(float* p, mask m, vec v) { _mm512_mask_storeu_ps(p, m, v); }
  static BSRMM_ROWWISE_INLINE void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static BSRMM_ROWWISE_INLINE bool full(mask m) { return m == mask(0xFFFF); }
  static BSRMM_ROWWISE_INLINE vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static BSRMM_ROWWISE_INLINE vec mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
  static BSRMM_ROWWISE_INLINE mask first(int64_t count) {
    return count >= lanes ? mask(0xFFFF) : mask((1u << count) - 1u);
  }
};

template <>
struct RowVectors<double> {
  using vec = __m512d;
  using mask = __mmask8;
  static constexpr int lanes = 8;
  static constexpr int accumulators = 24;
  static constexpr int max_chunk_vectors = 8;
  static BSRMM_ROWWISE_INLINE vec zero() { return _mm512_setzero_pd(); }
  static BSRMM_ROWWISE_INLINE vec set1(double x) { return _mm512_set1_pd(x); }
  static BSRMM_ROWWISE_INLINE vec load(const double* p) { return _mm512_loadu_pd(p); }
  static BSRMM_ROWWISE_INLINE vec load(mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  static BSRMM_ROWWISE_INLINE void store(double* p, mask m, vec v) { _mm512_mask_storeu_pd(p, m, v); }
  static BSRMM_ROWWISE_INLINE void store(double* p, vec v) { _mm512_storeu_pd(p, v); }
  static BSRMM_ROWWISE_INLINE bool full(mask m) { return m == mask(0xFF); }
  static BSRMM_ROWWISE_INLINE vec fma(vec a, vec b, vec c) { return _mm512_fmadd_pd(a, b, c); }
  static BSRMM_ROWWISE_INLINE vec mul(vec a, vec b) { return _mm512_mul_pd(a, b); }
  static BSRMM_ROWWISE_INLINE mask first(int64_t count) {
    return count >= lanes ? mask(0xFF) : mask((1u << count) - 1u);
  }
};

}  // namespace
}  // namespace bsrmm::cpu
