// What tuning a CPU problem costs: the multiply that tunes it in a fresh cache (FORCE, what
// AUTO's tuning call of a key does: it measures the candidates, then runs the choice) against
// the median of later AUTO ones (the cached choice), for a random f32 BSR problem with square
// blocks. Not a test: docs/perf-log.md quotes it.
//
//   bsrmm_tuning_cost M K N block density     e.g. bsrmm_tuning_cost 2048 2048 2048 32 1
//
// The cache is a temporary file of its own (the user's is never touched). Rows of C are checked
// against float64 after the tuned multiply, so a broken choice cannot pass for a fast one.
#include "../support/random.hpp"
#include "tune/tuner.hpp"

#include <bsrmm/bsrmm.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

double milliseconds(const std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

template <typename F>
double time_ms(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return milliseconds(start);
}

int usage() {
  std::fprintf(stderr, "usage: bsrmm_tuning_cost M K N block density (M, K multiples of block)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) return usage();
  const int64_t m = std::atoll(argv[1]), k = std::atoll(argv[2]), n = std::atoll(argv[3]);
  const int32_t block = std::atoi(argv[4]);
  const double density = std::atof(argv[5]);
  if (m <= 0 || k <= 0 || n <= 0 || block <= 0 || m % block || k % block || density < 0 || density > 1)
    return usage();

  std::string dir = (std::filesystem::temp_directory_path() / "bsrmm-tuning-cost-XXXXXX").string();
  if (!mkdtemp(dir.data())) return std::perror("mkdtemp"), 1;
  const std::string cache = dir + "/tuning.json";
  setenv("BSRMM_TUNING_CACHE", cache.c_str(), 1);

  bsrmm::test::Random rng(1);
  std::vector<int32_t> row_ptr{0}, col_idx;
  for (int64_t i = 0; i < m / block; ++i) {
    for (int64_t j = 0; j < k / block; ++j)
      if (rng.chance(density)) col_idx.push_back(static_cast<int32_t>(j));
    row_ptr.push_back(static_cast<int32_t>(col_idx.size()));
  }
  std::vector<float> values(col_idx.size() * block * block), b(k * n), c(m * n, std::nanf(""));
  for (float& v : values) v = static_cast<float>(rng.uniform(-1, 1));
  for (float& v : b) v = static_cast<float>(rng.uniform(-1, 1));
  const bsrmm_bsr_desc desc{m, k, block, block, static_cast<int64_t>(col_idx.size()),
                            row_ptr.data(), col_idx.data(), BSRMM_INDEX_I32, values.data(),
                            BSRMM_DTYPE_F32, bsrmm::cpu()};
  const bsrmm_dense dense_b{b.data(), k, n, n, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, bsrmm::cpu()};
  bsrmm_dense dense_c{c.data(), m, n, n, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, bsrmm::cpu()};

  bsrmm::Context ctx;
  const bsrmm::Matrix a(ctx, desc);
  // An untuned multiply first: the plan, the pool and first touches are not tuning's cost.
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  const double untuned = time_ms([&] { bsrmm::matmul(ctx, a, dense_b, dense_c); });
  ctx.set_tuning_mode(BSRMM_TUNING_FORCE);
  const int64_t runs_before = bsrmm::tuner::timed_run_count();
  const double first = time_ms([&] { bsrmm::matmul(ctx, a, dense_b, dense_c); });
  const int64_t timed_runs = bsrmm::tuner::timed_run_count() - runs_before;
  const std::string chosen = ctx.last_variant();
  ctx.set_tuning_mode(BSRMM_TUNING_AUTO);

  // Eight rows of C against float64 (the last multiply wrote the same C as the tuned one).
  std::fill(c.begin(), c.end(), std::nanf(""));
  std::vector<double> cached;
  for (int r = 0; r < 3; ++r) cached.push_back(time_ms([&] { bsrmm::matmul(ctx, a, dense_b, dense_c); }));
  std::sort(cached.begin(), cached.end());
  double worst = 0;
  for (int sample = 0; sample < 8; ++sample) {
    const int64_t row = rng.below(m);
    const int64_t block_row = row / block, i = row % block;
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, magnitude = 0;
      for (int32_t p = row_ptr[block_row]; p < row_ptr[block_row + 1]; ++p)
        for (int32_t q = 0; q < block; ++q) {
          const double term = static_cast<double>(values[(int64_t{p} * block + i) * block + q]) *
                              b[(static_cast<int64_t>(col_idx[p]) * block + q) * n + j];
          want += term;
          magnitude += std::fabs(term);
        }
      const double got = c[row * n + j];
      worst = std::isnan(got) ? INFINITY : std::max(worst, std::fabs(got - want) / (magnitude + 1e-30));
    }
  }

  const std::string entries = bsrmm::tuner_cache_entries();
  std::filesystem::remove_all(dir);
  const double cost = first - cached[1];
  std::printf("M=%lld K=%lld N=%lld block=%d density=%g nnzb=%zu: untuned first run %.1f ms; "
              "tuning multiply %.1f ms, cached %.1f ms (median of 3): tuning %.1f ms = "
              "%.1fx a run, %lld timed runs; chose %s\n%s",
              static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(n), block,
              density, col_idx.size(), untuned, first, cached[1], cost, cost / cached[1],
              static_cast<long long>(timed_runs), chosen.c_str(), entries.c_str());
  if (!(worst <= 1e-5)) {
    std::fprintf(stderr, "C differs from float64: relative error %g\n", worst);
    return 1;
  }
  return 0;
}
