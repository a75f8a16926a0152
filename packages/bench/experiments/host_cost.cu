// Host time per bsrmm_matmul on CUDA through the C API (calls queued, no waiting) for a tiny problem
// (f16 4096^2, 4 x 4 blocks, banded; N 1, 2, 16), under tuning AUTO and OFF and the variant forced,
// beside the CUDA runtime calls a multiply makes. Build against an installed core:
//   nvcc -O2 -std=c++20 host_cost.cu -I<core>/include <build>/libbsrmm.a -lpthread -ldl -o host_cost
#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty_kernel(float* p) { if (p && threadIdx.x == 1000) p[0] = 1; }

static double per_call_us(int calls, auto&& f) {
  for (int i = 0; i < 50; ++i) f();
  cudaDeviceSynchronize();
  auto t = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count() / calls;
  cudaDeviceSynchronize();
  return us;
}

int main() {
  const int nbr = 1024, bl = 4;
  std::vector<int32_t> ptr{0}, col;
  for (int r = 0; r < nbr; ++r) { for (int c = r - 1; c <= r + 1; ++c) if (c >= 0 && c < nbr) col.push_back(c); ptr.push_back(int32_t(col.size())); }
  std::vector<uint16_t> vals(col.size() * bl * bl, 0x3c00);  // f16 1.0
  bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0}, cpu{BSRMM_DEVICE_CPU, 0};
  bsrmm_context_t ctx; bsrmm_context_create(gpu, &ctx);
  bsrmm_bsr_desc d{nbr * bl, nbr * bl, bl, bl, int64_t(col.size()), ptr.data(), col.data(), BSRMM_INDEX_I32, vals.data(), BSRMM_DTYPE_F16, cpu};
  bsrmm_matrix_t a; if (bsrmm_matrix_create(ctx, &d, 0, &a)) { printf("create: %s\n", bsrmm_last_error()); return 1; }
  void *b, *c; cudaMalloc(&b, nbr * bl * 16 * 2); cudaMalloc(&c, nbr * bl * 16 * 2);
  cudaMemset(b, 0, nbr * bl * 16 * 2);
  for (int n : {1, 2, 16}) {
    bsrmm_dense B{b, nbr * bl, n, n, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F16, gpu};
    bsrmm_dense C{c, nbr * bl, n, n, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F16, gpu};
    bool failed = false;
    auto mm = [&] { if (bsrmm_matmul(ctx, a, &B, &C, nullptr) && !failed) { failed = true; printf("matmul: %s\n", bsrmm_last_error()); } };
    bsrmm_context_set_tuning_mode(ctx, BSRMM_TUNING_AUTO);
    double automode = per_call_us(4000, mm);
    const char* v = bsrmm_context_last_variant(ctx);
    bsrmm_context_set_tuning_mode(ctx, BSRMM_TUNING_OFF);
    double off = per_call_us(4000, mm);
    bsrmm_context_set_variant(ctx, v);
    double forced = per_call_us(4000, mm);
    bsrmm_context_set_variant(ctx, nullptr);
    printf("N=%2d %-32s host us/call: auto %.2f  off %.2f  forced %.2f\n", n, v, automode, off, forced);
  }
  cudaPointerAttributes at;
  printf("cudaLaunchKernel (empty) %.2f us\n", per_call_us(4000, [&] { empty_kernel<<<1024, 128>>>((float*)c); }));
  printf("cudaPointerGetAttributes %.2f us\n", per_call_us(4000, [&] { cudaPointerGetAttributes(&at, b); }));
  cudaStreamCaptureStatus st;
  printf("cudaStreamIsCapturing %.2f us\n", per_call_us(4000, [&] { cudaStreamIsCapturing(0, &st); }));
  int dev; printf("cudaGetDevice %.2f us\n", per_call_us(4000, [&] { cudaGetDevice(&dev); }));
  return 0;
}
