// Times the CUDA kernels on PERF.md's grid problem (M = K = 8192, N = 4096, fp16, uniformly
// random block pattern with the same number of blocks in every block row) for blocks
// 16/32/64/128 x densities 0.05/0.125/0.25/0.5: the heuristic's pick, every sm90 variant
// (row-major B and C) and every sm80 f16 row-major-B variant that takes the block size. Then,
// per block at density 0.125, the heuristic's pick and every sm90 variant on a skewed pattern
// (power law, about the same block count: label "skew") and on N = 256, 64, 16 (labels "n256"
// ...), the small-N cases with no wave cliff to show.
// Each output is checked on sampled rows against a float64 reference before its time is
// reported. Median of 10 timed runs after 2 warm-ups, CUDA events. A quick harness for kernel
// work; the benchmark suite (packages/bench) is the reference for published numbers.
//
//   nvcc -O2 -std=c++17 packages/bench/experiments/grid_timing.cpp -Ipackages/core-cuda/include \
//        -Ipackages/core-cuda/src <build>/libbsrmm.a -o grid_timing && ./grid_timing [filter]
#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>

#include "common/half.hpp"
#include "../../core-cuda/tests/support/exit_on_failure.hpp"
#include "../../core-cuda/tests/support/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using bsrmm::test::Random;

constexpr int64_t kM = 8192, kK = 8192, kN = 4096;

struct Timed {
  std::string variant;
  double ms;
  double tflops;
  double error;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  int32_t devices = 0;
  CHECK_BSRMM(bsrmm_cuda_device_count(&devices));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

