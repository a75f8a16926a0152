#include "staged_epilogue.hpp"

#include "../kernel_parts/epilogue_math.hpp"
#include "../runtime/cuda_check.hpp"
#include "sparse_dot.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace bsrmm::cuda::dense_fallback {
namespace {

constexpr int kThreads = 256;

template <typename T>
struct EpilogueParams {
  using Acc = typename Element<T>::Acc;
  SparseOperands<T> sparse;
  const int32_t* flags;
  const Acc* staging;
  T* c;
  int64_t ldc;
  bool c_col_major;
  int64_t lines;   // C's rows (row-major) or columns (column-major)
  int64_t length;  // the contiguous extent, also the staging's ld
  Acc alpha;
  Acc beta;
  const T* bias;
  bsrmm_activation activation;
};

// One thread per element, threads along C's contiguous dimension (coalesced in C and staging).
template <typename T>
__global__ void __launch_bounds__(kThreads) staged_epilogue_kernel(EpilogueParams<T> p) {
  using Acc = typename Element<T>::Acc;
  for (int64_t line = blockIdx.y; line < p.lines; line += gridDim.y) {
    for (int64_t pos = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; pos < p.length;
         pos += int64_t(gridDim.x) * blockDim.x) {
      const int64_t i = p.c_col_major ? pos : line;
      const int64_t j = p.c_col_major ? line : pos;
      const Acc acc = p.flags != nullptr && p.flags[j] != 0 ? sparse_dot(p.sparse, i, j)
                                                             : p.staging[line * p.length + pos];
      T* out = p.c + line * p.ldc + pos;
      const Acc old = p.beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
      const Acc bias = p.bias != nullptr ? Element<T>::to_acc(p.bias[i]) : Acc(0);
      *out = Element<T>::from_acc(epilogue::finish(acc, p.alpha, p.beta, old, bias, p.activation));
    }
  }
}

template <typename T>
void launch(const MatmulArgs& args, const void* staging, const int32_t* flags, cudaStream_t stream) {
  using Acc = typename Element<T>::Acc;
  EpilogueParams<T> p{};
  p.sparse = sparse_operands<T>(args);
  p.flags = flags;
  p.staging = static_cast<const Acc*>(staging);
  p.c = static_cast<T*>(args.c.data);
  p.ldc = args.c.ld;
  p.c_col_major = args.c.layout == BSRMM_LAYOUT_COL_MAJOR;
  p.lines = p.c_col_major ? args.c.cols : args.c.rows;
  p.length = p.c_col_major ? args.c.rows : args.c.cols;
  p.alpha = Acc(args.alpha);
  p.beta = Acc(args.beta);
  p.bias = static_cast<const T*>(args.bias);
  p.activation = args.activation;
  const int64_t x = std::min<int64_t>((p.length + kThreads - 1) / kThreads, 1024);
  const int64_t y = std::min<int64_t>(p.lines, 65535);
  staged_epilogue_kernel<T><<<dim3(unsigned(x), unsigned(y)), kThreads, 0, stream>>>(p);
  check_launch("staged_epilogue_kernel");
}

}  // namespace

void staged_epilogue(const MatmulArgs& args, const void* staging, const int32_t* flags,
                     cudaStream_t stream) {
  switch (args.c.dtype) {
    case BSRMM_DTYPE_F16:
      return launch<__half>(args, staging, flags, stream);
    case BSRMM_DTYPE_BF16:
      return launch<__nv_bfloat16>(args, staging, flags, stream);
    case BSRMM_DTYPE_F32:
      return launch<float>(args, staging, flags, stream);
    case BSRMM_DTYPE_F64:
      return launch<double>(args, staging, flags, stream);
  }
}

}  // namespace bsrmm::cuda::dense_fallback
