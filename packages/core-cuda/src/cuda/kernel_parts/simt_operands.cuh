// What the SIMT families (generic, narrow) ask of a multiply's operands, and the fields their
// kernel parameters share. Host code of .cu files.
#pragma once

#include "../variant.hpp"
#include "element.cuh"

#include <cstddef>
#include <cstdint>

namespace bsrmm::cuda {

inline bool aligned_to(const void* pointer, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

// A, B, C (and the bias) all of dtype T, each aligned to T, on an sm_80+ device (the build's
// oldest target).
template <typename T>
bool simt_supports(const MatmulArgs& args, const DeviceTraits& device) {
  constexpr bsrmm_dtype dtype = Element<T>::dtype;
  if (device.cc_major < 8) return false;
  if (args.a.dtype != dtype || args.b.dtype != dtype || args.c.dtype != dtype) return false;
  return aligned_to(args.a.values, sizeof(T)) && aligned_to(args.b.data, sizeof(T)) &&
         aligned_to(args.c.data, sizeof(T)) && aligned_to(args.bias, sizeof(T));
}

// The fields every SIMT kernel's parameters name alike: A's arrays and shape, B and C with
// their element steps, the epilogue. `P` is the kernel's parameter struct of element type T.
template <typename T, typename P>
void fill_operands(P& p, const MatmulArgs& args) {
  const BsrView& a = args.a;
  p.row_ptr = a.row_ptr;
  p.col_idx = a.col_idx;
  p.values = static_cast<const T*>(a.values);
  p.row_order = a.row_order;
  p.block_height = a.block_height;
  p.block_width = a.block_width;
  p.block_row_count = a.block_row_count;
  p.b = static_cast<const T*>(args.b.data);
  p.b_row_step = args.b.layout == BSRMM_LAYOUT_ROW_MAJOR ? args.b.ld : 1;
  p.b_col_step = args.b.layout == BSRMM_LAYOUT_ROW_MAJOR ? 1 : args.b.ld;
  p.c = static_cast<T*>(args.c.data);
  p.ldc = args.c.ld;
  p.c_col_major = args.c.layout == BSRMM_LAYOUT_COL_MAJOR;
  p.n = args.c.cols;
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.bias = static_cast<const T*>(args.bias);
  p.activation = args.activation;
}

}  // namespace bsrmm::cuda