  Random rng(12345);
  std::vector<uint16_t> b_host(std::size_t(kK * kN));
  std::vector<float> b_float(b_host.size());
  for (std::size_t i = 0; i < b_host.size(); ++i) {
    b_host[i] = bsrmm::detail::f32_to_f16_bits(float(rng.uniform(-1.0, 1.0)));
    b_float[i] = bsrmm::detail::f16_bits_to_f32(b_host[i]);
  }
  void *b_dev = nullptr, *c_dev = nullptr;
  CHECK_CUDA(cudaMalloc(&b_dev, b_host.size() * 2));
  CHECK_CUDA(cudaMalloc(&c_dev, std::size_t(kM * kN) * 2));
  CHECK_CUDA(cudaMemcpy(b_dev, b_host.data(), b_host.size() * 2, cudaMemcpyHostToDevice));
  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
  bsrmm_dense b{b_dev, kK, kN, kN, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F16, gpu};
  bsrmm_dense c{c_dev, kM, kN, kN, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F16, gpu};
  bsrmm_context_t ctx = nullptr;
  CHECK_BSRMM(bsrmm_context_create(gpu, &ctx));
  CHECK_BSRMM(bsrmm_context_set_tuning_mode(ctx, BSRMM_TUNING_OFF));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));

  std::vector<std::string> lines;
  // skewed: row i of a random permutation gets ~ 1 / (i + 1)^0.8 of the blocks (as sm90_check).
  auto run_case = [&](int block, double density, bool skewed, int64_t n, bool with_sm80) {
      char label[64];
      std::snprintf(label, sizeof label, "b%d d%.3f%s", block, density,
                    skewed ? " skew" : n != kN ? (" n" + std::to_string(n)).c_str() : "");
      if (!filter.empty() && std::string(label).find(filter) == std::string::npos) return;
      const int64_t block_rows = kM / block, block_cols = kK / block;
      const int64_t per_row = std::max<int64_t>(1, std::llround(density * double(block_cols)));
      std::vector<int64_t> counts(static_cast<std::size_t>(block_rows), per_row);
      if (skewed) {
        std::vector<double> weight(counts.size());
        double total = 0;
        for (std::size_t i = 0; i < weight.size(); ++i) total += weight[i] = std::pow(double(i + 1), -0.8);
        std::vector<std::size_t> permutation(counts.size());
        for (std::size_t i = 0; i < permutation.size(); ++i) permutation[i] = i;
        for (std::size_t i = permutation.size() - 1; i > 0; --i) std::swap(permutation[i], permutation[rng.next() % (i + 1)]);
        for (std::size_t i = 0; i < counts.size(); ++i)
          counts[permutation[i]] = std::min<int64_t>(block_cols, std::llround(weight[i] / total * double(per_row * block_rows)));
      }
      std::vector<int32_t> row_ptr{0}, col_idx;
      std::vector<int32_t> columns(static_cast<std::size_t>(block_cols));
      for (int64_t r = 0; r < block_rows; ++r) {
        const int64_t per_row = counts[std::size_t(r)];
        for (int64_t j = 0; j < block_cols; ++j) columns[std::size_t(j)] = int32_t(j);
        for (int64_t j = 0; j < per_row; ++j)  // partial Fisher-Yates: per_row distinct columns
          std::swap(columns[std::size_t(j)], columns[std::size_t(j + int64_t(rng.next() % uint64_t(block_cols - j)))]);
        std::sort(columns.begin(), columns.begin() + per_row);
        col_idx.insert(col_idx.end(), columns.begin(), columns.begin() + per_row);
        row_ptr.push_back(int32_t(col_idx.size()));
      }
      const int64_t nnzb = int64_t(col_idx.size());
      std::vector<uint16_t> values(std::size_t(nnzb * block * block));
      for (auto& v : values) v = bsrmm::detail::f32_to_f16_bits(float(rng.uniform(-1.0, 1.0)));
      bsrmm_bsr_desc desc{kM, kK, block, block, nnzb, row_ptr.data(), col_idx.data(), BSRMM_INDEX_I32,
                          values.data(), BSRMM_DTYPE_F16, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
      bsrmm_matrix_t a = nullptr;
      CHECK_BSRMM(bsrmm_matrix_create(ctx, &desc, 0, &a));

      std::vector<std::string> candidates{""};
      for (int32_t i = 0; i < bsrmm_variant_count(); ++i) {
        const std::string name = bsrmm_variant_name(i);
        int bm = 0, bn = 0, kc = 0;
        if (with_sm80 && std::sscanf(name.c_str(), "sm80_f16_m%dn%dk%d", &bm, &bn, &kc) == 3 &&
            name.find("_brow_") != std::string::npos && block % bm == 0 && block % kc == 0 && bn >= 128)
          candidates.push_back(name);
        // Every sm90 f16 variant of this (square) block for row-major B and C side by side; the
        // "_wide" ones take blocks wider than high.
        const std::string sm90 = "sm90_tma_wgmma_f16_b" + std::to_string(block) + "_";
        if (name.rfind(sm90, 0) == 0 && name.find("col") == std::string::npos &&
            name.find("_wide_") == std::string::npos)
          candidates.push_back(name);
      }
      // Sampled rows of the reference, in float64.
      std::vector<int64_t> rows;
      for (int s = 0; s < 8; ++s) rows.push_back(int64_t(rng.next() % uint64_t(kM)));
      std::vector<double> ref(rows.size() * std::size_t(kN), 0.0);
      for (std::size_t s = 0; s < rows.size(); ++s) {
        const int64_t r = rows[s] / block, i = rows[s] % block;
        for (int32_t blk = row_ptr[std::size_t(r)]; blk < row_ptr[std::size_t(r + 1)]; ++blk)
          for (int64_t k = 0; k < block; ++k) {
            const double av = bsrmm::detail::f16_bits_to_f32(values[std::size_t((blk * block + i) * block + k)]);
            const float* brow = &b_float[std::size_t((int64_t(col_idx[std::size_t(blk)]) * block + k) * kN)];
            double* out = &ref[s * std::size_t(kN)];
            for (int64_t j = 0; j < n; ++j) out[j] += av * brow[j];
          }
      }
      const double flops = 2.0 * double(nnzb) * block * block * double(n);
      // Narrow N: the first n columns of the same B and C (row stride kN).
      bsrmm_dense b_n = b, c_n = c;
      b_n.cols = c_n.cols = n;
      for (const std::string& variant : candidates) {
        CHECK_BSRMM(bsrmm_context_set_variant(ctx, variant.c_str()));
        CHECK_CUDA(cudaMemset(c_dev, 0xff, std::size_t(kM * kN) * 2));  // NaN poison
        CHECK_BSRMM(bsrmm_matmul(ctx, a, &b_n, &c_n, nullptr));
        CHECK_BSRMM(bsrmm_context_synchronize(ctx));
        const std::string ran = bsrmm_context_last_variant(ctx);
        double diff2 = 0.0, ref2 = 0.0;
        std::vector<uint16_t> row(static_cast<std::size_t>(kN));
        for (std::size_t s = 0; s < rows.size(); ++s) {
          CHECK_CUDA(cudaMemcpy(row.data(), static_cast<uint16_t*>(c_dev) + rows[s] * kN, std::size_t(kN) * 2,
                                cudaMemcpyDeviceToHost));
          for (int64_t j = 0; j < n; ++j) {
            const double got = bsrmm::detail::f16_bits_to_f32(row[std::size_t(j)]);
            const double want = ref[s * std::size_t(kN) + std::size_t(j)];
            diff2 += std::isfinite(got) ? (got - want) * (got - want) : 1e300;
            ref2 += want * want;
          }
        }
        const double error = std::sqrt(diff2 / ref2);
        std::vector<double> times;
        for (int run = 0; run < 12; ++run) {
          CHECK_CUDA(cudaEventRecord(start));
          CHECK_BSRMM(bsrmm_matmul(ctx, a, &b_n, &c_n, nullptr));
          CHECK_CUDA(cudaEventRecord(stop));
          CHECK_CUDA(cudaEventSynchronize(stop));
          float ms = 0;
          CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
          if (run >= 2) times.push_back(ms);
        }
        const double ms = median(times);
        char line[256];
        std::snprintf(line, sizeof line, "%-20s %-46s %8.3f ms %7.1f TFLOPS  err %.1e%s", label,
                      (variant.empty() ? "(default) " + ran : ran).c_str(), ms, flops / ms * 1e-9, error,
                      error < 1e-3 ? "" : "  WRONG");
        std::printf("%s\n", line);
        std::fflush(stdout);
        lines.push_back(line);
      }
      bsrmm_matrix_destroy(a);
  };
  for (int block : {16, 32, 64, 128})
    for (double density : {0.05, 0.125, 0.25, 0.5}) run_case(block, density, false, kN, true);
  for (int block : {16, 32, 64, 128}) {
    run_case(block, 0.125, true, kN, false);
    for (int64_t n : {256, 64, 16}) run_case(block, 0.125, false, n, false);
  }
  std::printf("\n==== summary: M = K = 8192, N = 4096, fp16, effective TFLOPS ====\n");
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
  bsrmm_context_destroy(ctx);
  return 0;
}
