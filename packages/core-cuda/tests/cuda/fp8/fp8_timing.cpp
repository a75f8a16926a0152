// Times the fp8 multiply (issue 27) against bsrmm's own bf16 on the same pattern, on PERF.md's
// grid problem (M = K = 8192, the same number of blocks in every block row) and at decode-size
// N: A e4m3 with a scale per block, B e4m3 column-major (K-major, as torch._scaled_mm takes it
// and as X of a linear layer is) with one scale, C bf16 row-major. Per case: the untuned default
// (what bsrmm picks, and its name), the bf16 product's default on the same pattern with B
// column-major too, TFLOPS on stored blocks (2 nnzb b^2 N / time) and the ratio. Every fp8
// output is checked on sampled rows against float64 of the dequantised operands before it is
// timed. Median of 20 runs after 3 warm-ups, each between CUDA events.
//
//   nvcc -O2 -std=c++17 fp8_timing.cpp -I<core>/include -I<core>/src <build>/libbsrmm.a
//        -lpthread -ldl -o fp8_timing && ./fp8_timing [variant ...]
// Variant names given on the command line are forced and timed too, where they apply.
#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>

#include "common/float8.hpp"
#include "common/half.hpp"
#include "../../support/exit_on_failure.hpp"
#include "../../support/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using bsrmm::test::Random;
constexpr int64_t kM = 8192, kK = 8192;

// A random e4m3 value of magnitude 1/8 .. 8 (exponent field 4 .. 9), either sign.
uint8_t random_e4m3(Random& rng) {
  return uint8_t((rng.below(2) << 7) | ((4 + rng.below(6)) << 3) | rng.below(8));
}
double e4m3(uint8_t bits) { return bsrmm::detail::to_double(bsrmm::detail::f8e4m3_t{bits}); }

