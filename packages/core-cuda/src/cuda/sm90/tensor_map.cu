#include "tensor_map.hpp"

#include "../../common/error.hpp"

#include <cuda_runtime.h>

#include <mutex>

namespace bsrmm::cuda::sm90 {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_tiled() {
  static EncodeTiled function = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    // 12000: the ABI of cuTensorMapEncodeTiled as introduced in CUDA 12.0 (unchanged since).
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000,
                                         cudaEnableDefault, &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
      function = reinterpret_cast<EncodeTiled>(entry);
    else
      cudaGetLastError();
  });
  if (!function)
    detail::fail(BSRMM_STATUS_CUDA_ERROR,
                 "the CUDA driver does not provide cuTensorMapEncodeTiled (TMA needs driver >= 12.0)");
  return function;
}

}  // namespace

CUtensorMap make_tensor_map_2d(const Tensor2d& tensor, uint32_t box_cols, uint32_t box_rows,
                               TmaSwizzle swizzle) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {tensor.cols, tensor.rows};
  const cuuint64_t strides[1] = {tensor.row_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapSwizzle mode = swizzle == TmaSwizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                  : swizzle == TmaSwizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                               : CU_TENSOR_MAP_SWIZZLE_32B;
  if (tensor.element_bytes != 2)
    detail::fail(BSRMM_STATUS_INTERNAL, "make_tensor_map_2d: element_bytes ", tensor.element_bytes,
                 " (only 2-byte elements are mapped)");
  const CUresult result = encode_tiled()(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(tensor.data), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, mode, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    detail::fail(BSRMM_STATUS_CUDA_ERROR, "cuTensorMapEncodeTiled failed (CUresult ", int(result),
                 ") for a ", tensor.rows, " x ", tensor.cols, " tensor, row stride ",
                 tensor.row_bytes, " bytes, box ", box_rows, " x ", box_cols);
  return map;
}

}  // namespace bsrmm::cuda::sm90
