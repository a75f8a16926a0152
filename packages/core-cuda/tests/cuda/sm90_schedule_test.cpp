// The Hopper kernels on the plan's balanced work lists: skewed (power-law) rows with empty ones,
// more tiles than CTAs so each CTA runs several, every sm90 variant forced by name through the
// C ABI, C poisoned with NaN, every element checked against float64; non-square blocks through
// the variants named for them ("_b64x32", and "_b32_wide" for blocks 2 or 4 times as wide as
// high). Also A^T (its own plan and lists), a second multiply on another stream (the
// cached list) and a third with beta = -1 over the result (the epilogue reading C); "_ccol"
// variants write a column-major C and "_bcol" ones read a column-major B, each with padding
// between its columns. Skips unless the device is compute capability 9.0 (the sm_90a kernels).
#include "../../src/common/half.hpp"
#include "../support/random.hpp"
#include "gpu_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace bsrmm::test {
namespace {

// The block shape a variant takes, from its name: "_b64" (square), "_b64x32" (height x width)
// or "_b32_wide" (a multiple of the height wide: 4 x 16 or 2 x 32, 64, here).
struct BlockShape {
  int height = 0, width = 0;
};

BlockShape block_of(const std::string& variant) {
  for (size_t at = variant.find("_b"); at != std::string::npos; at = variant.find("_b", at + 1))
    if (at + 2 < variant.size() && std::isdigit(static_cast<unsigned char>(variant[at + 2]))) {
      char* end = nullptr;
      const int height = int(std::strtol(variant.c_str() + at + 2, &end, 10));
      if (*end == 'x') return {height, int(std::strtol(end + 1, nullptr, 10))};
      if (std::string(end).rfind("_wide", 0) == 0) return {height, height == 16 ? 64 : 2 * height};
      return {height, height};
    }
  return {};
}

// The f16 / bf16 ones (the fp8 row tiles have their own test, fp8_test.cpp).
std::vector<std::string> sm90_variants() {
  std::vector<std::string> names;
  for (int32_t i = 0; i < bsrmm_variant_count(); ++i)
    if (std::string name = bsrmm_variant_name(i);
        name.rfind("sm90_tma_wgmma_", 0) == 0 && name.find("e4m3") == std::string::npos &&
        name.find("e5m2") == std::string::npos)
      names.push_back(name);
  return names;
}

struct HostProblem {
  int64_t block_rows, block_cols, bh, bw, n;
  bool bf16;
  std::vector<int32_t> row_ptr, col_idx;
  std::vector<uint16_t> values, b;
  int64_t m() const { return block_rows * bh; }
  int64_t k() const { return block_cols * bw; }
};

uint16_t to_bits(double x, bool bf16) {
  return bf16 ? detail::f32_to_bf16_bits(float(x)) : detail::f32_to_f16_bits(float(x));
}
double from_bits(uint16_t bits, bool bf16) {
  return bf16 ? detail::bf16_bits_to_f32(bits) : detail::f16_bits_to_f32(bits);
}

// Row i of a random permutation gets ~ 1 / (i + 1)^1.1 of the blocks (a few full rows, a long
// tail, rows rounding to none; odd and even counts), and every fifth row is empty.
HostProblem skewed_problem(Random& random, BlockShape block, int64_t m, int64_t k, int64_t n, bool bf16) {
  HostProblem p{m / block.height, k / block.width, block.height, block.width, n, bf16, {}, {}, {}, {}};
  const int64_t total = p.block_rows * p.block_cols / 4;
  std::vector<double> weight(static_cast<size_t>(p.block_rows));
  double sum = 0;
  for (int64_t i = 0; i < p.block_rows; ++i) sum += weight[static_cast<size_t>(i)] = std::pow(double(i + 1), -1.1);
  std::vector<int64_t> order(static_cast<size_t>(p.block_rows));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = p.block_rows - 1; i > 0; --i)
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(random.below(i + 1))]);
  std::vector<int64_t> count(static_cast<size_t>(p.block_rows));
  for (int64_t i = 0; i < p.block_rows; ++i)
    count[static_cast<size_t>(order[static_cast<size_t>(i)])] =
        std::min<int64_t>(p.block_cols, std::llround(weight[static_cast<size_t>(i)] / sum * double(total)));
  for (int64_t r = 0; r < p.block_rows; r += 5) count[static_cast<size_t>(r)] = 0;
  std::vector<int32_t> pool(static_cast<size_t>(p.block_cols));
  p.row_ptr.push_back(0);
  for (int64_t r = 0; r < p.block_rows; ++r) {
    std::iota(pool.begin(), pool.end(), 0);
    const int64_t c = count[static_cast<size_t>(r)];
    for (int64_t j = 0; j < c; ++j)
      std::swap(pool[static_cast<size_t>(j)], pool[static_cast<size_t>(j + random.below(p.block_cols - j))]);
    std::sort(pool.begin(), pool.begin() + c);
    p.col_idx.insert(p.col_idx.end(), pool.begin(), pool.begin() + c);
    p.row_ptr.push_back(int32_t(p.col_idx.size()));
  }
  p.values.resize(p.col_idx.size() * size_t(p.bh * p.bw));
  for (uint16_t& v : p.values) v = to_bits(random.uniform(-1, 1), bf16);
  p.b.resize(size_t(p.k() * n));
  for (uint16_t& v : p.b) v = to_bits(random.uniform(-1, 1), bf16);
  return p;
}

