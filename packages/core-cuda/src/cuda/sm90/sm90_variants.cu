// The sm90 (Hopper, sm_90a) kernel variants: the row tiles and the transposed tiles of each
// element type (row_tile_variants.cu, transposed_variants.cu). Compiled for every target in the
// build; outside sm_90a the kernels are empty, so each supports() also asks the runtime whether
// sm_90a machine code was actually loaded.
#include "variant_lists.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace bsrmm::cuda {

std::vector<Variant> sm90_variants() {
  std::vector<Variant> list;
  sm90::append_row_tile_variants<__half>(list);
  sm90::append_transposed_variants<__half>(list);
  sm90::append_row_tile_variants<__nv_bfloat16>(list);
  sm90::append_transposed_variants<__nv_bfloat16>(list);
  sm90::append_fp8_row_tile_variants(list);
  return list;
}

}  // namespace bsrmm::cuda
