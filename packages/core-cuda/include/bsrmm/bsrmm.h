/* bsrmm: block-sparse (BSR) x dense matrix multiply.
 *
 *   C = alpha * op(A) * B + beta * C      A: BSR, B and C: dense
 *
 * This is the stable C ABI: the only header a binding includes. Every call returns a
 * bsrmm_status; on failure bsrmm_last_error() returns a thread-local message that names the
 * argument and the rule it broke. Handles are opaque. Nothing here synchronises a device behind
 * the caller's back: GPU work is enqueued on the context's stream.
 */
#ifndef BSRMM_H
#define BSRMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define BSRMM_API __declspec(dllexport)
#else
#define BSRMM_API __attribute__((visibility("default")))
#endif

#define BSRMM_VERSION_MAJOR 0
#define BSRMM_VERSION_MINOR 1
#define BSRMM_VERSION_PATCH 0

/* C callers may store any int in an enum field, and bsrmm checks every one. In C++ an enum
 * without a fixed underlying type may not hold values outside its range (undefined behaviour,
 * which compilers may assume away), so C++ sees each enum with the underlying type int: same
 * size and calling convention as the C enum, and every int a valid value to reject. */
#ifdef __cplusplus
#define BSRMM_ENUM_BASE : int
#else
#define BSRMM_ENUM_BASE
#endif

/* Stable numeric codes: every binding maps them to the same error code name. */
typedef enum bsrmm_status BSRMM_ENUM_BASE {
  BSRMM_STATUS_SUCCESS = 0,
  BSRMM_STATUS_INVALID_ARGUMENT = 1, /* a value breaks a documented rule (shape, index, stride) */
  BSRMM_STATUS_UNSUPPORTED = 2,      /* valid, but this backend/dtype/shape is not provided */
  BSRMM_STATUS_OUT_OF_MEMORY = 3,    /* host or device allocation failed */
  BSRMM_STATUS_NO_DEVICE = 4,        /* CUDA not compiled in, no driver, or no such device */
  BSRMM_STATUS_CUDA_ERROR = 5,       /* a CUDA call failed; the message holds CUDA's string */
  BSRMM_STATUS_INTERNAL = 6,         /* a bug in bsrmm: please report it */
  BSRMM_STATUS_IO_ERROR = 7          /* tuner cache could not be read or written */
} bsrmm_status;

typedef enum bsrmm_dtype BSRMM_ENUM_BASE {
  BSRMM_DTYPE_F32 = 0,
  BSRMM_DTYPE_F16 = 1,
  BSRMM_DTYPE_BF16 = 2,
  BSRMM_DTYPE_F64 = 3, /* CPU backend and generic CUDA kernel only */
  /* 8-bit floats as OCP (and torch.float8_e4m3fn / float8_e5m2, ml_dtypes) store them, one byte
   * each. E4M3: 4 exponent bits (bias 7), 3 mantissa bits, no infinities, largest 448, NaN
   * 0x7f / 0xff. E5M2: 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like (inf, NaN), largest
   * 57344. Only for A's values (bsrmm_matrix_create_scaled) and B of bsrmm_matmul, both fp8,
   * each with fp32 scales (bsrmm_scales); products accumulate in f32 and C is f32, f16 or bf16.
   * The CPU multiplies them on its fast variants (A's values dequantised to f32 once per
   * matrix, B widened to f32 per call) or, forced, on cpu_reference_f64acc; CUDA on Hopper with fp8 wgmma where
   * B is column-major, blocks 64 or 128 high and wide and C f16 / bf16 (the sm90 fp8 row tiles),
   * elsewhere on its generic SIMT kernel (converting on load: correct, not fast). */
  BSRMM_DTYPE_FLOAT8_E4M3 = 4,
  BSRMM_DTYPE_FLOAT8_E5M2 = 5
} bsrmm_dtype;

typedef enum bsrmm_index_type BSRMM_ENUM_BASE {
  BSRMM_INDEX_I32 = 0,
  BSRMM_INDEX_I64 = 1
} bsrmm_index_type;

typedef enum bsrmm_layout BSRMM_ENUM_BASE {
  BSRMM_LAYOUT_ROW_MAJOR = 0,
  BSRMM_LAYOUT_COL_MAJOR = 1
} bsrmm_layout;

typedef enum bsrmm_op BSRMM_ENUM_BASE { BSRMM_OP_NONE = 0, BSRMM_OP_TRANSPOSE = 1 } bsrmm_op;