// C = op(A) B in float64, every element; op(A) = A^T when `transpose`.
std::vector<double> reference(const HostProblem& p, bool transpose) {
  const int64_t rows = transpose ? p.k() : p.m();
  std::vector<double> c(size_t(rows * p.n), 0.0), b(p.b.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = from_bits(p.b[i], p.bf16);
  std::vector<std::thread> threads;
  const int parts = 8;
  for (int t = 0; t < parts; ++t)
    threads.emplace_back([&, t] {
      for (int64_t r = 0; r < p.block_rows; ++r)
        for (int32_t q = p.row_ptr[size_t(r)]; q < p.row_ptr[size_t(r) + 1]; ++q) {
          const int64_t col = p.col_idx[size_t(q)];
          // A's block (r, col): rows r*bh.., columns col*bw... Under A^T it sits at (col, r).
          const int64_t out_block = transpose ? col : r, in_block = transpose ? r : col;
          if (out_block % parts != t) continue;
          for (int64_t i = 0; i < p.bh; ++i)
            for (int64_t j = 0; j < p.bw; ++j) {
              const double a = from_bits(p.values[size_t((q * p.bh + i) * p.bw + j)], p.bf16);
              const int64_t out_row = transpose ? out_block * p.bw + j : out_block * p.bh + i;
              const int64_t in_row = transpose ? in_block * p.bh + i : in_block * p.bw + j;
              double* out = &c[size_t(out_row * p.n)];
              const double* from = &b[size_t(in_row * p.n)];
              for (int64_t x = 0; x < p.n; ++x) out[x] += a * from[x];
            }
        }
    });
  for (std::thread& thread : threads) thread.join();
  return c;
}

// Device memory freed on scope exit (an ASSERT may return early).
struct DeviceCopy {
  void* data = nullptr;
  ~DeviceCopy() { cudaFree(data); }
};

// Runs the forced variant on `stream` into NaN-poisoned C and checks every element; then once
// more with beta = -1 over that result, which must leave only rounding (the epilogue read C back
// where it wrote it). "_ccol" / "_bcol" variants get a column-major C / B with a padded leading
// dimension.
void run_and_compare(bsrmm_context_t ctx, bsrmm_matrix_t a, const HostProblem& p, bool transpose,
                     const std::vector<double>& ref, void* b_dev, void* c_dev, cudaStream_t stream,
                     const std::string& variant) {
  const int64_t rows = transpose ? p.k() : p.m();
  const bool col_major = variant.find("_ccol") != std::string::npos;
  const int64_t ldc = col_major ? rows + 8 : p.n;
  const size_t c_elements = size_t(col_major ? ldc * p.n : rows * p.n);
  const bsrmm_dtype dtype = p.bf16 ? BSRMM_DTYPE_BF16 : BSRMM_DTYPE_F16;
  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
  const int64_t b_rows = transpose ? p.m() : p.k();
  bsrmm_dense b{b_dev, b_rows, p.n, p.n, BSRMM_LAYOUT_ROW_MAJOR, dtype, gpu};
  DeviceCopy b_col;  // "_bcol": the same B column-major, with padding between its columns
  if (variant.find("_bcol") != std::string::npos) {
    const int64_t ldb = b_rows + 8;
    std::vector<uint16_t> host(size_t(ldb * p.n), 0xffff);  // p.b is what b_dev holds
    for (int64_t r = 0; r < b_rows; ++r)
      for (int64_t j = 0; j < p.n; ++j) host[size_t(j * ldb + r)] = p.b[size_t(r * p.n + j)];
    ASSERT_CUDA(cudaMalloc(&b_col.data, host.size() * 2));
    ASSERT_CUDA(cudaMemcpy(b_col.data, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
    b = bsrmm_dense{b_col.data, b_rows, p.n, ldb, BSRMM_LAYOUT_COL_MAJOR, dtype, gpu};
  }
  bsrmm_dense c{c_dev, rows, p.n, ldc, col_major ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR,
                dtype, gpu};
  ASSERT_CUDA(cudaMemsetAsync(c_dev, 0xff, c_elements * 2, stream));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_stream(ctx, stream));
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.op_a = transpose ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx, a, &b, &c, &options));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx));
  EXPECT_EQ(std::string(bsrmm_context_last_variant(ctx)), variant);
  std::vector<uint16_t> out(c_elements);
  ASSERT_CUDA(cudaMemcpy(out.data(), c_dev, out.size() * 2, cudaMemcpyDeviceToHost));
  auto at = [&](int64_t r, int64_t j) { return out[size_t(col_major ? j * ldc + r : r * p.n + j)]; };
  double diff = 0, norm = 0;
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < p.n; ++j) {
      const double got = from_bits(at(r, j), p.bf16), want = ref[size_t(r * p.n + j)];
      if (!std::isfinite(got) && bad++ < 5)
        ADD_FAILURE() << "C[" << r << "][" << j << "] = " << got << " (left unwritten?)";
      diff += std::isfinite(got) ? (got - want) * (got - want) : 0.0;
      norm += want * want;
    }
  EXPECT_EQ(bad, 0);
  EXPECT_LT(std::sqrt(diff / norm), p.bf16 ? 1e-2 : 1e-3);
  if (col_major)  // the padding between columns stays poisoned
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t r = rows; r < ldc; ++r)
        if (out[size_t(j * ldc + r)] != 0xffff) {
          ADD_FAILURE() << "padding C[" << r << "][" << j << "] was written";
          return;
        }

  options.beta = -1.0;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx, a, &b, &c, &options));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx));
  ASSERT_CUDA(cudaMemcpy(out.data(), c_dev, out.size() * 2, cudaMemcpyDeviceToHost));
  double residual = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < p.n; ++j) {
      const double got = from_bits(at(r, j), p.bf16);
      residual += std::isfinite(got) ? got * got : 1e300;
    }
  EXPECT_LT(std::sqrt(residual / norm), p.bf16 ? 1e-2 : 2e-3) << "A B - C with C = A B (beta = -1)";
}

