// Run-time arguments of the sm80 tensor-op kernels, one struct per accumulator type: alpha and
// beta in float for the fp32-accumulating maths, in double for f64 (a float alpha would round
// an f64 result at ~1e-8).
#pragma once

#include <bsrmm/bsrmm.h>

#include "../kernel_parts/tile_schedule.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm80 {

template <class Acc>
struct TensorOpParams {
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const void* values;  // blocks row-major, block_height x block_width each
  int32_t block_height;
  int32_t block_width;
  const void* b;
  int64_t ldb;
  void* c;
  int64_t ldc;
  bool c_col_major;
  bool c_vector_ok;  // C's base and ld allow 16-byte accesses
  int64_t n;
  Acc alpha;
  Acc beta;
  const void* bias;  // per row of C, or null
  bsrmm_activation activation;
  TileSchedule schedule;
};

}  // namespace bsrmm::cuda::sm80