typedef enum bsrmm_device_type BSRMM_ENUM_BASE {
  BSRMM_DEVICE_CPU = 0,
  BSRMM_DEVICE_CUDA = 1
} bsrmm_device_type;

typedef struct bsrmm_device {
  bsrmm_device_type type;
  int32_t ordinal; /* CUDA device ordinal; 0 for the CPU */
} bsrmm_device;

/* How f32 operands use the tensor cores. EXACT keeps full f32 products; TF32 opts in to the
 * faster, less precise tensor-core mode (relative error ~1e-3). Ignored for f16/bf16. */
typedef enum bsrmm_f32_mode BSRMM_ENUM_BASE {
  BSRMM_F32_EXACT = 0,
  BSRMM_F32_TF32 = 1
} bsrmm_f32_mode;

typedef enum bsrmm_activation BSRMM_ENUM_BASE {
  BSRMM_ACTIVATION_NONE = 0,
  BSRMM_ACTIVATION_RELU = 1,
  BSRMM_ACTIVATION_GELU = 2, /* tanh approximation */
  BSRMM_ACTIVATION_SILU = 3
} bsrmm_activation;

/* Tuning modes: OFF uses built-in heuristics only; AUTO uses a cached choice, else the
 * heuristics until a problem's third call in the process, which measures once and caches the
 * choice; FORCE always measures and overwrites the cache entry. */
typedef enum bsrmm_tuning_mode BSRMM_ENUM_BASE {
  BSRMM_TUNING_OFF = 0,
  BSRMM_TUNING_AUTO = 1,
  BSRMM_TUNING_FORCE = 2
} bsrmm_tuning_mode;

/* A dense operand, used in place (never copied when usable as it is). Element (i, j) lives at
 * data[i * ld + j] for row-major and data[j * ld + i] for column-major. */
typedef struct bsrmm_dense {
  void* data;
  int64_t rows;
  int64_t cols;
  int64_t ld; /* leading dimension in elements: >= cols (row-major) or >= rows (col-major) */
  bsrmm_layout layout;
  bsrmm_dtype dtype;
  bsrmm_device device;
} bsrmm_dense;

/* A BSR matrix as three arrays (the scipy / torch sparse_bsr convention):
 *   row_ptr[block_row_count + 1], col_idx[nnzb], values[nnzb * block_height * block_width]
 * with each block stored row-major. block_row_count = rows / block_height. */
typedef struct bsrmm_bsr_desc {
  int64_t rows;
  int64_t cols;
  int32_t block_height;
  int32_t block_width;
  int64_t nnzb;
  const void* row_ptr;
  const void* col_idx;
  bsrmm_index_type index_type;
  const void* values;
  bsrmm_dtype dtype;
  bsrmm_device device; /* where the three arrays live */
} bsrmm_bsr_desc;

/* Flags for matrix construction. */
#define BSRMM_CREATE_DEFAULT 0u
/* Sort column indices (and their blocks) within each row instead of rejecting unsorted input. */
#define BSRMM_CREATE_SORT_INDICES 1u
/* Device arrays only: use values in place instead of copying them (the caller keeps them alive
 * and unchanged for the matrix's lifetime). Indices are always copied (they are validated). */
#define BSRMM_CREATE_BORROW_VALUES 2u

typedef struct bsrmm_matrix_info {
  int64_t rows;
  int64_t cols;
  int32_t block_height;
  int32_t block_width;
  int64_t nnzb;
  bsrmm_dtype dtype;
  bsrmm_device device;
} bsrmm_matrix_info;

/* Which elements share one fp32 scale of an fp8 operand: the value an element stands for is
 * its fp8 value times its scale. */
typedef enum bsrmm_scale_kind BSRMM_ENUM_BASE {
  BSRMM_SCALE_PER_TENSOR = 0,    /* A or B: 1 scale */
  BSRMM_SCALE_PER_BLOCK = 1,     /* A: nnzb scales, one per stored block, in the desc's order */
  BSRMM_SCALE_PER_BLOCK_ROW = 2, /* A: rows / block_height scales, one per block row */
  BSRMM_SCALE_PER_COLUMN = 3     /* B: B.cols scales, one per column */
} bsrmm_scale_kind;

/* The scales of an fp8 operand: `count` finite fp32 values (count must be the number `kind`
 * implies: it is checked, so a mis-sized array is an error, not a read past its end), on
 * `device`. Initialise with bsrmm_scales_default(); struct_size lets later versions append
 * fields (block-wise scales of B, say). */
