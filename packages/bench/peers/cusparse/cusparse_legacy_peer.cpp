// The legacy cusparse<t>bsrmm / cusparse<t>bsrmv on caller-owned device arrays; see
// cusparse_peer.h. Its own library: a toolkit without the legacy API loses this peer only.
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
  if (status != cudaSuccess) throw Failure(std::string(call) + ": " + cudaGetErrorString(status));
}

struct Legacy {
  bench_cusparse_args x{};
  cusparseHandle_t handle = nullptr;
  cusparseMatDescr_t descr = nullptr;

  ~Legacy() {
    if (descr) cusparseDestroyMatDescr(descr);
    if (handle) cusparseDestroy(handle);
  }

  template <typename T>
  void run_typed(
      cusparseStatus_t (*mm)(cusparseHandle_t, cusparseDirection_t, cusparseOperation_t,
                             cusparseOperation_t, int, int, int, int, const T*,
                             const cusparseMatDescr_t, const T*, const int*, const int*, int,
                             const T*, int, const T*, T*, int),
      cusparseStatus_t (*mv)(cusparseHandle_t, cusparseDirection_t, cusparseOperation_t, int, int,
                             int, const T*, const cusparseMatDescr_t, const T*, const int*,
                             const int*, int, const T*, const T*, T*)) {
    const T alpha = 1, beta = 0;
    const int mb = static_cast<int>(x.rows / x.block_height);
    const int kb = static_cast<int>(x.cols / x.block_width);
    const int block = static_cast<int>(x.block_height);
    const auto* values = static_cast<const T*>(x.values);
    const auto* row_offsets = static_cast<const int*>(x.row_offsets);
    const auto* col_indices = static_cast<const int*>(x.col_indices);
    if (x.n == 1) {
      check(mv(handle, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, kb,
               static_cast<int>(x.nnzb), &alpha, descr, values, row_offsets, col_indices, block,
               static_cast<const T*>(x.b), &beta, static_cast<T*>(x.c)),
            "cusparse<t>bsrmv");
      return;
    }
    // B row-major (k x n, ld n) is B^T column-major: op(B) = transpose of it.
    const cusparseOperation_t op_b =
        x.b_col_major ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE;
    check(mm(handle, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, op_b, mb,
             static_cast<int>(x.n), kb, static_cast<int>(x.nnzb), &alpha, descr, values,
             row_offsets, col_indices, block, static_cast<const T*>(x.b), static_cast<int>(x.ldb),
             &beta, static_cast<T*>(x.c), static_cast<int>(x.ldc)),
          "cusparse<t>bsrmm");
  }

  void run() {
    if (x.dtype == BENCH_DTYPE_F64) {
      run_typed<double>(cusparseDbsrmm, cusparseDbsrmv);
    } else {
      run_typed<float>(cusparseSbsrmm, cusparseSbsrmv);
    }
  }
};

void write_error(const char* message, char* err, size_t err_len) {
  if (err && err_len) std::snprintf(err, err_len, "%s", message);
}

std::unique_ptr<Legacy> create(const bench_cusparse_args& x) {
  if (x.format != BENCH_FORMAT_LEGACY_BSR) throw Failure("format must be 3 (legacy BSR)");
  if (x.dtype != BENCH_DTYPE_F32 && x.dtype != BENCH_DTYPE_F64) {
    throw Failure("legacy bsrmm / bsrmv take float32 and float64 only");
  }
  if (x.block_height != x.block_width) throw Failure("legacy bsrmm / bsrmv need square blocks");
  if (x.n > 1 && !x.c_col_major) throw Failure("legacy bsrmm writes C column-major only");
  auto peer = std::make_unique<Legacy>();
  peer->x = x;
  check(cusparseCreate(&peer->handle), "cusparseCreate");
  check(cusparseSetStream(peer->handle, static_cast<cudaStream_t>(x.stream)), "cusparseSetStream");
  check(cusparseCreateMatDescr(&peer->descr), "cusparseCreateMatDescr");
  check(cusparseSetMatType(peer->descr, CUSPARSE_MATRIX_TYPE_GENERAL), "cusparseSetMatType");
  check(cusparseSetMatIndexBase(peer->descr, CUSPARSE_INDEX_BASE_ZERO), "cusparseSetMatIndexBase");
  peer->run();  // a shape or dtype the legacy API rejects fails here, not in the timed loop
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(x.stream)), "cudaStreamSynchronize");
  return peer;
}

}  // namespace

extern "C" int bench_cusparse_legacy_create(const bench_cusparse_args* args, void** handle,
                                            char* err, size_t err_len) {
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

extern "C" int bench_cusparse_legacy_run(void* handle, char* err, size_t err_len) {
  try {
    if (!handle) throw Failure("handle must not be NULL");
    static_cast<Legacy*>(handle)->run();
    return 0;
  } catch (const std::exception& e) {
    write_error(e.what(), err, err_len);
    return 1;
  }
}

extern "C" void bench_cusparse_legacy_destroy(void* handle) { delete static_cast<Legacy*>(handle); }
