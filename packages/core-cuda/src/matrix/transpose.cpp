#include "transpose.hpp"

#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "../device/device_runtime.hpp"
#include "bsr_matrix.hpp"
#include "value_scales.hpp"

#if BSRMM_WITH_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace bsrmm::matrix {

using detail::Buffer;

namespace {

template <typename Element>
void transpose_blocks_host(const Element* src, Element* dst, const std::vector<int32_t>& source_block,
                           int32_t height, int32_t width) {
  const size_t block = static_cast<size_t>(height) * static_cast<size_t>(width);
  for (size_t t = 0; t < source_block.size(); ++t) {
    const Element* from = src + static_cast<size_t>(source_block[t]) * block;
    Element* to = dst + t * block;
    for (int32_t i = 0; i < height; ++i) {
      for (int32_t j = 0; j < width; ++j) to[static_cast<size_t>(j) * height + i] = from[static_cast<size_t>(i) * width + j];
    }
  }
}

// A^T's fp8 scales: every block keeps its source block's scale. One per tensor stays one; per
// block or per block row of A become per block of A^T (a block row of A is a block column of
// A^T, which no scale kind follows).
std::shared_ptr<const ValueScales> transposed_scales(const ValueScales& a, const TransposedStructure& t) {
  auto scales = std::make_shared<ValueScales>();
  if (a.kind == BSRMM_SCALE_PER_TENSOR) {
    scales->values = a.values;
    return scales;
  }
  scales->kind = BSRMM_SCALE_PER_BLOCK;
  scales->values.resize(t.source_block.size());
  for (std::size_t i = 0; i < t.source_block.size(); ++i) {
    // Block i of A^T lies in A's block row t.structure.col_idx[i].
    scales->values[i] = matrix_scale(a.values.data(), a.kind, t.structure().col_idx[i], t.source_block[i]);
  }
  return scales;
}

}  // namespace

TransposedStructure transpose_structure(const BsrStructure& a, bsrmm_device device, void* stream) {
  TransposedStructure t;
  BsrStructure structure;
  structure.shape = a.shape.transposed();
  const int64_t rows_t = structure.shape.block_row_count;
  std::vector<int32_t>& row_ptr = structure.row_ptr;
  row_ptr.assign(static_cast<size_t>(rows_t) + 1, 0);
  for (int32_t column : a.col_idx) ++row_ptr[static_cast<size_t>(column) + 1];
  for (int64_t r = 0; r < rows_t; ++r) row_ptr[static_cast<size_t>(r) + 1] += row_ptr[static_cast<size_t>(r)];

  // Visiting A's rows in order leaves every row of A^T sorted by its column (A's block row).
  std::vector<int32_t> cursor(row_ptr.begin(), row_ptr.end() - 1);
  structure.col_idx.resize(a.col_idx.size());
  t.source_block.resize(a.col_idx.size());
  for (int64_t r = 0; r < a.shape.block_row_count; ++r) {
    for (int32_t p = a.row_ptr[static_cast<size_t>(r)]; p < a.row_ptr[static_cast<size_t>(r) + 1]; ++p) {
      const int32_t slot = cursor[static_cast<size_t>(a.col_idx[static_cast<size_t>(p)])]++;
      structure.col_idx[static_cast<size_t>(slot)] = static_cast<int32_t>(r);
      t.source_block[static_cast<size_t>(slot)] = p;
    }
  }
  t.shared = share_structure(std::move(structure), device, stream);
  if (device.type == BSRMM_DEVICE_CUDA) {
    if (!t.source_block.empty()) {
      t.device_source_block = Buffer::allocate(t.source_block.size() * sizeof(int32_t), device);
      detail::copy_bytes(t.device_source_block.data(), device, t.source_block.data(),
                         bsrmm_device{BSRMM_DEVICE_CPU, 0}, t.device_source_block.size(), stream);
    }
    detail::synchronize(device, stream);
  }
  return t;
}

void write_transposed_values(const BsrMatrix& a, const TransposedStructure& t, void* out, void* stream) {
  const int32_t height = a.shape().block_height;
  const int32_t width = a.shape().block_width;
  if (a.device().type == BSRMM_DEVICE_CPU) {
    switch (detail::element_size(a.dtype())) {
      case 8:
        return transpose_blocks_host(a.values().as<const uint64_t>(), static_cast<uint64_t*>(out),
                                     t.source_block, height, width);
      case 4:
        return transpose_blocks_host(a.values().as<const uint32_t>(), static_cast<uint32_t*>(out),
                                     t.source_block, height, width);
      case 2:
        return transpose_blocks_host(a.values().as<const uint16_t>(), static_cast<uint16_t*>(out),
                                     t.source_block, height, width);
      default:
        return transpose_blocks_host(a.values().as<const uint8_t>(), static_cast<uint8_t*>(out),
                                     t.source_block, height, width);
    }
  }
#if BSRMM_WITH_CUDA
  cuda::transpose_blocks(a.values().data(), out, t.device_source_block.as<const int32_t>(),
                         a.shape().nnzb, height, width, a.dtype(), a.device().ordinal, stream);
#else
  (void)out;
  (void)stream;
  detail::fail(BSRMM_STATUS_NO_DEVICE, detail::built_without_cuda());
#endif
}

std::unique_ptr<BsrMatrix> build_transposed(const BsrMatrix& a, const TransposedStructure& t,
                                            void* stream) {
  std::shared_ptr<const ValueScales> scales = a.scales() ? transposed_scales(*a.scales(), t) : nullptr;
  Buffer values = Buffer::allocate(a.value_bytes(), a.device());
  write_transposed_values(a, t, values.data(), stream);
  // over() waits for the stream, so the values are ready on any stream.
  return BsrMatrix::over(t.shared, a.dtype(), std::move(values), stream, std::move(scales));
}

}  // namespace bsrmm::matrix