typedef struct bsrmm_scales {
  uint32_t struct_size;
  bsrmm_scale_kind kind;
  const float* data;
  int64_t count;
  bsrmm_device device;
} bsrmm_scales;

/* Everything about one multiply besides the operands. Initialise with
 * bsrmm_matmul_options_default(); struct_size lets later versions append fields. */
typedef struct bsrmm_matmul_options {
  uint32_t struct_size;
  bsrmm_op op_a;
  double alpha;
  double beta;
  /* Optional per-row bias of C (length C.rows, C's dtype and device; may be NULL), added after
   * alpha*op(A)*B + beta*C and before the activation. */
  const void* bias;
  bsrmm_activation activation;
  /* Appended for fp8 (a struct_size that ends before it, as older callers pass, still works):
   * B's scales, required when B is fp8 (PER_TENSOR or PER_COLUMN, in host memory or on B's
   * device; PER_COLUMN on a CUDA context must be on B's device, where the kernel reads them in
   * place, so keep them alive and unchanged until the stream's work is done, as B; like B's
   * values they are not checked for NaN / Inf, which reach only their own columns: reading
   * them on the host would wait for the stream on every call), NULL otherwise. */
  const bsrmm_scales* b_scales;
} bsrmm_matmul_options;

typedef struct bsrmm_context_s* bsrmm_context_t;
typedef struct bsrmm_matrix_s* bsrmm_matrix_t;

/* ---- library ---- */
BSRMM_API const char* bsrmm_version(void);
BSRMM_API const char* bsrmm_status_name(bsrmm_status status); /* "BSRMM_STATUS_INVALID_ARGUMENT" */
/* The message of the last failed call on this thread ("" if none). Valid until the next call. */
BSRMM_API const char* bsrmm_last_error(void);
/* 1 if the library was built with CUDA kernels. */
BSRMM_API int bsrmm_cuda_compiled(void);
/* Number of usable CUDA devices; NO_DEVICE (with the reason in the message) when there are none. */
BSRMM_API bsrmm_status bsrmm_cuda_device_count(int32_t* count);

/* ---- context: a device, a stream, a tuner, a workspace ---- */
BSRMM_API bsrmm_status bsrmm_context_create(bsrmm_device device, bsrmm_context_t* out);
BSRMM_API void bsrmm_context_destroy(bsrmm_context_t ctx);
BSRMM_API bsrmm_status bsrmm_context_get_device(bsrmm_context_t ctx, bsrmm_device* out);
/* A cudaStream_t, or NULL for the legacy default stream. CUDA contexts only. */
BSRMM_API bsrmm_status bsrmm_context_set_stream(bsrmm_context_t ctx, void* stream);
BSRMM_API bsrmm_status bsrmm_context_get_stream(bsrmm_context_t ctx, void** stream);
/* CPU worker threads; 0 = the default (read when the context is created): BSRMM_NUM_THREADS,
 * else OMP_NUM_THREADS (its first count), when a positive integer, else one per CPU in the
 * process's affinity mask. A pool whose threads the system refuses is OUT_OF_MEMORY. */
BSRMM_API bsrmm_status bsrmm_context_set_num_threads(bsrmm_context_t ctx, int32_t threads);
/* The CPU worker threads the context's multiplies use: its set count, or the default that 0
 * stands for (read when the context was created). */
BSRMM_API bsrmm_status bsrmm_context_get_num_threads(bsrmm_context_t ctx, int32_t* out);
BSRMM_API bsrmm_status bsrmm_context_set_f32_mode(bsrmm_context_t ctx, bsrmm_f32_mode mode);
BSRMM_API bsrmm_status bsrmm_context_set_tuning_mode(bsrmm_context_t ctx, bsrmm_tuning_mode mode);
/* Force a kernel variant by name (see bsrmm_variant_name), or NULL/"" to let the tuner choose.
 * A matmul variant steers bsrmm_matmul, an SDDMM variant bsrmm_sddmm (bsrmm_variant_get_kind);
 * the other call then fails INVALID_ARGUMENT until the variant is cleared or changed. */
