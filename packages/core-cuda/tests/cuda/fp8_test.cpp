// fp8 on a CUDA context (issue 27): the generic SIMT kernel's fp8 variants (A and B converted to
// f32 on load, correct, not fast), each forced by name and the heuristic's pick, against float64
// of the dequantised operands: every pairing of E4M3 / E5M2, every kind of A's scales, B's scale
// per tensor (host) or per column (device memory), C in f32, f16 and bf16 starting as NaN.
// op(A) = A^T too. Per-column scales in host memory are UNSUPPORTED on a GPU (the kernel reads
// them in place). The sm90 fp8 row tiles (TMA + fp8 wgmma, B column-major), each forced by name
// on its block shape, N past and inside a tile, every kind of A's scales, with beta, a bias and
// an activation.
#include "../support/dense_reference.hpp"
#include "../support/fp8_operands.hpp"
#include "gpu_test_support.hpp"

#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

const char* pair_name(bsrmm_dtype a, bsrmm_dtype b) {
  const bool a4 = a == BSRMM_DTYPE_FLOAT8_E4M3, b4 = b == BSRMM_DTYPE_FLOAT8_E4M3;
  return a4 ? (b4 ? "e4m3xe4m3" : "e4m3xe5m2") : (b4 ? "e5m2xe4m3" : "e5m2xe5m2");
}
const char* c_name(bsrmm_dtype c) {
  return c == BSRMM_DTYPE_F32 ? "f32" : c == BSRMM_DTYPE_F16 ? "f16" : "bf16";
}

struct GpuFp8Case {
  bsrmm_dtype a, b, c;
  bsrmm_scale_kind a_kind;
  bool per_column;
};

// The problem's shape and epilogue: A block_rows x block_cols blocks of bh x bw at `density`,
// B with n columns in `b_layout`.
struct Fp8Shape {
  int64_t block_rows = 3, block_cols = 2;
  int32_t bh = 48, bw = 64;  // odd block height
  double density = 0.6;
  int64_t n = 40;
  bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR;
  double beta = 0.0;
  bool bias = false;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
};

