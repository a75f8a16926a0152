// Global -> shared copies of one pipeline step: the BM x KC slice of an A block and the KC x BN
// panel of B it multiplies, 16 bytes per cp.async. Columns of B past N are zero-filled (they
// read nothing), so any N works; the k range is always inside B because K is a whole number of
// blocks.
//
// Each thread owns the same column of 16-byte chunks in every step (a fixed line and vector
// position, repeated every `pass` lines), so its addresses are set up once: per step a chunk
// costs one address multiply-add and the cp.async. Strides come from the kernel parameters
// (constant memory), leaving only the thread's base pointers and offsets in registers.
#pragma once

#include "cp_async.cuh"
#include "tensorop_params.cuh"

#include <type_traits>

namespace bsrmm::cuda::sm80 {

template <class Cfg>
class OperandLoader {
  using T = typename Cfg::T;
  static constexpr int V = Cfg::kVector;
  static constexpr int kThreads = Cfg::kThreads;

  // A slice: BM lines (rows) of KC elements.
  static constexpr int kAPerLine = Cfg::kKC / V;
  static constexpr int kALinesPerPass = kThreads / kAPerLine;
  // B panel: row-major, KC lines (rows of B) of BN elements; column-major, BN lines (columns
  // of B) of KC elements.
  static constexpr int kBLines = Cfg::kBColMajor ? Cfg::kBN : Cfg::kKC;
  static constexpr int kBPerLine = Cfg::kBColMajor ? Cfg::kKC / V : Cfg::kBN / V;
  static constexpr int kBLinesPerPass = kThreads / kBPerLine;
  static_assert(kThreads % kAPerLine == 0 && kThreads % kBPerLine == 0,
                "a thread keeps one vector position in every pass");

 public:
  __device__ OperandLoader(const typename Cfg::Params& params, int64_t a_row0, int64_t n0) : p(params) {
    const int tid = int(threadIdx.x);
    a_line = tid / kAPerLine;
    const int a_vector = (tid % kAPerLine) * V;
    a_thread = static_cast<const T*>(p.values) + (a_row0 + a_line) * p.block_width + a_vector;
    a_shared = a_line * Cfg::kAStride + a_vector;

    b_line = tid / kBPerLine;
    const int b_vector = (tid % kBPerLine) * V;
    b_shared = b_line * Cfg::kBStride + b_vector;
    if constexpr (Cfg::kBColMajor) {
      // Line = column n0 + b_line (+ pass * kBLinesPerPass); whole chunks or nothing.
      b_thread = static_cast<const T*>(p.b) + (n0 + b_line) * p.ldb + b_vector;
      b_left = p.n - (n0 + b_line);
    } else {
      // Line = a row of B; this thread's columns n0 + b_vector .. + V, the same in every pass.
      b_thread = static_cast<const T*>(p.b) + int64_t(b_line) * p.ldb + n0 + b_vector;
      b_left = p.n - (n0 + b_vector);
    }
  }

  // block: index of the A block; kc: first column inside it; b_row: first row of B (col*bw+kc).
  __device__ void load(T* a_stage, T* b_stage, int32_t block, int32_t kc, int64_t b_row) const {
    const T* a = a_thread + int64_t(block) * p.block_height * p.block_width + kc;
#pragma unroll
    for (int pass = 0; pass < (Cfg::kBM + kALinesPerPass - 1) / kALinesPerPass; ++pass) {
      if (Cfg::kBM % kALinesPerPass == 0 || a_line + pass * kALinesPerPass < Cfg::kBM)
        cp_async_16(a_stage + a_shared + pass * kALinesPerPass * Cfg::kAStride,
                    a + int64_t(pass * kALinesPerPass) * p.block_width, 16);
    }

    const T* b = Cfg::kBColMajor ? b_thread + b_row : b_thread + b_row * p.ldb;
    // Every N tile but the last is whole: one test per step, and its copies carry no others.
    const bool whole = b_left >= (Cfg::kBColMajor ? kBLines : V);
    if (whole) {
      for_each_b_pass([&](T* dst, const T* src, int) { cp_async_16(dst, src, 16); }, b_stage, b);
    } else if constexpr (Cfg::kBColMajor) {
      for_each_b_pass(
          [&](T* dst, const T* src, int line) {
            const bool inside = line < b_left;
            cp_async_16(dst, inside ? src : static_cast<const T*>(p.b), inside ? 16 : 0);
          },
          b_stage, b);
    } else {
      for_each_b_pass(
          [&](T* dst, const T* src, int) {
            if (b_left <= 0)
              cp_async_16(dst, p.b, 0);
            else
              copy_partial(dst, src, int(b_left));
          },
          b_stage, b);
    }
  }

 private:
  // copy(dst, src, line offset of the pass) for each of this thread's B chunks.
  template <class Copy>
  __device__ void for_each_b_pass(Copy copy, T* b_stage, const T* b) const {
#pragma unroll
    for (int pass = 0; pass < (kBLines + kBLinesPerPass - 1) / kBLinesPerPass; ++pass) {
      if (kBLines % kBLinesPerPass != 0 && b_line + pass * kBLinesPerPass >= kBLines) continue;
      copy(b_stage + b_shared + pass * kBLinesPerPass * Cfg::kBStride,
           b + int64_t(pass * kBLinesPerPass) * p.ldb, pass * kBLinesPerPass);
    }
  }

  // The last vector of a row of B when N is not a multiple of V: element by element, zero-filled.
  // (cp.async with a short source size would be shorter, but its 16-byte read can cross the end
  // of B's allocation.) Raw bits packed into four words with constant indices, so nothing lands
  // in local memory.
  __device__ static void copy_partial(T* dst, const T* src, int count) {
    if constexpr (sizeof(T) == 8) {
      // f64: V = 2, so only the first element is inside.
      const double first = count > 0 ? *reinterpret_cast<const double*>(src) : 0.0;
      *reinterpret_cast<double2*>(dst) = make_double2(first, 0.0);
    } else {
      using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
      const Bits* bits = reinterpret_cast<const Bits*>(src);
      uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const uint32_t value = e < count ? uint32_t(bits[e]) : 0u;
        words[e * sizeof(T) / 4] |= value << (8 * ((e * sizeof(T)) % 4));
      }
      *reinterpret_cast<uint4*>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
    }
  }

  const typename Cfg::Params& p;
  const T* a_thread;  // this thread's first A chunk, block 0, kc 0
  const T* b_thread;  // this thread's first B chunk, b_row 0
  int64_t b_left;     // row-major: valid columns from this thread's vector on; column-major:
                      // valid columns from this thread's first line on
  int a_line;
  int a_shared;       // element offsets of this thread's chunks in a stage
  int b_line;
  int b_shared;
};

}  // namespace bsrmm::cuda::sm80
