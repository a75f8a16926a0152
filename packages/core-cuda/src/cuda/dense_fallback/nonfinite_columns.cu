#include "nonfinite_columns.hpp"

#include "../kernel_parts/epilogue_math.hpp"
#include "../runtime/cuda_check.hpp"
#include "sparse_dot.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace bsrmm::cuda::dense_fallback {
namespace {

constexpr int kThreads = 256;

// Each element's exponent field: all ones means NaN or an infinity, whatever the mantissa.
template <typename Bits>
constexpr Bits exponent_mask(bsrmm_dtype dtype);
template <>
constexpr uint16_t exponent_mask<uint16_t>(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_BF16 ? uint16_t(0x7F80) : uint16_t(0x7C00);
}
template <>
constexpr uint32_t exponent_mask<uint32_t>(bsrmm_dtype) { return 0x7F800000u; }
template <>
constexpr uint64_t exponent_mask<uint64_t>(bsrmm_dtype) { return 0x7FF0000000000000ull; }

__device__ void flag_column(const ColumnFlags& out, int64_t column) {
  if (atomicExch(out.flags + column, 1) == 0) out.list[atomicAdd(out.count, 1)] = int32_t(column);
}

// One thread per column of the product's first row.
template <typename Bits>
__global__ void __launch_bounds__(kThreads)
    find_nonfinite_kernel(const Bits* first_row, int64_t columns, int64_t stride, Bits exponent,
                          ColumnFlags out) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < columns;
       j += int64_t(gridDim.x) * blockDim.x)
    if ((first_row[j * stride] & exponent) == exponent) flag_column(out, j);
}

template <typename Bits>
void launch_find(const void* first_row, bsrmm_dtype dtype, int64_t columns, int64_t stride,
                 const ColumnFlags& flags, cudaStream_t stream) {
  const int64_t blocks = std::clamp<int64_t>((columns + kThreads - 1) / kThreads, 1, 1024);
  find_nonfinite_kernel<Bits><<<unsigned(blocks), kThreads, 0, stream>>>(
      static_cast<const Bits*>(first_row), columns, stride, exponent_mask<Bits>(dtype), flags);
  check_launch("find_nonfinite_kernel");
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    repair_columns_kernel(SparseOperands<T> sparse, ColumnFlags flags, int64_t rows, T* c,
                          int64_t ldc, bool c_col_major, typename Element<T>::Acc alpha) {
  using Acc = typename Element<T>::Acc;
  const int64_t total = int64_t(*flags.count) * rows;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = flags.list[e / rows];
    const int64_t i = e % rows;
    const Acc value = epilogue::finish(sparse_dot(sparse, i, j), alpha, Acc(0), Acc(0), Acc(0),
                                       BSRMM_ACTIVATION_NONE);
    c[c_col_major ? j * ldc + i : i * ldc + j] = Element<T>::from_acc(value);
  }
}

template <typename T>
void launch_repair(const MatmulArgs& args, const ColumnFlags& flags, int sm_count, cudaStream_t stream) {
  using Acc = typename Element<T>::Acc;
  // Few CTAs: when no column is flagged (the usual case) they read the count and leave.
  repair_columns_kernel<T><<<unsigned(sm_count) * 4, kThreads, 0, stream>>>(
      sparse_operands<T>(args), flags, args.c.rows, static_cast<T*>(args.c.data), args.c.ld,
      args.c.layout == BSRMM_LAYOUT_COL_MAJOR, Acc(args.alpha));
  check_launch("repair_columns_kernel");
}

}  // namespace

std::size_t column_flags_bytes(int64_t columns) {
  return (1 + 2 * std::size_t(columns)) * sizeof(int32_t);
}

ColumnFlags column_flags_at(void* scratch, int64_t columns) {
  int32_t* words = static_cast<int32_t*>(scratch);
  return {words, words + 1, words + 1 + columns};
}

void find_nonfinite_columns(const void* first_row, bsrmm_dtype dtype, int64_t columns,
                            int64_t stride, const ColumnFlags& flags, cudaStream_t stream) {
  check_cuda(cudaMemsetAsync(flags.count, 0, (1 + std::size_t(columns)) * sizeof(int32_t), stream),
             "cudaMemsetAsync(column flags)");
  switch (dtype) {
    case BSRMM_DTYPE_F16:
    case BSRMM_DTYPE_BF16:
      return launch_find<uint16_t>(first_row, dtype, columns, stride, flags, stream);
    case BSRMM_DTYPE_F32:
      return launch_find<uint32_t>(first_row, dtype, columns, stride, flags, stream);
    case BSRMM_DTYPE_F64:
      return launch_find<uint64_t>(first_row, dtype, columns, stride, flags, stream);
  }
}

void repair_columns(const MatmulArgs& args, const ColumnFlags& flags, int sm_count, cudaStream_t stream) {
  switch (args.c.dtype) {
    case BSRMM_DTYPE_F16:
      return launch_repair<__half>(args, flags, sm_count, stream);
    case BSRMM_DTYPE_BF16:
      return launch_repair<__nv_bfloat16>(args, flags, sm_count, stream);
    case BSRMM_DTYPE_F32:
      return launch_repair<float>(args, flags, sm_count, stream);
    case BSRMM_DTYPE_F64:
      return launch_repair<double>(args, flags, sm_count, stream);
  }
}

}  // namespace bsrmm::cuda::dense_fallback
