#include "fp8_operands.hpp"

#include "../common/dtype.hpp"
#include "../common/error.hpp"

namespace bsrmm::api {

namespace {

using detail::fail;
using detail::name;

void check_fp8_pairing(const matrix::BsrMatrix& a, const bsrmm_dense& b, const bsrmm_dense& c,
                       const bsrmm_matmul_options& options) {
  if (!detail::is_fp8(a.dtype()) || !detail::is_fp8(b.dtype)) {
    fail(BSRMM_STATUS_UNSUPPORTED, "A is ", name(a.dtype()), " and B is ", name(b.dtype),
         ": fp8 multiplies need both A and B in fp8 (float8_e4m3 or float8_e5m2)");
  }
  if (c.dtype != BSRMM_DTYPE_F32 && c.dtype != BSRMM_DTYPE_F16 && c.dtype != BSRMM_DTYPE_BF16) {
    fail(BSRMM_STATUS_UNSUPPORTED, "C is ", name(c.dtype), " but an fp8 multiply (A ",
         name(a.dtype()), ", B ", name(b.dtype), ") writes C in f32, f16 or bf16");
  }
}

}  // namespace

std::optional<matrix::ValueScales> check_dtypes(const matrix::BsrMatrix& a, const bsrmm_dense& b,
                                                const bsrmm_dense& c,
                                                const bsrmm_matmul_options& options, void* stream) {
  const bool fp8 = detail::is_fp8(a.dtype()) || detail::is_fp8(b.dtype);
  if (!fp8) {
    if (b.dtype != a.dtype() || c.dtype != a.dtype()) {
      fail(BSRMM_STATUS_UNSUPPORTED, "mixed dtypes are not supported: A is ", name(a.dtype()),
           ", B is ", name(b.dtype), ", C is ", name(c.dtype));
    }
    if (options.b_scales != nullptr) {
      detail::invalid_argument("options->b_scales is set but B is ", name(b.dtype),
                               ": only fp8 operands take scales");
    }
    return std::nullopt;
  }
  check_fp8_pairing(a, b, c, options);
  if (options.b_scales == nullptr) {
    detail::invalid_argument("options->b_scales is NULL but B is ", name(b.dtype),
                             ": fp8 B needs its scales (PER_TENSOR or PER_COLUMN)");
  }
  matrix::ValueScales scales =
      matrix::read_dense_scales(*options.b_scales, b.cols, stream, "options->b_scales");
  const bsrmm_device where = options.b_scales->device;
  if (where.type == BSRMM_DEVICE_CUDA && !detail::same_device(where, b.device)) {
    detail::invalid_argument("options->b_scales->device is ", detail::describe(where), " but B is on ",
                             detail::describe(b.device), ": device scales must be on B's device");
  }
  return scales;
}

}  // namespace bsrmm::api
