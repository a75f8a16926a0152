#include "tensor_map.hpp"

#include "../../common/error.hpp"

#include <cuda_runtime.h>

#include <mutex>
#include <string>

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

CUtensorMapSwizzle swizzle_mode(TmaSwizzle swizzle) {
  return swizzle == TmaSwizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
         : swizzle == TmaSwizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                      : CU_TENSOR_MAP_SWIZZLE_32B;
}

// dims / box innermost first; strides (bytes) of every dimension but the innermost.
CUtensorMap encode(const Tensor2d& tensor, cuuint32_t rank, const cuuint64_t* dims,
                   const cuuint64_t* strides, const cuuint32_t* box, TmaSwizzle swizzle) {
  if (tensor.element_bytes != 2 && tensor.element_bytes != 1)
    detail::fail(BSRMM_STATUS_INTERNAL, "tensor map: element_bytes ", tensor.element_bytes,
                 " (only 1- and 2-byte elements are mapped)");
  CUtensorMap map;
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUtensorMapDataType type =
      tensor.element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16;
  const CUresult result = encode_tiled()(
      &map, type, rank, const_cast<void*>(tensor.data), dims, strides,
      box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(swizzle),
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    detail::fail(BSRMM_STATUS_CUDA_ERROR, "cuTensorMapEncodeTiled failed (CUresult ", int(result),
                 ") for a ", tensor.rows, " x ", tensor.cols, " tensor, row stride ",
                 tensor.row_bytes, " bytes, rank ", rank, ", box ", box[1], " x ", box[0],
                 rank > 2 ? " x " + std::to_string(box[2]) : std::string());
  return map;
}

}  // namespace

CUtensorMap make_tensor_map_2d(const Tensor2d& tensor, uint32_t box_cols, uint32_t box_rows,
                               TmaSwizzle swizzle) {
  const cuuint64_t dims[2] = {tensor.cols, tensor.rows};
  const cuuint64_t strides[1] = {tensor.row_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  return encode(tensor, 2, dims, strides, box, swizzle);
}

CUtensorMap make_tensor_map_column_chunks(const Tensor2d& tensor, uint32_t box_rows,
                                          uint32_t box_chunks) {
  if (tensor.cols % 64 != 0)
    detail::fail(BSRMM_STATUS_INTERNAL, "make_tensor_map_column_chunks: ", tensor.cols,
                 " columns (a multiple of 64 is needed)");
  const cuuint64_t dims[3] = {64, tensor.rows, tensor.cols / 64};
  const cuuint64_t strides[2] = {tensor.row_bytes, 64 * tensor.element_bytes};
  const cuuint32_t box[3] = {64, box_rows, box_chunks};
  return encode(tensor, 3, dims, strides, box, TmaSwizzle::b128);
}

}  // namespace bsrmm::cuda::sm90
