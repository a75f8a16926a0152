// mma.sync tensor-core products (sm_80+), accumulators in registers:
//   m16n8k16 for f16 / bf16: A 4 regs (row-major 16x16), B 2 regs (k-major 16x8), C 4 floats
//   m16n8k8  for tf32:       A 4 regs (16x8),               B 2 regs (8x8),         C 4 floats
//   m8n8k4   for f64 (DMMA), issued twice as one m16n8k4: A 2 doubles, B 1, C 4 doubles
// Fragment ownership (g = lane / 4, t = lane % 4): C[g][2t..2t+1] and C[g+8][2t..2t+1].
#pragma once

#include <cstdint>

namespace bsrmm::cuda::sm80 {

struct MmaF16 {
  __device__ static void run(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

struct MmaBf16 {
  __device__ static void run(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

struct MmaTf32 {
  __device__ static void run(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

// Two m8n8k4 DMMAs sharing B make the m16n8 tile the other maths use, so the warp loop and the
// epilogue see one fragment layout. Per lane: a[0] = A[g][t], a[1] = A[g+8][t], b = B[t][g];
// c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1].
struct MmaF64 {
  __device__ static void run(double (&c)[4], const double (&a)[2], double b) {
    asm volatile(
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(c[0]), "+d"(c[1])
        : "d"(a[0]), "d"(b));
    asm volatile(
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(c[2]), "+d"(c[3])
        : "d"(a[1]), "d"(b));
  }
};

// Rounds to the nearest tf32 (10-bit mantissa), ties away from zero. Feeding raw f32 bits
// would truncate instead, a bias that does not average out over long sums.
__device__ inline uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

}  // namespace bsrmm::cuda::sm80
