/* The cuSPARSE peer of the benchmark: cusparseSpMM with a BSR (CUSPARSE_SPMM_BSR_ALG1),
 * Blocked-ELL (CUSPARSE_SPMM_BLOCKED_ELL_ALG1) or CSR (the BSR matrix expanded,
 * CUSPARSE_SPMM_ALG_DEFAULT) matrix, on device arrays the caller owns; and, in a library of its
 * own (bench_cusparse_legacy_*: the legacy API may be absent from a toolkit), the legacy
 * cusparse<t>bsrmm (N > 1) / cusparse<t>bsrmv (N = 1), f32 and f64, square blocks, C column-major.
 * create() does everything that is not the product (descriptors, workspace, preprocessing), so
 * run() is exactly what the benchmark times. Every function returns 0 on success, or non-zero
 * with a message in err (which names the cuSPARSE/CUDA call and its error string). */
#ifndef BSRMM_BENCH_CUSPARSE_PEER_H
#define BSRMM_BENCH_CUSPARSE_PEER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { BENCH_FORMAT_BSR = 0, BENCH_FORMAT_BLOCKED_ELL = 1, BENCH_FORMAT_CSR = 2, BENCH_FORMAT_LEGACY_BSR = 3 };
enum { BENCH_DTYPE_F32 = 0, BENCH_DTYPE_F16 = 1, BENCH_DTYPE_BF16 = 2, BENCH_DTYPE_F64 = 3 };

typedef struct bench_cusparse_args {
  int32_t format;
  int32_t dtype;          /* of A's values, B and C; accumulation is f32 (f64 for F64) */
  int64_t rows;           /* A (as multiplied, no transpose): rows x cols */
  int64_t cols;
  int64_t n;              /* columns of B and C */
  int64_t block_height;   /* BSR block; Blocked-ELL uses block_height (square blocks only) */
  int64_t block_width;
  int64_t nnzb;           /* BSR: stored blocks; CSR: stored elements */
  int64_t ell_cols;       /* Blocked-ELL: columns of the ellValue array (slots * block) */
  const void* row_offsets; /* BSR: int32[rows / block_height + 1]; CSR: int32[rows + 1] */
  const void* col_indices; /* BSR, CSR: int32[nnzb]; Blocked-ELL: int32[block rows * slots], -1 = empty */
  const void* values;      /* BSR: nnzb row-major blocks; Blocked-ELL: rows x ell_cols row-major */
  const void* b;
  int64_t ldb;
  int32_t b_col_major;
  void* c;
  int64_t ldc;
  int32_t c_col_major;
  void* stream;            /* cudaStream_t the product is enqueued on */
} bench_cusparse_args;

int bench_cusparse_create(const bench_cusparse_args* args, void** handle, char* err, size_t err_len);
int bench_cusparse_run(void* handle, char* err, size_t err_len);
void bench_cusparse_destroy(void* handle);

/* Legacy bsrmm / bsrmv (format BENCH_FORMAT_LEGACY_BSR): create() runs the product once, so a
 * shape or dtype the legacy API rejects fails there, before the benchmark checks or times it. */
int bench_cusparse_legacy_create(const bench_cusparse_args* args, void** handle, char* err, size_t err_len);
int bench_cusparse_legacy_run(void* handle, char* err, size_t err_len);
void bench_cusparse_legacy_destroy(void* handle);

#ifdef __cplusplus
}
#endif

#endif
