// Host time of the registry's untuned pick (cuda::heuristic_pick), no GPU needed: 8192^2 blocks
// of 64, d 0.25, bf16, row-major B and C, N = 32 / 2048 (a row tile) against N = 33 / 2049 (odd
// N, aligned or not: the staging variant plans inside its supports(); perf-log 101). Without a
// GPU the sm90 variants decline (their check reads the kernel's attributes), so the picks are
// sm80's; the cost of ranking is what this measures. Built against a core build:
//   g++ -std=c++17 -O2 -Ipackages/core-cuda/{src,include,build} -I$CUDA/include \
//     packages/bench/experiments/heuristic_pick_cost.cpp packages/core-cuda/build/libbsrmm.a \
//     -L$CUDA/lib -lcudart_static -ldl -lrt -lpthread -o /tmp/pick_cost
#include "cuda/variant.hpp"

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

using namespace bsrmm;

int main() {
  const int64_t blocks = 128;
  std::vector<int32_t> row_ptr{0}, col_idx;
  std::mt19937 rng(1);
  for (int64_t r = 0; r < blocks; ++r) {
    for (int64_t c = 0; c < blocks; ++c)
      if (rng() % 4 == 0) col_idx.push_back(int32_t(c));
    row_ptr.push_back(int32_t(col_idx.size()));
  }
  static char buffer[1 << 12];
  void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(buffer) + 255) / 256 * 256);
  const cuda::DeviceTraits h100{9, 0, 132, 227 * 1024};
  for (const int64_t n : {32, 33, 2048, 2049}) {
    for (const int64_t ld : {n, (n + 7) / 8 * 8}) {
      cuda::MatmulArgs args;
      args.a.block_row_count = args.a.block_col_count = blocks;
      args.a.block_height = args.a.block_width = 64;
      args.a.nnzb = int64_t(col_idx.size());
      args.a.row_ptr = row_ptr.data();
      args.a.col_idx = col_idx.data();
      args.a.values = aligned;
      args.a.dtype = BSRMM_DTYPE_BF16;
      args.b = {aligned, blocks * 64, n, ld, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_BF16};
      args.c = {aligned, blocks * 64, n, ld, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_BF16};
      const cuda::Variant* pick = cuda::heuristic_pick(args, h100);
      const int reps = 2000;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) pick = cuda::heuristic_pick(args, h100);
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
      std::printf("N %5lld ld %5lld: %-50s %6.2f us a pick\n", (long long)n, (long long)ld,
                  pick ? pick->name.c_str() : "(none)", us);
    }
  }
}
