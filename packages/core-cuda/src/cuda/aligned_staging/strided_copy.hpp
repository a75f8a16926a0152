// One strided matrix copy on the SMs, for aligned staging's small operands: `outer` runs of
// `inner` elements each (rows of a row-major matrix, columns of a column-major one) from `src`
// (runs `src_ld` apart, `src_inner` x `src_outer` of them real) into `dst` (`dst_ld` apart);
// what lies past the source's extent is written as zeros. cudaMemcpy2DAsync moved the same
// bytes run by run on the copy engine, ~10x slower for runs of tens of bytes (perf-log 99).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace bsrmm::cuda::aligned_staging {

struct StridedCopy {
  void* dst;
  int64_t dst_ld;
  const void* src;
  int64_t src_ld;
  int64_t inner, outer;          // the extent written into dst
  int64_t src_inner, src_outer;  // the extent read from src; past it, zeros
  int element_bytes;             // 2, 4 or 8
};

// Enqueues the copy on `stream`; throws bsrmm::detail::Error on a launch failure.
void strided_copy(const StridedCopy& copy, cudaStream_t stream);

}  // namespace bsrmm::cuda::aligned_staging
