// The rules an fp8 multiply adds to bsrmm_matmul's: A and B both fp8 (any pairing of E4M3 and
// E5M2), C in f32, f16 or bf16, op(A) = A, B's scales present and sized. Non-fp8 multiplies pass
// through with every operand in one dtype, as before.
#pragma once

#include "../matrix/bsr_matrix.hpp"
#include "../matrix/value_scales.hpp"

#include <bsrmm/bsrmm.h>

#include <optional>

namespace bsrmm::api {

// Checks the dtypes of A, B and C against each other and reads B's scales (options.b_scales):
// a value for an fp8 B, none otherwise. UNSUPPORTED for pairings bsrmm does not multiply,
// INVALID_ARGUMENT for missing or mis-sized scales and scales given for a B that is not fp8.
std::optional<matrix::ValueScales> check_dtypes(const matrix::BsrMatrix& a, const bsrmm_dense& b,
                                                const bsrmm_dense& c,
                                                const bsrmm_matmul_options& options, void* stream);

}  // namespace bsrmm::api
