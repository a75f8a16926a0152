// cpu_blocked_simd's kernels for each instruction set this machine runs (AVX-512 where present,
// AVX2 / baseline always), called directly on the same operands: odd block shapes (3x5, 5x3,
// 6x6, 7x9; 8x32, 3x48, 4x64: whole vectors wide at N = 1), tiny and wide N (1, 3, 16, 47, 130:
// partial vectors and strips), every dtype,
// beta != 0 and a NaN-poisoned C with beta 0, bias and activations, against float64; and banded
// tiny-block matrices whose B is read in place (the tiny tile).
#include "../../src/device/buffer.hpp"
#include "../../src/common/thread_pool.hpp"
#include "../../src/cpu/blocked_rows.hpp"
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"
#include "cpu_test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

std::vector<const cpu::KernelSet*> kernel_sets() {
  std::vector<const cpu::KernelSet*> sets{&cpu::avx2_kernels()};
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      cpu::avx512_kernels() != nullptr) {
    sets.push_back(cpu::avx512_kernels());
  }
  return sets;
}

TEST(BlockedIsa, EveryKernelSetMatchesFloat64) {
  const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
  const std::pair<int32_t, int32_t> shapes[] = {{3, 5}, {5, 3}, {3, 3}, {6, 6}, {7, 9}, {1, 4}, {2, 2}, {4, 4},
                                                {8, 4}, {4, 8}, {16, 2}, {8, 8}, {16, 16}, {24, 8},
                                                {8, 32}, {3, 48}, {4, 64}};
  detail::ThreadPool pool(2);
  detail::Buffer workspace;
  int checked = 0;
  uint64_t seed = 1;
  for (const cpu::KernelSet* kernels : kernel_sets())
    for (bsrmm_dtype dtype : dtypes)
      for (auto [bh, bw] : shapes)
        for (int64_t n : {1, 3, 16, 47, 130}) {
          const bool epilogue = (seed % 3) == 0;
          Random rng(seed++);
          HostBsr a = random_bsr(rng, std::max(1, 40 / bh), std::max(1, 30 / bw), bh, bw, 0.4, dtype);
          HostDense b(a.cols, n, dtype, seed % 2 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR, 1);
          fill_random(b, rng);
          HostDense c(a.rows, n, dtype, seed % 4 < 2 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR, 2);
          const HostBias bias = random_bias(a.rows, dtype, rng);
          if (epilogue) fill_random(c, rng);
          const HostDense c_before = c;
          CpuOperands operands(a, b, c);
          cpu::MatmulArgs& args = operands.args;
          if (epilogue) {
            args.alpha = -1.25;
            args.beta = 0.5;
            args.bias = bias.bytes.data();
            args.activation = BSRMM_ACTIVATION_GELU;
          }
          cpu::matmul_blocked(args, pool, workspace, *kernels);
          const std::string what = std::string(kernels->isa) + " dtype " + std::to_string(dtype) + " b" +
                                   std::to_string(bh) + "x" + std::to_string(bw) + " n " + std::to_string(n);
          expect_matches(c,
                         reference_matmul(a.to_dense(), a.rows, a.cols, BSRMM_OP_NONE, b, c_before,
                                          args.alpha, args.beta, epilogue ? &bias.values : nullptr,
                                          args.activation),
                         what);
          EXPECT_TRUE(c.padding_untouched()) << what;
          ++checked;
        }
  std::printf("[ blocked isa] %d products checked over %zu kernel sets\n", checked, kernel_sets().size());
}

// A banded (stencil-like) matrix of tiny blocks with a row-major B of whole vectors: B is read in
// place, and blocks up to 3 high run the wide tiny tile (any N, several strips), 4-8 high the
// usual one; every dtype, beta 0 and not.
TEST(BlockedIsa, TinyBlocksReadingBInPlace) {
  detail::ThreadPool pool(2);
  detail::Buffer workspace;
  uint64_t seed = 77;
  for (const cpu::KernelSet* kernels : kernel_sets())
    for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F64, BSRMM_DTYPE_BF16})
      for (auto [bh, bw] : {std::pair<int32_t, int32_t>{3, 3}, {2, 5}, {1, 1}, {3, 8}, {4, 4}})
        for (int64_t n : {16, 64, 128, 176})
          for (double beta : {0.0, 0.75}) {
            Random rng(seed++);
            const int64_t blocks = 40;
            HostBsr a;
            a.rows = blocks * bh;
            a.cols = blocks * bw;
            a.block_height = bh;
            a.block_width = bw;
            a.dtype = dtype;
            for (int64_t r = 0; r < blocks; ++r) {
              for (int64_t c = std::max<int64_t>(0, r - 2); c <= std::min<int64_t>(blocks - 1, r + 2); ++c)
                a.col_idx.push_back(c);
              a.row_ptr.push_back(a.nnzb());
            }
            a.values.resize(static_cast<size_t>(a.nnzb() * a.block_elements()) * dtype_size(dtype));
            for (int64_t p = 0; p < a.nnzb(); ++p)
              for (int32_t i = 0; i < bh; ++i)
                for (int32_t j = 0; j < bw; ++j) a.set_value(p, i, j, round_to(dtype, rng.uniform(-1, 1)));
            HostDense b(a.cols, n, dtype);
            for (int64_t i = 0; i < a.cols; ++i)
              for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(dtype, rng.uniform(-1, 1)));
            HostDense c(a.rows, n, dtype, BSRMM_LAYOUT_ROW_MAJOR, 3);
            if (beta != 0) {
              for (int64_t i = 0; i < a.rows; ++i)
                for (int64_t j = 0; j < n; ++j) c.set(i, j, round_to(dtype, rng.uniform(-1, 1)));
            }
            const HostDense c_before = c;
            CpuOperands operands(a, b, c);
            operands.args.beta = beta;
            cpu::matmul_blocked(operands.args, pool, workspace, *kernels);
            const std::string what = std::string(kernels->isa) + " dtype " + std::to_string(dtype) + " b" +
                                     std::to_string(bh) + "x" + std::to_string(bw) + " n " + std::to_string(n) +
                                     " beta " + std::to_string(beta);
            expect_matches(c, reference_matmul(a.to_dense(), a.rows, a.cols, BSRMM_OP_NONE, b, c_before, 1.0,
                                               beta, nullptr, BSRMM_ACTIVATION_NONE),
                           what);
            EXPECT_TRUE(c.padding_untouched()) << what;
          }
}

// The loaded choice is AVX-512 exactly where the CPU has it (and BSRMM_CPU_ISA does not say avx2).
TEST(BlockedIsa, ChoosesAvx512WhereTheCpuHasIt) {
  const char* isa = std::getenv("BSRMM_CPU_ISA");
  const bool forced_avx2 = isa != nullptr && std::string(isa) == "avx2";
  const bool expect_avx512 = !forced_avx2 && kernel_sets().size() == 2;
  EXPECT_EQ(std::string(cpu::kernels().isa), expect_avx512 ? "avx512" : "avx2");
}

}  // namespace
}  // namespace bsrmm::test
