// Host cost of launching a kernel shaped like bsrmm's sm90 kernels (a ~600-byte __grid_constant__
// parameter block, 227 KB of dynamic shared memory, 132 CTAs of 384 threads) through <<<>>>,
// the driver's cuLaunchKernel and cudaLaunchKernelEx; and the launch-to-completion time of such
// an empty kernel from an idle GPU: the floor of any caller that synchronises every multiply.
//
//   nvcc -O2 -std=c++17 -arch=sm_90a packages/bench/experiments/launch_cost.cu -o launch_cost && ./launch_cost
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
struct alignas(64) Params { char maps[3][128]; long long fields[24]; };
__global__ void __launch_bounds__(384, 1) k(const __grid_constant__ Params p) {
  extern __shared__ char smem[];
  if (threadIdx.x == 0 && p.fields[0] == 12345) smem[0] = 1;
}
int main() {
  const int smem = 227 * 1024;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaStream_t s; cudaStreamCreate(&s);
  Params p{};
  void* entry = nullptr; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &q);
  auto launch = reinterpret_cast<decltype(&cuLaunchKernel)>(entry);
  cudaFunction_t f; cudaGetFuncBySymbol(&f, (const void*)k);
  for (int mode = 0; mode < 3; ++mode) for (int rep = 0; rep < 2; ++rep) {
    const int n = 200; double host = 0;
    for (int i = 0; i < n; ++i) {
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      if (mode == 0) { k<<<132, 384, smem, s>>>(p); cudaGetLastError(); }
      else if (mode == 1) { void* args[] = {&p}; launch((CUfunction)f, 132, 1, 1, 384, 1, 1, smem, s, args, nullptr); }
      else { cudaLaunchConfig_t c{}; c.gridDim = 132; c.blockDim = 384; c.dynamicSmemBytes = smem; c.stream = s; cudaLaunchKernelEx(&c, k, p); }
      host += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    // GPU idle-to-idle: launch after a sync, time to completion of an empty kernel.
    double round = 0;
    for (int i = 0; i < n; ++i) {
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      k<<<132, 384, smem, s>>>(p); cudaStreamSynchronize(s);
      round += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    std::printf("%s: host %.2f us per launch; launch+sync of an empty kernel %.2f us\n",
                mode == 0 ? "<<<>>>" : mode == 1 ? "cuLaunchKernel" : "cudaLaunchKernelEx", host / n, round / n);
  }
}
