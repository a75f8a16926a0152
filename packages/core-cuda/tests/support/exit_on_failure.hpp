// For standalone GPU programs (timing harnesses, the sm90 check, the benchmark's experiments),
// which have no test framework to report to: a failed CUDA or bsrmm call prints where, which
// call and why, and ends the program with status 1. GoogleTest code uses gpu_test_support.hpp's
// ASSERT_CUDA / EXPECT_BSRMM instead, which fail the test and keep the suite running.
#pragma once

#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                                     \
  do {                                                                                       \
    const cudaError_t check_cuda_result_ = (call);                                           \
    if (check_cuda_result_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                      \
                   cudaGetErrorString(check_cuda_result_));                                  \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

#define CHECK_BSRMM(call)                                                                    \
  do {                                                                                       \
    const bsrmm_status check_bsrmm_status_ = (call);                                         \
    if (check_bsrmm_status_ != BSRMM_STATUS_SUCCESS) {                                       \
      std::fprintf(stderr, "%s:%d %s: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   bsrmm_status_name(check_bsrmm_status_), bsrmm_last_error());              \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// A timing program's start: device 0's properties into *prop, or false after printing
// "SKIP: no CUDA device: <why>" (the program then exits 0: there is nothing to time here).
inline bool first_cuda_device(cudaDeviceProp* prop) {
  int32_t devices = 0;
  if (bsrmm_cuda_device_count(&devices) != BSRMM_STATUS_SUCCESS || devices == 0) {
    std::printf("SKIP: no CUDA device: %s\n", bsrmm_last_error());
    return false;
  }
  CHECK_CUDA(cudaGetDeviceProperties(prop, 0));
  return true;
}
