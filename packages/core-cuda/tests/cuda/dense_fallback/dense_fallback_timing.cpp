// Times the dense fallback against the sparse sm90 kernels and against a plain dense GEMM on
// PERF.md's grid problem (M = K = 8192, N = 4096, B and C row-major, the same number of blocks in
// every block row), f16 and bf16. Per case: the untuned default (what bsrmm picks), the sm90
// kernel forced, dense_cublaslt forced. "dense" is dense_cublaslt on a full matrix (no
// structural zeros, so no column scan): the bare cuBLASLt GEMM the fallback is measured against.
// Every output is checked on sampled rows against a float64 reference before it is timed.
// Median of 20 runs after 3 warm-ups, each between CUDA events, no synchronisation in between
// (as the benchmark suite times).
//
//   nvcc -O2 -std=c++17 dense_fallback_timing.cpp -I<core>/include -I<core>/src
//        <build>/libbsrmm.a -lpthread -ldl -o dense_fallback_timing && ./dense_fallback_timing
#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>

#include "common/half.hpp"
#include "../../support/exit_on_failure.hpp"
#include "../../support/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int64_t kM = 8192, kK = 8192, kN = 4096;

using bsrmm::test::Random;

uint16_t encode(float x, bool bf16) {
  return bf16 ? bsrmm::detail::f32_to_bf16_bits(x) : bsrmm::detail::f32_to_f16_bits(x);
}
float decode(uint16_t x, bool bf16) {
  return bf16 ? bsrmm::detail::bf16_bits_to_f32(x) : bsrmm::detail::f16_bits_to_f32(x);
}

struct Setup {
  bool bf16;
  bsrmm_dtype dtype;
  std::vector<float> b_float;
  void* b = nullptr;
  void* c = nullptr;
  bsrmm_context_t ctx = nullptr;
  cudaEvent_t start[20], stop[20];
};