BSRMM_API bsrmm_status bsrmm_context_set_variant(bsrmm_context_t ctx, const char* name);
/* Blocks the host until the context's queued work is done (CPU contexts: no-op). */
BSRMM_API bsrmm_status bsrmm_context_synchronize(bsrmm_context_t ctx);
/* The most SMs the persistent kernels of this context's multiplies and SDDMMs may occupy: they
 * launch at most that many CTAs (cluster kernels, whole clusters within it and at least one;
 * kernels resident several to an SM, that many SMs' worth), and a dense fallback asks cuBLASLt
 * for that SM count.
 * Kernels of one CTA per tile are not capped: their CTAs retire, and the hardware hands the SMs
 * to other work between them. For running beside other work on the GPU, e.g. NCCL's reductions,
 * which need SMs of their own while a persistent multiply holds every one. 0 (the default) =
 * every SM; more than the device has = every SM; negative = INVALID_ARGUMENT. The tuner files
 * its choices per budget. CPU contexts accept it and ignore it. */
BSRMM_API bsrmm_status bsrmm_context_set_sm_budget(bsrmm_context_t ctx, int32_t count);
BSRMM_API bsrmm_status bsrmm_context_get_sm_budget(bsrmm_context_t ctx, int32_t* out);

/* ---- matrices ---- */
/* Validates and copies a BSR matrix onto the context's device. */
BSRMM_API bsrmm_status bsrmm_matrix_create(bsrmm_context_t ctx, const bsrmm_bsr_desc* desc,
                                           uint32_t flags, bsrmm_matrix_t* out);
BSRMM_API bsrmm_scales bsrmm_scales_default(void); /* PER_TENSOR, no data, count 0, CPU */
/* An fp8 matrix (desc->dtype FLOAT8_E4M3 or FLOAT8_E5M2): as bsrmm_matrix_create, with its
 * scales (PER_TENSOR, PER_BLOCK or PER_BLOCK_ROW), copied with the values. A stored block
 * that BSRMM_CREATE_SORT_INDICES moves keeps its scale. Other dtypes take no scales (use
 * bsrmm_matrix_create); bsrmm_matrix_create refuses fp8. An fp8 matrix multiplies
 * (op(A) = A only, for now), exports and copies; to_dense, with_values and the SDDMM refuse it
 * (UNSUPPORTED). */
BSRMM_API bsrmm_status bsrmm_matrix_create_scaled(bsrmm_context_t ctx, const bsrmm_bsr_desc* desc,
                                                  const bsrmm_scales* scales, uint32_t flags,
                                                  bsrmm_matrix_t* out);
/* An fp8 matrix's scales: *kind and *count always, the count floats into host `data` unless it
 * is NULL (to ask for the count first). INVALID_ARGUMENT for a matrix of another dtype. */
BSRMM_API bsrmm_status bsrmm_matrix_export_scales(bsrmm_matrix_t matrix, bsrmm_scale_kind* kind,
                                                  int64_t* count, float* data);
/* Keeps every block_height x block_width block of `dense` that holds any non-zero (NaN counts). */
BSRMM_API bsrmm_status bsrmm_matrix_from_dense(bsrmm_context_t ctx, const bsrmm_dense* dense,
                                               int32_t block_height, int32_t block_width,
                                               bsrmm_matrix_t* out);
BSRMM_API void bsrmm_matrix_destroy(bsrmm_matrix_t matrix);
BSRMM_API bsrmm_status bsrmm_matrix_get_info(bsrmm_matrix_t matrix, bsrmm_matrix_info* out);
/* Copies the structure and values out to host memory. Any pointer may be NULL to skip that
 * array; row_ptr and col_idx are written as `index_type`, values in the matrix's dtype. */
BSRMM_API bsrmm_status bsrmm_matrix_export(bsrmm_matrix_t matrix, bsrmm_index_type index_type,
                                           void* row_ptr, void* col_idx, void* values);
/* Writes the matrix into a dense operand of its shape and dtype (on the context's device). */
BSRMM_API bsrmm_status bsrmm_matrix_to_dense(bsrmm_context_t ctx, bsrmm_matrix_t matrix,
                                             bsrmm_dense* out);
/* A copy of the matrix on the context's device. */
BSRMM_API bsrmm_status bsrmm_matrix_copy_to(bsrmm_context_t ctx, bsrmm_matrix_t matrix,
                                            bsrmm_matrix_t* out);
/* A matrix with the structure, dtype and device of `like` and other values: `values` holds
 * nnzb * block_height * block_width elements of like's dtype, blocks in like's order (as
 * bsrmm_matrix_export writes them), on `values_device`. Nothing about the structure is
 * validated, uploaded or scheduled again: the new matrix shares that with `like` (which may be
 * destroyed first), so this costs one allocation and a copy of the values, or neither with
 * BSRMM_CREATE_BORROW_VALUES (values where like is, on the host or its CUDA device, kept alive
 * and unchanged by the caller while the new matrix lives). For weights that change every
 * training step. `like`
 * must be on the context's device; flags other than BSRMM_CREATE_BORROW_VALUES are rejected. */
