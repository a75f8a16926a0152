// When the dense fallback should run: one dense GEMM over the whole of op(A) costs the same at
// every density, while the sparse kernels cost in proportion to the stored blocks, so above some
// density the dense product wins. Host code with no CUDA dependency (tested on the CPU).
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstdint>

namespace bsrmm::cuda::dense_fallback {

// The family of the sparse kernel that would run instead (the registry's best supporting one).
enum class SparseFamily { generic, sm80, sm90 };

// Density (stored blocks / all blocks of A) at which the dense GEMM and the family's sparse
// kernels take the same time, for f16/bf16 with a large N. Between the measured block sizes the
// value is interpolated in log2(sqrt(block area)); outside them it is clamped. sm90 runs blocks
// 16 or 32 high and a multiple of that wide as square parts, and blocks 64 or 128 high and 32 to
// 128 wide at about the rate of their height: the square block's value in both cases.
double break_even_density(int32_t block_height, int32_t block_width, SparseFamily family);

// Blocks under 16 a side at N past the narrow kernels' range (they run every such product,
// at 3-6 TFLOPS from N = 256 on the H100's coverage suite): density where a dense GEMM of
// `dtype` (`tf32`: f32 in TF32 mode) takes as long, the larger of the rate ratio (the GEMM
// compute-bound) and the byte ratio (the GEMM reading all of A at N x 2 flops per element).
double tiny_block_break_even(bsrmm_dtype dtype, bool tf32, int64_t n);

enum class Placement {
  skip,   // far below the break-even: not even timed (the dense copy would only cost memory)
  last,   // a candidate the tuner times after the sparse kernels
  first,  // the untuned default
};

// f16/bf16 at or above the break-even: first. Any dtype at or above half of it: last (the tuner
// decides; no measurement backs a default for f32/tf32/f64). Below: skip.
Placement placement(double density, bsrmm_dtype dtype, int32_t block_height, int32_t block_width,
                    SparseFamily family);
// Tiny blocks at large N (tiny_block_break_even): last from half of it, else skip; first from
// a multiple of it where the sparse kernels are known to run at or below the rate the break-even
// assumes (5 TFLOPS). On skewed block rows (narrow::skewed_rows) from twice it: the longest rows,
// not the work, set the sparse kernels' time (power-law 2x2-8x8 at d 1/32, N 256-1024, tf32 /
// bf16: dense 1.3-7x faster than the best sparse kernel). On other rows by block area: blocks of
// at most 4 elements from twice it (uniform 2x2 at d 1/32, N 256-1024: dense 1.1-3.6x faster),
// at most 16 from four times it (4x4: the mma kernel runs ~10 TFLOPS; dense 1.3-2x faster from
// there), larger ones never (8x8 bf16 N = 256: the mma kernel 2x faster than dense at d 1/32).
// docs/perf-log.md entries 79 and 81.
Placement tiny_block_placement(double density, bsrmm_dtype dtype, bool tf32, int64_t n, bool skewed,
                               int64_t block_area);

}  // namespace bsrmm::cuda::dense_fallback