struct Timer {
  cudaEvent_t start[20], stop[20];
  Timer() {
    for (int i = 0; i < 20; ++i) {
      CHECK_CUDA(cudaEventCreate(&start[i]));
      CHECK_CUDA(cudaEventCreate(&stop[i]));
    }
  }
  // Median ms of 20 runs of `run` after 3 warm-ups.
  template <typename Run>
  double median(Run run) {
    for (int w = 0; w < 3; ++w) run();
    for (int i = 0; i < 20; ++i) {
      CHECK_CUDA(cudaEventRecord(start[i]));
      run();
      CHECK_CUDA(cudaEventRecord(stop[i]));
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<double> times;
    for (int i = 0; i < 20; ++i) {
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    return times[10];
  }
};

struct Problem {
  int block;
  double density;
  int64_t n;
  std::vector<int32_t> row_ptr, col_idx;
  std::vector<uint8_t> values;  // e4m3
  std::vector<float> scales;    // per block
  int64_t nnzb() const { return int64_t(col_idx.size()); }
};

Problem make_problem(Random& rng, int block, double density, int64_t n) {
  Problem p{block, density, n, {0}, {}, {}, {}};
  const int64_t block_rows = kM / block, block_cols = kK / block;
  const int64_t per_row = std::max<int64_t>(1, std::llround(density * double(block_cols)));
  std::vector<int32_t> columns(static_cast<std::size_t>(block_cols));
  for (int64_t r = 0; r < block_rows; ++r) {
    for (int64_t j = 0; j < block_cols; ++j) columns[std::size_t(j)] = int32_t(j);
    for (int64_t j = 0; j < per_row; ++j)
      std::swap(columns[std::size_t(j)], columns[std::size_t(j + rng.below(block_cols - j))]);
    std::sort(columns.begin(), columns.begin() + per_row);
    p.col_idx.insert(p.col_idx.end(), columns.begin(), columns.begin() + per_row);
    p.row_ptr.push_back(int32_t(p.col_idx.size()));
  }
  p.values.resize(std::size_t(p.nnzb() * block * block));
  for (uint8_t& v : p.values) v = random_e4m3(rng);
  p.scales.resize(std::size_t(p.nnzb()));
  for (float& s : p.scales) s = float(rng.uniform(0.25, 4.0));
  return p;
}

// Relative RMS error of C's sampled rows against float64 (B column-major e4m3 `b`, one scale).
double sampled_error(const Problem& p, const std::vector<uint8_t>& b, float b_scale, const void* c_dev, Random& rng) {
  double diff2 = 0, ref2 = 0;
  std::vector<uint16_t> row(static_cast<std::size_t>(p.n));
  for (int sample = 0; sample < 6; ++sample) {
    const int64_t i = rng.below(kM), r = i / p.block, ii = i % p.block;
    std::vector<double> want(std::size_t(p.n), 0.0);
    for (int32_t q = p.row_ptr[std::size_t(r)]; q < p.row_ptr[std::size_t(r) + 1]; ++q)
      for (int64_t k = 0; k < p.block; ++k) {
        const double av = e4m3(p.values[std::size_t((int64_t(q) * p.block + ii) * p.block + k)]) *
                          p.scales[std::size_t(q)] * b_scale;
        const int64_t kk = int64_t(p.col_idx[std::size_t(q)]) * p.block + k;
        for (int64_t j = 0; j < p.n; ++j) want[std::size_t(j)] += av * e4m3(b[std::size_t(j * kK + kk)]);
      }
    CHECK_CUDA(cudaMemcpy(row.data(), static_cast<const uint16_t*>(c_dev) + i * p.n, std::size_t(p.n) * 2,
                          cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < p.n; ++j) {
      const double got = bsrmm::detail::bf16_bits_to_f32(row[std::size_t(j)]);
      const double d = got - want[std::size_t(j)];
      diff2 += std::isfinite(got) ? d * d : 1e300;
      ref2 += want[std::size_t(j)] * want[std::size_t(j)];
    }
  }
  return std::sqrt(diff2 / ref2);
}

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  if (!first_cuda_device(&prop)) return 0;
  std::printf("device: %s, %d SMs; M = K = 8192; A e4m3 (scale per block), B e4m3 col-major (one scale), C bf16\n",
              prop.name, prop.multiProcessorCount);
  const std::vector<std::string> forced(argv + 1, argv + argc);
  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0}, host{BSRMM_DEVICE_CPU, 0};
  bsrmm_context_t ctx = nullptr;
  CHECK_BSRMM(bsrmm_context_create(gpu, &ctx));
  CHECK_BSRMM(bsrmm_context_set_tuning_mode(ctx, BSRMM_TUNING_OFF));
  Timer timer;
  Random rng(27);
  const int64_t max_n = 4096;
  std::vector<uint8_t> b_host(std::size_t(max_n * kK));  // column-major: column j at j * K
  for (uint8_t& v : b_host) v = random_e4m3(rng);
  std::vector<uint16_t> b16_host(b_host.size());
  for (std::size_t i = 0; i < b_host.size(); ++i) b16_host[i] = bsrmm::detail::f32_to_bf16_bits(float(e4m3(b_host[i])));
  void *b8 = nullptr, *b16 = nullptr, *c = nullptr;
  CHECK_CUDA(cudaMalloc(&b8, b_host.size()));
  CHECK_CUDA(cudaMalloc(&b16, b16_host.size() * 2));
  CHECK_CUDA(cudaMalloc(&c, std::size_t(kM * max_n) * 2));
  CHECK_CUDA(cudaMemcpy(b8, b_host.data(), b_host.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b16, b16_host.data(), b16_host.size() * 2, cudaMemcpyHostToDevice));
  const float b_scale = 0.5f;
  bsrmm_scales b_scales = bsrmm_scales_default();
  b_scales.kind = BSRMM_SCALE_PER_TENSOR;
  b_scales.data = &b_scale;
  b_scales.count = 1;

  struct Case {
    int block;
    double density;
    int64_t n;
  };
  const Case cases[] = {{128, 0.125, 4096}, {128, 0.25, 4096}, {128, 0.5, 4096}, {64, 0.125, 4096},
                        {64, 0.25, 4096},   {64, 0.5, 4096},   {128, 0.25, 2048}, {64, 0.25, 2048},
                        {128, 0.25, 128},   {64, 0.25, 128},   {64, 0.125, 16},   {128, 0.125, 16}};
  std::printf("%5s %5s %5s | %9s %7s | %9s %7s | %5s | %8s | %s\n", "block", "d", "N", "fp8 ms", "TFLOPS",
              "bf16 ms", "TFLOPS", "x", "rel err", "fp8 variant / bf16 variant");
  for (const Case& cs : cases) {
    const Problem p = make_problem(rng, cs.block, cs.density, cs.n);
    const double flops = 2.0 * double(p.nnzb()) * cs.block * cs.block * double(cs.n);
    bsrmm_bsr_desc desc{kM, kK, cs.block, cs.block, p.nnzb(), p.row_ptr.data(), p.col_idx.data(),
                        BSRMM_INDEX_I32, p.values.data(), BSRMM_DTYPE_FLOAT8_E4M3, host};
    bsrmm_scales a_scales = bsrmm_scales_default();
    a_scales.kind = BSRMM_SCALE_PER_BLOCK;
    a_scales.data = p.scales.data();
    a_scales.count = p.nnzb();
    bsrmm_matrix_t a8 = nullptr;
    CHECK_BSRMM(bsrmm_matrix_create_scaled(ctx, &desc, &a_scales, 0, &a8));
    const bsrmm_dense bd8{b8, kK, cs.n, kK, BSRMM_LAYOUT_COL_MAJOR, BSRMM_DTYPE_FLOAT8_E4M3, gpu};
    bsrmm_dense cd{c, kM, cs.n, cs.n, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_BF16, gpu};
    bsrmm_matmul_options options = bsrmm_matmul_options_default();
    options.b_scales = &b_scales;
    auto run_fp8 = [&] { CHECK_BSRMM(bsrmm_matmul(ctx, a8, &bd8, &cd, &options)); };

    // The bf16 product of the same (dequantised, rounded) values, B column-major as well.
    std::vector<uint16_t> values16(p.values.size());
    const int64_t per_block = int64_t(cs.block) * cs.block;
    for (std::size_t i = 0; i < p.values.size(); ++i)
      values16[i] = bsrmm::detail::f32_to_bf16_bits(float(e4m3(p.values[i]) * p.scales[i / std::size_t(per_block)]));
    bsrmm_bsr_desc desc16 = desc;
    desc16.values = values16.data();
    desc16.dtype = BSRMM_DTYPE_BF16;
    bsrmm_matrix_t a16 = nullptr;
    CHECK_BSRMM(bsrmm_matrix_create(ctx, &desc16, 0, &a16));
    const bsrmm_dense bd16{b16, kK, cs.n, kK, BSRMM_LAYOUT_COL_MAJOR, BSRMM_DTYPE_BF16, gpu};
    auto run_bf16 = [&] { CHECK_BSRMM(bsrmm_matmul(ctx, a16, &bd16, &cd, nullptr)); };

    CHECK_BSRMM(bsrmm_context_set_variant(ctx, ""));
    CHECK_CUDA(cudaMemset(c, 0xff, std::size_t(kM * cs.n) * 2));  // NaN poison
    run_fp8();
    CHECK_BSRMM(bsrmm_context_synchronize(ctx));
    const std::string fp8_variant = bsrmm_context_last_variant(ctx);
    const double error = sampled_error(p, b_host, b_scale, c, rng);
    const double fp8_ms = timer.median(run_fp8);
    run_bf16();
    CHECK_BSRMM(bsrmm_context_synchronize(ctx));
    const std::string bf16_variant = bsrmm_context_last_variant(ctx);
    const double bf16_ms = timer.median(run_bf16);
    std::printf("%5d %5.3f %5lld | %9.4f %7.1f | %9.4f %7.1f | %5.2f | %8.1e | %s / %s\n", cs.block, cs.density,
                (long long)cs.n, fp8_ms, flops / fp8_ms * 1e-9, bf16_ms, flops / bf16_ms * 1e-9, bf16_ms / fp8_ms,
                error, fp8_variant.c_str(), bf16_variant.c_str());
    for (const std::string& name : forced) {
      if (bsrmm_context_set_variant(ctx, name.c_str()) != BSRMM_STATUS_SUCCESS) continue;
      if (bsrmm_matmul(ctx, a8, &bd8, &cd, &options) != BSRMM_STATUS_SUCCESS) continue;  // not for this shape
      CHECK_BSRMM(bsrmm_context_synchronize(ctx));
      const double err = sampled_error(p, b_host, b_scale, c, rng);
      const double ms = timer.median(run_fp8);
      std::printf("%23s forced %9.4f %7.1f  rel err %8.1e  %s\n", "", ms, flops / ms * 1e-9, err, name.c_str());
    }
    CHECK_BSRMM(bsrmm_context_set_variant(ctx, ""));
    bsrmm_matrix_destroy(a8);
    bsrmm_matrix_destroy(a16);
    std::fflush(stdout);
  }
  cudaFree(b8);
  cudaFree(b16);
  cudaFree(c);
  bsrmm_context_destroy(ctx);
  return 0;
}