BSRMM_API bsrmm_status bsrmm_matrix_with_values(bsrmm_context_t ctx, bsrmm_matrix_t like,
                                                const void* values, bsrmm_device values_device,
                                                uint32_t flags, bsrmm_matrix_t* out);
/* A^T as a matrix of its own on the context's device (A's device): block (r, c) of A becomes
 * block (c, r), transposed; fp8 scales follow their blocks (per block or per tensor). Built on
 * the host's copy of the structure; the values are moved on A's device. */
BSRMM_API bsrmm_status bsrmm_matrix_transpose(bsrmm_context_t ctx, bsrmm_matrix_t a,
                                              bsrmm_matrix_t* out);
/* A^T's values, as bsrmm_matrix_transpose would store them (its blocks in its BSR order, each
 * transposed), written into `out`: nnzb * block_height * block_width elements of A's dtype on A's
 * device, not overlapping A's values. With bsrmm_matrix_with_values on a matrix from
 * bsrmm_matrix_transpose, a training step's W^T from its new W without building A^T again: the
 * transposition of the structure is planned once for every matrix sharing it, so after the
 * first call this only enqueues a copy on the context's stream (no allocation, no wait: a CUDA
 * graph can hold it). UNSUPPORTED for fp8 (new values need new scales, as in with_values). */
BSRMM_API bsrmm_status bsrmm_matrix_transpose_values(bsrmm_context_t ctx, bsrmm_matrix_t a,
                                                     void* out);

/* ---- multiply ---- */
BSRMM_API bsrmm_matmul_options bsrmm_matmul_options_default(void);
/* C = alpha * op(A) * B + beta * C (+ bias, activation). A, B and C must be on the context's
 * device; options may be NULL for the defaults (op NONE, alpha 1, beta 0). With beta == 0,
 * C is only written (NaN in C does not propagate). */
BSRMM_API bsrmm_status bsrmm_matmul(bsrmm_context_t ctx, bsrmm_matrix_t a, const bsrmm_dense* b,
                                    bsrmm_dense* c, const bsrmm_matmul_options* options);

/* ---- sampled dense-dense multiply (SDDMM) ---- */
/* Everything about one SDDMM besides the operands. Initialise with
 * bsrmm_sddmm_options_default(); struct_size lets later versions append fields. */
typedef struct bsrmm_sddmm_options {
  uint32_t struct_size; /* sizeof; later versions append fields */
  double alpha;         /* default 1 */
  double beta;          /* default 0: `values` is only written (NaN there does not propagate) */
} bsrmm_sddmm_options;
BSRMM_API bsrmm_sddmm_options bsrmm_sddmm_options_default(void);
/* Sampled dense-dense multiply: for every stored block b of `pattern` (M x K, blocks bh x bw),
 *   values[b] = alpha * (X * Y)[rows and columns of block b] + beta * values[b]
 * X: M x T and Y: T x K dense operands (either layout, any ld) of pattern's dtype, on the
 * context's device; `values`: a dense operand of nnzb rows x (bh * bw) columns, row-major,
 * pattern's dtype and device, blocks in pattern's stored order (as bsrmm_matrix_export
 * writes them), each block row-major. Accumulation in f32 (f64 for f64). Pattern's own
 * values are not read. T may be 0 (then values = beta * values). options may be NULL.
 * `values` must not overlap X or Y. The weight gradient of Y = W X is
 * sddmm(W, dY, X^T) with X^T a column-major view of X; bsrmm_matrix_with_values(ctx,
 * pattern, values.data, ...) then makes a matrix of those values. */
BSRMM_API bsrmm_status bsrmm_sddmm(bsrmm_context_t ctx, bsrmm_matrix_t pattern,
                                   const bsrmm_dense* x, const bsrmm_dense* y,
                                   bsrmm_dense* values, const bsrmm_sddmm_options* options);

/* ---- kernel variants ---- */
/* Variants compiled into this library (CPU ones included), named CUTLASS-style, e.g.
 * "cpu_blocked_simd", "sm80_f16_b64_mma_stages3" or "sm90_sddmm_bf16_wgmma_b128x128_yc": the
 * matmul variants first, then the SDDMM ones (bsrmm_variant_get_kind tells them apart).
 * bsrmm_context_set_variant forces either kind; bsrmm_matmul then runs a forced matmul variant
 * and bsrmm_sddmm a forced SDDMM variant (UNSUPPORTED, output untouched, when it cannot take
 * the operands), and each refuses a forced variant of the other kind (INVALID_ARGUMENT). */
