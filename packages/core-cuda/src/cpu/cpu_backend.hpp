// The CPU backend: C = alpha * A * B + beta * C (+ bias, activation) on host memory, with op(A)
// already applied by the caller (a transposed multiply passes the plan's A^T). Operands are
// validated before they arrive here. Three variants:
//   cpu_reference_f64acc  plain loops, f64 accumulation for every dtype: the slow, obvious one.
//   cpu_blocked_simd      the fast path: the rows of B under A's used block columns packed in
//                         column strips of the compute type, a register-blocked SIMD
//                         micro-kernel (AVX2+FMA chosen at run time),
//                         block rows split across the pool by work. Accumulates in f32 for
//                         f32/f16/bf16 and in f64 for f64.
//   cpu_dense_blas        one BLAS GEMM (loaded at run time, blas_library.hpp) over the plan's
//                         dense copy of op(A), then bsrmm's epilogue; where A is dense enough.
#pragma once

#include "../device/buffer.hpp"
#include "../common/thread_pool.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bsrmm::cpu {

namespace blas {
class Library;
}
struct KernelSet;

struct BsrView {
  int64_t block_row_count;
  int64_t block_col_count;
  int32_t block_height;
  int32_t block_width;
  int64_t nnzb;
  const int32_t* row_ptr;      // block_row_count + 1
  const int32_t* col_idx;      // nnzb
  const void* values;          // nnzb blocks, row-major, in dtype
  const float* values_f32;     // the same values as f32 (f32/f16/bf16; blocked variant only)
  const int64_t* work_prefix;  // block_row_count + 1 cumulative work (plan), for balancing
  bsrmm_dtype dtype;
  // Blocked variant only (plan): the block columns in use, ascending, and each block's index
  // into them.
  const int32_t* used_columns = nullptr;
  int64_t used_column_count = 0;
  const int32_t* packed_col_idx = nullptr;  // nnzb
};

struct MatmulArgs {
  BsrView a;
  bsrmm_dense b;  // a.block_col_count * block_width rows
  bsrmm_dense c;  // a.block_row_count * block_height rows, b.cols columns
  double alpha;
  double beta;       // 0: C is only written
  const void* bias;  // C.rows entries in C's dtype, or null
  bsrmm_activation activation;
};

constexpr const char* reference_variant = "cpu_reference_f64acc";
constexpr const char* blocked_variant = "cpu_blocked_simd";
constexpr const char* dense_variant = "cpu_dense_blas";

std::vector<std::string> variant_names();

void matmul_reference(const MatmulArgs& args, detail::ThreadPool& pool);
// `workspace` (host memory) is grown as needed and kept for the next call.
void matmul_blocked(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace);
// With the given instruction set's kernels (blocked_rows.hpp; tests run each).
void matmul_blocked(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
                    const KernelSet& kernels);

// Where cpu_dense_blas stands for a product (dense_heuristic.cpp): not a candidate (too sparse,
// or it cannot run: `refusal` says why), a candidate the tuner times, or the untuned default.
enum class DensePlacement { none, candidate, first };
struct DenseDecision {
  DensePlacement placement;
  std::string refusal;  // why it cannot run at all ("" when it can)
};
// `blas` null: no BLAS was found (the variant declines with `missing`, which says why).
DenseDecision dense_decision(const MatmulArgs& args, const blas::Library* blas,
                             const std::string& missing);
// The dense copy's element: f64 for f64 matrices, f32 for the others.
bsrmm_dtype dense_copy_dtype(bsrmm_dtype dtype);
// `dense_a` is op(A) as a row-major C.rows x B.rows array of dense_copy_dtype (the plan's).
void matmul_dense(const MatmulArgs& args, const void* dense_a, const blas::Library& blas,
                  detail::ThreadPool& pool, detail::Buffer& workspace);

}  // namespace bsrmm::cpu