TEST(Sm90Schedule, SkewedAndEmptyRowsOnEveryVariant) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  const uint64_t seed = test_seed();
  SCOPED_TRACE("replay with BSRMM_TEST_SEED=" + std::to_string(seed));
  Random random(seed);
  const std::vector<std::string> variants = sm90_variants();
  ASSERT_FALSE(variants.empty()) << "the build has no sm90 variant";
  bsrmm_context_t ctx = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, 0}, &ctx));
  cudaStream_t streams[2] = {nullptr, nullptr};
  ASSERT_CUDA(cudaStreamCreate(&streams[0]));
  ASSERT_CUDA(cudaStreamCreate(&streams[1]));
  for (const std::string& variant : variants) {
    SCOPED_TRACE(variant);
    const BlockShape block = block_of(variant);
    const bool bf16 = variant.find("_bf16_") != std::string::npos;
    // M = 4096, N = 1536: 6 N tiles of 256 x 32..64 block rows (row tiles) or 1536 / TileN x
    // 4096 / Rows row groups (transposed: 12 x 16 to 3 x 64): more tiles than the 132 CTAs.
    // Cluster variants take N tiles in pairs: N = 1088 leaves 5 tiles, the last partial, so the
    // third pair's second CTA has no columns at all (its loads read zeros, its stores are dropped).
    const bool clustered = variant.find("_c2") != std::string::npos;
    const HostProblem p = skewed_problem(random, block, 4096, 1024, clustered ? 1088 : 1536, bf16);
    const bsrmm_dtype dtype = bf16 ? BSRMM_DTYPE_BF16 : BSRMM_DTYPE_F16;
    bsrmm_bsr_desc desc{p.m(), p.k(), block.height, block.width, int64_t(p.col_idx.size()), p.row_ptr.data(),
                        p.col_idx.data(), BSRMM_INDEX_I32, p.values.data(), dtype,
                        bsrmm_device{BSRMM_DEVICE_CPU, 0}};
    bsrmm_matrix_t a = nullptr;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx, &desc, 0, &a));
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx, variant.c_str()));
    void *b_dev = nullptr, *c_dev = nullptr;
    ASSERT_CUDA(cudaMalloc(&b_dev, p.b.size() * 2));
    ASSERT_CUDA(cudaMalloc(&c_dev, size_t((std::max(p.m(), p.k()) + 8) * p.n) * 2));
    ASSERT_CUDA(cudaMemcpy(b_dev, p.b.data(), p.b.size() * 2, cudaMemcpyHostToDevice));
    const std::vector<double> ref = reference(p, false);
    // The first multiply builds the list; the second, on another stream, reuses it.
    run_and_compare(ctx, a, p, false, ref, b_dev, c_dev, streams[0], variant);
    run_and_compare(ctx, a, p, false, ref, b_dev, c_dev, streams[1], variant);
    if (variant.find("_transposed") != std::string::npos) {
      // N = 1000: not whole 64-column chunks (B's slices then come a box per chunk, not one
      // box of chunks) and a partial last N tile for every tile width.
      HostProblem narrow = p;
      narrow.n = 1000;
      narrow.b.resize(size_t(p.k() * narrow.n));
      for (uint16_t& v : narrow.b) v = to_bits(random.uniform(-1, 1), bf16);
      ASSERT_CUDA(cudaMemcpy(b_dev, narrow.b.data(), narrow.b.size() * 2, cudaMemcpyHostToDevice));
      run_and_compare(ctx, a, narrow, false, reference(narrow, false), b_dev, c_dev, streams[0], variant);
    }
    if (variant.find("_f16_b64_transposed") != std::string::npos ||
        variant.find("_f16_b128_") != std::string::npos) {
      // A^T: K x M with the skew now in the columns; its B has M rows (the first p.k() * n
      // elements of p.b are reused as a fresh random M x N operand since M >= K here).
      HostProblem t = p;
      t.b.resize(size_t(p.m() * p.n));
      for (uint16_t& v : t.b) v = to_bits(random.uniform(-1, 1), bf16);
      void* bt_dev = nullptr;
      ASSERT_CUDA(cudaMalloc(&bt_dev, t.b.size() * 2));
      ASSERT_CUDA(cudaMemcpy(bt_dev, t.b.data(), t.b.size() * 2, cudaMemcpyHostToDevice));
      run_and_compare(ctx, a, t, true, reference(t, true), bt_dev, c_dev, streams[0], variant);
      cudaFree(bt_dev);
    }
    cudaFree(b_dev);
    cudaFree(c_dev);
    bsrmm_matrix_destroy(a);
  }
  bsrmm_context_set_stream(ctx, nullptr);
  cudaStreamDestroy(streams[0]);
  cudaStreamDestroy(streams[1]);
  bsrmm_context_destroy(ctx);
}

}  // namespace
}  // namespace bsrmm::test