// One multiply on cuda:0 with `variant` forced ("" for the heuristic's pick); returns the status
// and, in `ran`, the variant that ran.
bsrmm_status run_case(const GpuFp8Case& k, const std::string& variant, uint64_t seed, bool device_scales = true,
                      bsrmm_op op_a = BSRMM_OP_NONE, const Fp8Shape& shape = {}, std::string* ran_out = nullptr) {
  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
  bsrmm_context_t raw = nullptr;
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu, &raw));
  ContextHandle ctx(raw);
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx.get(), variant.c_str()));
  Random rng(seed);
  HostBsr a = random_bsr(rng, shape.block_rows, shape.block_cols, shape.bh, shape.bw, shape.density, k.a);
  const std::vector<float> a_scales = random_scales(rng, scale_count(a, k.a_kind));
  const bsrmm_bsr_desc desc = a.desc();
  const bsrmm_scales a_scale_desc = scales_of(a_scales, k.a_kind);
  bsrmm_matrix_t matrix = nullptr;
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create_scaled(ctx.get(), &desc, &a_scale_desc, 0, &matrix));
  MatrixHandle a_handle(matrix);

  const bool transposed = op_a == BSRMM_OP_TRANSPOSE;
  const int64_t op_rows = transposed ? a.cols : a.rows;
  HostDense b(transposed ? a.rows : a.cols, shape.n, k.b, shape.b_layout);
  fill_random(b, rng);
  const std::vector<float> b_scales = random_scales(rng, k.per_column ? b.cols() : 1);
  DeviceBuffer b_buffer(b.bytes().size());
  b_buffer.upload(b.bytes().data(), b.bytes().size());
  DeviceBuffer b_scale_buffer(b_scales.size() * sizeof(float));
  b_scale_buffer.upload(b_scales.data(), b_scales.size() * sizeof(float));
  bsrmm_scales b_scale_desc = scales_of(b_scales, k.per_column ? BSRMM_SCALE_PER_COLUMN : BSRMM_SCALE_PER_TENSOR);
  if (k.per_column && device_scales) {
    b_scale_desc.data = static_cast<const float*>(b_scale_buffer.get());
    b_scale_desc.device = gpu;
  }
  HostDense c(op_rows, b.cols(), k.c);  // NaN everywhere: beta = 0 must not read it
  if (shape.beta != 0.0) fill_random(c, rng);
  const HostDense c_before = c;
  DeviceBuffer c_buffer(c.bytes().size());
  c_buffer.upload(c.bytes().data(), c.bytes().size());
  HostDense bias(op_rows, 1, k.c);
  fill_random(bias, rng);
  DeviceBuffer bias_buffer(bias.bytes().size());
  bias_buffer.upload(bias.bytes().data(), bias.bytes().size());
  std::vector<double> bias_values;
  for (int64_t i = 0; i < op_rows; ++i) bias_values.push_back(bias.get(i, 0));
  const bsrmm_dense b_desc{b_buffer.get(), b.rows(), b.cols(), b.ld(), shape.b_layout, k.b, gpu};
  bsrmm_dense c_desc{c_buffer.get(), c.rows(), c.cols(), c.ld(), BSRMM_LAYOUT_ROW_MAJOR, k.c, gpu};
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.b_scales = &b_scale_desc;
  options.op_a = op_a;
  options.beta = shape.beta;
  options.activation = shape.activation;
  if (shape.bias) options.bias = bias_buffer.get();
  const bsrmm_status status = bsrmm_matmul(ctx.get(), a_handle.get(), &b_desc, &c_desc, &options);
  if (status != BSRMM_STATUS_SUCCESS) return status;
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx.get()));
  c_buffer.download(c.bytes().data(), c.bytes().size());
  const std::string ran = bsrmm_context_last_variant(ctx.get());
  if (ran_out != nullptr) *ran_out = ran;
  EXPECT_NE(ran.find(pair_name(k.a, k.b)), std::string::npos) << ran;
  // The bound of the kernel that ran: the generic kernel sums in f32 (the dtype's default), the
  // sm90 fp8 row tiles on fp8 tensor cores, the widened variants on operands rounded to C's dtype.
  const double accumulation = ran.rfind("generic_", 0) == 0       ? 0.0
                              : ran.rfind("fp8_widened_", 0) == 0 ? fp8_widened_epsilon(k.c)
                                                                  : kFp8TensorCoreEpsilon;
  expect_matches(c, reference_matmul(dequantised(a, a_scales, k.a_kind), a.rows, a.cols, op_a,
                                     dequantised(b, b_scales), c_before, 1.0, shape.beta,
                                     shape.bias ? &bias_values : nullptr, shape.activation),
                 (variant.empty() ? "heuristic" : variant) + " ran " + ran, accumulation);
  return status;
}

// Every pairing of fp8 formats, C dtype, kind of A's scales and of B's (one, or per column).
template <typename Check>
void for_each_case(Check&& check) {
  for (bsrmm_dtype a : {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2})
    for (bsrmm_dtype b : {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2})
      for (bsrmm_dtype c : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16})
        for (bsrmm_scale_kind kind : {BSRMM_SCALE_PER_TENSOR, BSRMM_SCALE_PER_BLOCK, BSRMM_SCALE_PER_BLOCK_ROW})
          for (bool per_column : {false, true}) {
            SCOPED_TRACE(std::string(per_column ? "per-column B scales" : "one B scale") + ", A scales kind " +
                         std::to_string(kind));
            check(GpuFp8Case{a, b, c, kind, per_column});
          }
}

TEST(GpuFp8, EveryGenericVariantMatchesFloat64) {
  BSRMM_REQUIRE_GPU();
  uint64_t seed = 2700;
  for_each_case([&](const GpuFp8Case& k) {
    const std::string variant =
        std::string("generic_") + pair_name(k.a, k.b) + "_" + c_name(k.c) + "_simt_m64n64k16";
    SCOPED_TRACE(variant);
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, variant, seed++));
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, "", seed++));
  });
}

