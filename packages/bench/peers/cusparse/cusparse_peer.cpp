// cusparseSpMM on caller-owned device arrays; see cusparse_peer.h.
#include "cusparse_peer.h"

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw Failure(std::string(call) + ": " + cusparseGetErrorString(status) + " (" +
                  std::to_string(static_cast<int>(status)) + ")");
  }
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw Failure(std::string(call) + ": " + cudaGetErrorString(status));
  }
}

cudaDataType value_type(int32_t dtype) {
  switch (dtype) {
    case BENCH_DTYPE_F32: return CUDA_R_32F;
    case BENCH_DTYPE_F16: return CUDA_R_16F;
    case BENCH_DTYPE_BF16: return CUDA_R_16BF;
    case BENCH_DTYPE_F64: return CUDA_R_64F;
  }
  throw Failure("dtype must be 0 (f32), 1 (f16), 2 (bf16) or 3 (f64), got " + std::to_string(dtype));
}

// One prepared product. The destructor releases whatever create() got before a failure.
struct Peer {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnMatDescr_t b = nullptr;
  cusparseDnMatDescr_t c = nullptr;
  void* workspace = nullptr;
  cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT;
  cudaDataType compute = CUDA_R_32F;
  // alpha = 1 and beta = 0 in the compute type (host pointers, the default pointer mode).
  float alpha_f = 1.0f, beta_f = 0.0f;
  double alpha_d = 1.0, beta_d = 0.0;

  const void* alpha() const { return compute == CUDA_R_64F ? static_cast<const void*>(&alpha_d) : &alpha_f; }
  const void* beta() const { return compute == CUDA_R_64F ? static_cast<const void*>(&beta_d) : &beta_f; }

  ~Peer() {
    if (workspace) cudaFree(workspace);
    if (c) cusparseDestroyDnMat(c);
    if (b) cusparseDestroyDnMat(b);
    if (a) cusparseDestroySpMat(a);
    if (handle) cusparseDestroy(handle);
  }
};

void write_error(const char* message, char* err, size_t err_len) {
  if (err && err_len) std::snprintf(err, err_len, "%s", message);
}

std::unique_ptr<Peer> create(const bench_cusparse_args& x) {
  auto peer = std::make_unique<Peer>();
  const cudaDataType type = value_type(x.dtype);
  peer->compute = x.dtype == BENCH_DTYPE_F64 ? CUDA_R_64F : CUDA_R_32F;
  check(cusparseCreate(&peer->handle), "cusparseCreate");
  check(cusparseSetStream(peer->handle, static_cast<cudaStream_t>(x.stream)), "cusparseSetStream");

  if (x.format == BENCH_FORMAT_BSR) {
    peer->alg = CUSPARSE_SPMM_BSR_ALG1;
    check(cusparseCreateBsr(&peer->a, x.rows / x.block_height, x.cols / x.block_width, x.nnzb,
                            x.block_height, x.block_width, const_cast<void*>(x.row_offsets),
                            const_cast<void*>(x.col_indices), const_cast<void*>(x.values),
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type,
                            CUSPARSE_ORDER_ROW),
          "cusparseCreateBsr");
  } else if (x.format == BENCH_FORMAT_BLOCKED_ELL) {
    if (x.block_height != x.block_width) throw Failure("Blocked-ELL needs square blocks");
    peer->alg = CUSPARSE_SPMM_BLOCKED_ELL_ALG1;
    check(cusparseCreateBlockedEll(&peer->a, x.rows, x.cols, x.block_height, x.ell_cols,
                                   const_cast<void*>(x.col_indices), const_cast<void*>(x.values),
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
          "cusparseCreateBlockedEll");
  } else if (x.format == BENCH_FORMAT_CSR) {
    peer->alg = CUSPARSE_SPMM_ALG_DEFAULT;
    check(cusparseCreateCsr(&peer->a, x.rows, x.cols, x.nnzb, const_cast<void*>(x.row_offsets),
                            const_cast<void*>(x.col_indices), const_cast<void*>(x.values),
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
          "cusparseCreateCsr");
  } else {
    throw Failure("format must be 0 (BSR), 1 (Blocked-ELL) or 2 (CSR), got " + std::to_string(x.format));
  }

  check(cusparseCreateDnMat(&peer->b, x.cols, x.n, x.ldb, const_cast<void*>(x.b), type,
                            x.b_col_major ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW),
        "cusparseCreateDnMat(B)");
  check(cusparseCreateDnMat(&peer->c, x.rows, x.n, x.ldc, x.c, type,
                            x.c_col_major ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW),
        "cusparseCreateDnMat(C)");

  size_t bytes = 0;
  check(cusparseSpMM_bufferSize(peer->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, peer->alpha(), peer->a, peer->b,
                                peer->beta(), peer->c, peer->compute, peer->alg, &bytes),
        "cusparseSpMM_bufferSize");
  if (bytes > 0) check(cudaMalloc(&peer->workspace, bytes), "cudaMalloc(workspace)");
  // Optional for these algorithms; done here so any one-time analysis stays out of the timing.
  check(cusparseSpMM_preprocess(peer->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, peer->alpha(), peer->a, peer->b,
                                peer->beta(), peer->c, peer->compute, peer->alg, peer->workspace),
        "cusparseSpMM_preprocess");
  return peer;
}

}  // namespace

extern "C" int bench_cusparse_create(const bench_cusparse_args* args, void** handle, char* err,
                                     size_t err_len) {
  if (!args || !handle) {
    write_error("args and handle must not be NULL", err, err_len);
    return 1;
  }
  *handle = nullptr;
  try {
    *handle = create(*args).release();
    return 0;
  } catch (const std::exception& e) {
    write_error(e.what(), err, err_len);
    return 1;
  }
}

extern "C" int bench_cusparse_run(void* handle, char* err, size_t err_len) {
  try {
    if (!handle) throw Failure("handle must not be NULL");
    auto* peer = static_cast<Peer*>(handle);
    check(cusparseSpMM(peer->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                       CUSPARSE_OPERATION_NON_TRANSPOSE, peer->alpha(), peer->a, peer->b,
                       peer->beta(), peer->c, peer->compute, peer->alg, peer->workspace),
          "cusparseSpMM");
    return 0;
  } catch (const std::exception& e) {
    write_error(e.what(), err, err_len);
    return 1;
  }
}

extern "C" void bench_cusparse_destroy(void* handle) { delete static_cast<Peer*>(handle); }