typedef enum bsrmm_variant_kind BSRMM_ENUM_BASE {
  BSRMM_VARIANT_MATMUL = 0, /* runs bsrmm_matmul (and bsrmm_tune) */
  BSRMM_VARIANT_SDDMM = 1   /* runs bsrmm_sddmm */
} bsrmm_variant_kind;
BSRMM_API int32_t bsrmm_variant_count(void);
BSRMM_API const char* bsrmm_variant_name(int32_t index);
/* The operation variant `index` runs; INVALID_ARGUMENT for an index outside the list. */
BSRMM_API bsrmm_status bsrmm_variant_get_kind(int32_t index, bsrmm_variant_kind* out);
/* The variant the last successful bsrmm_matmul or bsrmm_sddmm on this context ran ("" before
 * any), e.g. "cpu_sddmm_blocked" or "sm80_sddmm_bf16_mma16816_t128x128_yc". */
BSRMM_API const char* bsrmm_context_last_variant(bsrmm_context_t ctx);

/* ---- tuner ----
 * A tuned choice is filed under a problem key (arch, dtype, f32 mode, op(A), layouts of B and
 * C, block shape, M/K/N rounded up to powers of two, density and row-skew buckets, epilogue,
 * 16-byte alignment of B and C, the set of eligible variants) and the device, in one JSON file
 * shared by every binding and process: $BSRMM_TUNING_CACHE (a file path), else
 * $XDG_CACHE_HOME/bsrmm/tuning.json, else ~/.cache/bsrmm/tuning.json.
 * In AUTO mode a multiply whose key has no entry runs the heuristics' choice, until the third
 * such multiply of the key in the process: that one measures every eligible variant on its own
 * operands (waiting for the context's stream), stores the fastest and runs it (a script that
 * multiplies a problem once or twice never pays for tuning); later multiplies, in any process,
 * take the stored choice. A multiply that cannot get memory to measure runs untuned. FORCE
 * measures every time; OFF never looks. A forced variant (bsrmm_context_set_variant) bypasses
 * the tuner. Measuring runs write a scratch copy of C, so C is written once, by the final run.
 * A cache file that cannot be read, is corrupt or has another format version is ignored (and
 * replaced by the next store); one that cannot be written, or a path that is not a regular
 * file (a FIFO, a device: never waited on or replaced), leaves the choices in memory for the
 * process. Neither fails a multiply: each problem is printed to stderr once and kept for
 * bsrmm_tuner_cache_warning. */

/* Measures every eligible variant on these operands now, whatever the context's tuning mode and
 * forced variant, stores the fastest and runs it exactly as bsrmm_matmul would (same arguments,
 * same result in C). The choice is then bsrmm_context_last_variant(ctx). */
BSRMM_API bsrmm_status bsrmm_tune(bsrmm_context_t ctx, bsrmm_matrix_t a, const bsrmm_dense* b,
                                  bsrmm_dense* c, const bsrmm_matmul_options* options);

/* The functions below that return text write it NUL-terminated into buf (len bytes) and the
 * bytes it needs, NUL included, into *needed (which may be NULL). buf may be NULL with len 0 to
 * ask for the size only; a buf that is too small is INVALID_ARGUMENT and receives nothing. */

/* The cache file in use ("" when there is no location: choices then live in memory only). */
BSRMM_API bsrmm_status bsrmm_tuner_cache_path(char* buf, size_t len, size_t* needed);
/* Every entry of the cache as a JSON array of objects with the members key, device,
 * library_version, variant, threads (CPU worker threads; 0 for GPU variants), time_ms (the
 * winner's median), candidates (how many were measured) and measured_at (UTC, ISO 8601). */
BSRMM_API bsrmm_status bsrmm_tuner_cache_entries(char* buf, size_t len, size_t* needed);
/* The last problem met with the cache file in this process ("" if none). */
BSRMM_API bsrmm_status bsrmm_tuner_cache_warning(char* buf, size_t len, size_t* needed);
/* Forgets every entry, in memory and in the file (IO_ERROR when the file cannot be rewritten;
 * the process forgets them all the same). */
BSRMM_API bsrmm_status bsrmm_tuner_cache_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* BSRMM_H */
