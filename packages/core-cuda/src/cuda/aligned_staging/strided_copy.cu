#include "strided_copy.hpp"

#include "../runtime/cuda_check.hpp"

#include <algorithm>

namespace bsrmm::cuda::aligned_staging {
namespace {

// One thread per element of dst's extent, grid-strided; consecutive threads walk a run, so
// reads and writes of a run coalesce. `Index` is 32-bit where the extent allows: the division
// that finds an element's run is a few instructions then, ~70 in 64 bits.
template <typename Element, typename Index>
__global__ void strided_copy_kernel(StridedCopy copy) {
  auto* dst = static_cast<Element*>(copy.dst);
  const auto* src = static_cast<const Element*>(copy.src);
  const Index total = Index(copy.inner * copy.outer), inner = Index(copy.inner);
  for (Index at = Index(blockIdx.x) * blockDim.x + threadIdx.x; at < total; at += Index(gridDim.x) * blockDim.x) {
    const Index run = at / inner, i = at - run * inner;
    const bool real = int64_t(i) < copy.src_inner && int64_t(run) < copy.src_outer;
    dst[int64_t(run) * copy.dst_ld + i] = real ? src[int64_t(run) * copy.src_ld + i] : Element(0);
  }
}

template <typename Element>
void launch(const StridedCopy& copy, bool narrow_index, unsigned blocks, int threads, cudaStream_t stream) {
  if (narrow_index)
    strided_copy_kernel<Element, uint32_t><<<blocks, threads, 0, stream>>>(copy);
  else
    strided_copy_kernel<Element, int64_t><<<blocks, threads, 0, stream>>>(copy);
}

}  // namespace

void strided_copy(const StridedCopy& copy, cudaStream_t stream) {
  const int64_t total = copy.inner * copy.outer;
  if (total == 0) return;
  constexpr int kThreads = 256;
  const unsigned blocks = unsigned(std::min<int64_t>((total + kThreads - 1) / kThreads, 8192));
  // Headroom for the grid stride past the last element.
  const bool narrow_index = total < (int64_t(1) << 31);
  switch (copy.element_bytes) {
    case 2: launch<uint16_t>(copy, narrow_index, blocks, kThreads, stream); break;
    case 4: launch<uint32_t>(copy, narrow_index, blocks, kThreads, stream); break;
    default: launch<uint64_t>(copy, narrow_index, blocks, kThreads, stream); break;
  }
  check_cuda(cudaGetLastError(), "strided copy (aligned staging)");
}

}  // namespace bsrmm::cuda::aligned_staging