// fp8 widened onto the tensor-core kernels, each variant forced: every pairing, C in bf16 and
// f32, every kind of scales, on blocks of 16 x 16 (B row-major, N = 40) and 32 x 16 (B
// column-major, N = 37: the widened B's leading dimension is padded, with beta, a bias and
// gelu); the heuristic's pick for each, and for C in f16 (not widened: the generic kernel).
TEST(GpuFp8, WidenedVariantsMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  Fp8Shape square;
  square.block_rows = 5, square.block_cols = 4, square.bh = 16, square.bw = 16, square.n = 40;
  Fp8Shape tall = square;
  tall.bh = 32, tall.n = 37, tall.b_layout = BSRMM_LAYOUT_COL_MAJOR;
  tall.beta = 0.5, tall.bias = true, tall.activation = BSRMM_ACTIVATION_GELU;
  uint64_t seed = 2900;
  for (const Fp8Shape& shape : {square, tall}) {
    SCOPED_TRACE("blocks " + std::to_string(shape.bh) + "x" + std::to_string(shape.bw));
    for_each_case([&](const GpuFp8Case& k) {
      const std::string variant =
          std::string("fp8_widened_") + pair_name(k.a, k.b) + "_" + c_name(k.c) + "_via_" + c_name(k.c);
      SCOPED_TRACE(variant);
      if (k.c != BSRMM_DTYPE_F16) {
        EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, variant, seed++, true, BSRMM_OP_NONE, shape));
      }
      std::string ran;
      EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, "", seed++, true, BSRMM_OP_NONE, shape, &ran));
      if (k.c == BSRMM_DTYPE_F16) EXPECT_EQ(ran.rfind("fp8_widened_", 0), std::string::npos) << ran;
    });
  }
}

// The heuristic takes the widened variants where only the SIMT kernel took fp8 before (blocks
// of 16 and 32, N in the thousands), and the Hopper fp8 row tiles where those apply.
TEST(GpuFp8, HeuristicWidensSmallBlocksOntoTensorCores) {
  BSRMM_REQUIRE_GPU();
  std::string why;
  const bool sm90 = hopper(&why);
  for (int32_t block : {16, 32, 64}) {
    Fp8Shape shape;
    shape.block_rows = 8, shape.block_cols = 8, shape.bh = block, shape.bw = block, shape.n = 256;
    shape.b_layout = BSRMM_LAYOUT_COL_MAJOR, shape.density = 0.5;
    const GpuFp8Case k{BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_BF16,
                       BSRMM_SCALE_PER_BLOCK, false};
    SCOPED_TRACE("block " + std::to_string(block));
    std::string ran;
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, "", 3000 + uint64_t(block), true, BSRMM_OP_NONE, shape, &ran));
    const std::string expected_prefix = block == 64 && sm90 ? "sm90_tma_wgmma_e4m3xe4m3" : "fp8_widened_";
    EXPECT_EQ(ran.rfind(expected_prefix, 0), 0u) << ran;
  }
}

// op(A) = A^T: the plan's A^T (blocks transposed on the device) keeps each block's scale.
TEST(GpuFp8, TransposedAKeepsEachBlocksScale) {
  BSRMM_REQUIRE_GPU();
  uint64_t seed = 2800;
  for (bsrmm_scale_kind kind : {BSRMM_SCALE_PER_TENSOR, BSRMM_SCALE_PER_BLOCK, BSRMM_SCALE_PER_BLOCK_ROW}) {
    const GpuFp8Case k{BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2, BSRMM_DTYPE_BF16, kind, true};
    SCOPED_TRACE("A scales kind " + std::to_string(kind));
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, "", seed++, true, BSRMM_OP_TRANSPOSE));
  }
}

// The sm90 fp8 row tiles: the name after the operands ("b128_rowtile_n256_bcol") and the
// block shape each takes.
struct Fp8Tile {
  const char* name;
  int32_t bh, bw;
};
constexpr Fp8Tile kFp8Tiles[] = {{"b128_rowtile_n256_bcol", 128, 128},   {"b128_rowtile_n128_bcol", 128, 128},
                                 {"b64_rowtile_n512_bcol", 64, 64},       {"b64_rowtile_n256_bcol", 64, 64},
                                 {"b64_rowtile_n128_bcol", 64, 64},       {"b128x64_rowtile_n256_bcol", 128, 64},
                                 {"b64x128_rowtile_n512_bcol", 64, 128}};

