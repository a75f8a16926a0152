// The problem key: what a tuned choice is filed under. Two multiplies with the same key are
// expected to have the same fastest variant, so the key keeps what changes the winner (arch,
// dtype, f32 mode, layouts, op(A), block shape, epilogue, alignment) exactly and buckets what
// varies continuously (M, K, N to powers of two; density and row skew to powers of two).
// It also names the candidate set (count and a hash of the labels): a cached winner is only
// trusted where exactly the same choices were eligible, so a build with other variants, an
// explicit thread count or an operand alignment that rules a variant out never reads a choice
// it cannot run.
#pragma once

#include "../matrix/bsr_matrix.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bsrmm::tuner {

struct ProblemShape {
  std::string arch;  // "cpu" or "sm_90"
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;  // A's; B and C share it unless A is fp8
  bsrmm_dtype b_dtype = BSRMM_DTYPE_F32;
  bsrmm_dtype c_dtype = BSRMM_DTYPE_F32;
  bsrmm_f32_mode f32_mode = BSRMM_F32_EXACT;
  bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR;
  bsrmm_layout c_layout = BSRMM_LAYOUT_ROW_MAJOR;
  bsrmm_op op_a = BSRMM_OP_NONE;
  int32_t block_height = 1;  // of op(A): what the kernels see
  int32_t block_width = 1;
  int64_t m = 0, k = 0, n = 0;
  int64_t block_rows = 0, block_cols = 0;  // of op(A)
  int64_t nnzb = 0;
  int64_t max_row_blocks = 0;  // most blocks in one block row of op(A)
  bool beta = false;           // beta != 0: C is read
  bool bias = false;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  bool aligned = false;  // B and C data and leading dimensions are multiples of 16 bytes
  int32_t sm_budget = 0;  // the context's SM budget (0: every SM); GPU keys only
};

// `op_a` is the matrix the kernels run on (the plan's A^T for a transposed multiply).
ProblemShape describe_problem(const std::string& arch, const matrix::BsrMatrix& op_a,
                              const bsrmm_dense& b, const bsrmm_dense& c,
                              const bsrmm_matmul_options& options, bsrmm_f32_mode f32_mode);

// Powers of two: the smallest 2^e >= value ("4096"), and round(log2(x)) as "2^-3".
int64_t size_bucket(int64_t value);
int density_exponent(const ProblemShape& shape);  // round(log2(nnzb / blocks)); -99 when empty
int skew_exponent(const ProblemShape& shape);     // round(log2(max / mean blocks per row))

// An fp8 multiply names all three dtypes: "dtype=float8_e4m3*float8_e5m2->bf16".
// "arch=sm_90|dtype=f16|op=N|B=row|C=row|block=64x64|m=8192|k=8192|n=4096|density=2^-3|
//  skew=2^0|epilogue=none|aligned=1|candidates=7:3f2a9c01" (one line); a GPU problem under an
// SM budget adds "|sms=116" before the candidates (the winner of 132 SMs' waves need not win on
// 116), and the keys without a budget stay as they were.
std::string problem_key(const ProblemShape& shape, const std::vector<std::string>& candidate_labels);

}  // namespace bsrmm::tuner