// Runs `variant` ("" = the default) on `a`, checks 8 sampled rows, returns the median ms.
double time_variant(Setup& s, bsrmm_matrix_t a, const std::string& variant, const std::vector<int32_t>& row_ptr,
                    const std::vector<int32_t>& col_idx, const std::vector<uint16_t>& values, int block,
                    std::string* ran, double* error) {
  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
  bsrmm_dense b{s.b, kK, kN, kN, BSRMM_LAYOUT_ROW_MAJOR, s.dtype, gpu};
  bsrmm_dense c{s.c, kM, kN, kN, BSRMM_LAYOUT_ROW_MAJOR, s.dtype, gpu};
  CHECK_BSRMM(bsrmm_context_set_variant(s.ctx, variant.c_str()));
  CHECK_CUDA(cudaMemset(s.c, 0xff, std::size_t(kM * kN) * 2));  // NaN poison
  CHECK_BSRMM(bsrmm_matmul(s.ctx, a, &b, &c, nullptr));
  CHECK_BSRMM(bsrmm_context_synchronize(s.ctx));
  *ran = bsrmm_context_last_variant(s.ctx);
  Random rng(uint64_t(block) * 977 + values.size());
  double diff2 = 0, ref2 = 0;
  std::vector<uint16_t> row(static_cast<std::size_t>(kN));
  for (int sample = 0; sample < 8; ++sample) {
    const int64_t i = rng.below(kM), r = i / block, ii = i % block;
    std::vector<double> want(std::size_t(kN), 0.0);
    for (int32_t p = row_ptr[std::size_t(r)]; p < row_ptr[std::size_t(r) + 1]; ++p)
      for (int64_t k = 0; k < block; ++k) {
        const double av = decode(values[std::size_t((int64_t(p) * block + ii) * block + k)], s.bf16);
        const float* brow = &s.b_float[std::size_t((int64_t(col_idx[std::size_t(p)]) * block + k) * kN)];
        for (int64_t j = 0; j < kN; ++j) want[std::size_t(j)] += av * brow[j];
      }
    CHECK_CUDA(cudaMemcpy(row.data(), static_cast<uint16_t*>(s.c) + i * kN, std::size_t(kN) * 2, cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < kN; ++j) {
      const double got = decode(row[std::size_t(j)], s.bf16);
      diff2 += std::isfinite(got) ? (got - want[std::size_t(j)]) * (got - want[std::size_t(j)]) : 1e300;
      ref2 += want[std::size_t(j)] * want[std::size_t(j)];
    }
  }
  *error = std::sqrt(diff2 / ref2);
  for (int w = 0; w < 3; ++w) CHECK_BSRMM(bsrmm_matmul(s.ctx, a, &b, &c, nullptr));
  for (int run = 0; run < 20; ++run) {
    CHECK_CUDA(cudaEventRecord(s.start[run]));
    CHECK_BSRMM(bsrmm_matmul(s.ctx, a, &b, &c, nullptr));
    CHECK_CUDA(cudaEventRecord(s.stop[run]));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<double> times;
  for (int run = 0; run < 20; ++run) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, s.start[run], s.stop[run]));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  if (!first_cuda_device(&prop)) return 0;
  std::printf("device: %s, %d SMs; M = K = 8192, N = 4096, B and C row-major\n", prop.name, prop.multiProcessorCount);
  struct Case {
    int block;
    double density;
  };
  const Case cases[] = {{128, 1.0}, {16, 0.05}, {16, 0.125}, {16, 0.25}, {16, 0.5}, {32, 0.125},
                        {32, 0.25}, {32, 0.5}, {64, 0.5}, {128, 0.5}};
  for (bool bf16 : {false, true}) {
    Setup s;
    s.bf16 = bf16;
    s.dtype = bf16 ? BSRMM_DTYPE_BF16 : BSRMM_DTYPE_F16;
    const char* dt = bf16 ? "bf16" : "f16";
    Random rng(bf16 ? 2u : 1u);
    std::vector<uint16_t> b_host(std::size_t(kK * kN));
    s.b_float.resize(b_host.size());
    for (std::size_t i = 0; i < b_host.size(); ++i) {
      b_host[i] = encode(float(rng.uniform(-1.0, 1.0)), bf16);
      s.b_float[i] = decode(b_host[i], bf16);
    }
    CHECK_CUDA(cudaMalloc(&s.b, b_host.size() * 2));
    CHECK_CUDA(cudaMalloc(&s.c, std::size_t(kM * kN) * 2));
    CHECK_CUDA(cudaMemcpy(s.b, b_host.data(), b_host.size() * 2, cudaMemcpyHostToDevice));
    CHECK_BSRMM(bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, 0}, &s.ctx));
    CHECK_BSRMM(bsrmm_context_set_tuning_mode(s.ctx, BSRMM_TUNING_OFF));
    for (int i = 0; i < 20; ++i) {
      CHECK_CUDA(cudaEventCreate(&s.start[i]));
      CHECK_CUDA(cudaEventCreate(&s.stop[i]));
    }
    double dense_ms = 0;
    for (const Case& cs : cases) {
      const int block = cs.block;
      const int64_t block_rows = kM / block, block_cols = kK / block;
      const int64_t per_row = std::max<int64_t>(1, std::llround(cs.density * double(block_cols)));
      std::vector<int32_t> row_ptr{0}, col_idx, columns(static_cast<std::size_t>(block_cols));
      for (int64_t r = 0; r < block_rows; ++r) {
        for (int64_t j = 0; j < block_cols; ++j) columns[std::size_t(j)] = int32_t(j);
        for (int64_t j = 0; j < per_row; ++j)
          std::swap(columns[std::size_t(j)], columns[std::size_t(j + rng.below(block_cols - j))]);
        std::sort(columns.begin(), columns.begin() + per_row);
        col_idx.insert(col_idx.end(), columns.begin(), columns.begin() + per_row);
        row_ptr.push_back(int32_t(col_idx.size()));
      }
      const int64_t nnzb = int64_t(col_idx.size());
      std::vector<uint16_t> values(std::size_t(nnzb * block * block));
      for (auto& v : values) v = encode(float(rng.uniform(-1.0, 1.0)), bf16);
      bsrmm_bsr_desc desc{kM, kK, block, block, nnzb, row_ptr.data(), col_idx.data(), BSRMM_INDEX_I32,
                          values.data(), s.dtype, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
      bsrmm_matrix_t a = nullptr;
      CHECK_BSRMM(bsrmm_matrix_create(s.ctx, &desc, 0, &a));
      const std::string sm90 = std::string("sm90_tma_wgmma_") + dt + "_b" + std::to_string(block) +
                               (block >= 64   ? "_rowtile_n256"
                                : block == 32 ? "_transposed_r128_n256_byrow"
                                              : "_transposed_r64_n512_byrow");
      const std::string dense = std::string("dense_cublaslt_") + dt;
      const bool full = cs.density >= 1.0;
      std::vector<std::string> variants = full ? std::vector<std::string>{dense}
                                               : std::vector<std::string>{"", sm90, dense};
      const double flops = 2.0 * double(nnzb) * block * block * double(kN);
      for (const std::string& variant : variants) {
        std::string ran;
        double error = 0;
        const double ms = time_variant(s, a, variant, row_ptr, col_idx, values, block, &ran, &error);
        if (full) dense_ms = ms;
        std::printf("%-5s b%-3d d%-6.3f %-10s %-44s %7.3f ms %6.1f TFLOPS  x%.3f of dense  err %.1e%s\n", dt,
                    block, cs.density, full ? "dense" : variant.empty() ? "default" : "forced", ran.c_str(), ms,
                    flops / ms * 1e-9, ms / dense_ms, error, error < (bf16 ? 1e-2 : 1e-3) ? "" : "  WRONG");
        std::fflush(stdout);
      }
      bsrmm_matrix_destroy(a);
    }
    bsrmm_context_destroy(s.ctx);
    cudaFree(s.b);
    cudaFree(s.c);
  }
  return 0;
}