std::string sm90_fp8_variant(const GpuFp8Case& k, const Fp8Tile& tile) {
  return std::string("sm90_tma_wgmma_") + pair_name(k.a, k.b) + "_" + c_name(k.c) + "_" + tile.name;
}

// A problem of `block_rows` x 4 blocks of the tile's shape at density 0.45, B column-major
// with n columns, a bias; the caller sets the rest.
Fp8Shape fp8_tile_shape(const Fp8Tile& tile, int64_t block_rows, int64_t n) {
  Fp8Shape shape;
  shape.block_rows = block_rows;
  shape.block_cols = 4;
  shape.bh = tile.bh;
  shape.bw = tile.bw;
  shape.density = 0.45;
  shape.n = n;
  shape.b_layout = BSRMM_LAYOUT_COL_MAJOR;
  shape.bias = true;
  return shape;
}

// Each sm90 fp8 row tile on its block shape (5 block rows, N = 40: one tile wide, rows with no
// block), every pairing it is built for, every kind of A's scales, B's one scale or one per
// column, beta and an activation on some; forced, and the heuristic's pick on the same problem.
TEST(GpuFp8, Sm90RowTilesMatchFloat64) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  const GpuFp8Case pairs[] = {
      {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_BF16, BSRMM_SCALE_PER_BLOCK, false},
      {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2, BSRMM_DTYPE_BF16, BSRMM_SCALE_PER_BLOCK, false},
      {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_F16, BSRMM_SCALE_PER_BLOCK, false}};
  uint64_t seed = 2900;
  for (const Fp8Tile& tile : kFp8Tiles)
    for (GpuFp8Case k : pairs)
      for (bsrmm_scale_kind kind : {BSRMM_SCALE_PER_TENSOR, BSRMM_SCALE_PER_BLOCK, BSRMM_SCALE_PER_BLOCK_ROW}) {
        k.a_kind = kind;
        k.per_column = kind != BSRMM_SCALE_PER_TENSOR;
        Fp8Shape shape = fp8_tile_shape(tile, 5, 40);
        shape.beta = kind == BSRMM_SCALE_PER_BLOCK_ROW ? -1.5 : 0.0;
        shape.activation = kind == BSRMM_SCALE_PER_BLOCK ? BSRMM_ACTIVATION_SILU : BSRMM_ACTIVATION_NONE;
        const std::string variant = sm90_fp8_variant(k, tile);
        SCOPED_TRACE(variant + " A scales kind " + std::to_string(kind));
        EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, variant, seed++, true, BSRMM_OP_NONE, shape));
        EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, "", seed++, true, BSRMM_OP_NONE, shape));
      }
}

// More tiles than SMs for every tile width (150 block rows of 64 or 80 of 128, N = 392: past
// several N tiles, not a multiple of any), so each persistent CTA runs several tiles through
// the ring; per-block and per-column scales, beta, bias and GELU. e4m3 x e4m3 into bf16 only:
// the float64 reference takes seconds a case on the host.
TEST(GpuFp8, Sm90RowTilesManyTilesPerCta) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  const GpuFp8Case k{BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_BF16, BSRMM_SCALE_PER_BLOCK, true};
  uint64_t seed = 3000;
  for (const Fp8Tile& tile : kFp8Tiles) {
    Fp8Shape shape = fp8_tile_shape(tile, tile.bh == 64 ? 150 : 80, 392);
    shape.beta = 0.5;
    shape.activation = BSRMM_ACTIVATION_GELU;
    const std::string variant = sm90_fp8_variant(k, tile);
    SCOPED_TRACE(variant);
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, variant, seed++, true, BSRMM_OP_NONE, shape));
  }
}

TEST(GpuFp8, PerColumnScalesInHostMemoryAreUnsupported) {
  BSRMM_REQUIRE_GPU();
  const GpuFp8Case k{BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_BF16,
                     BSRMM_SCALE_PER_BLOCK, true};
  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, run_case(k, "", 27, false));
}

}  // namespace
}  // namespace bsrmm::test
