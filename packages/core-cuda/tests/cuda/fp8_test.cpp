// fp8 on a CUDA context (issue 27): the generic SIMT kernel's fp8 variants (A and B converted to
// f32 on load, correct, not fast), each forced by name and the heuristic's pick, against float64
// of the dequantised operands: every pairing of E4M3 / E5M2, every kind of A's scales, B's scale
// per tensor (host) or per column (device memory), C in f32, f16 and bf16 starting as NaN.
// op(A) = A^T too. Per-column scales in host memory are UNSUPPORTED on a GPU (the kernel reads
// them in place).
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

// One multiply on cuda:0 with `variant` forced ("" for the heuristic's pick); returns the status.
bsrmm_status run_case(const GpuFp8Case& k, const std::string& variant, uint64_t seed, bool device_scales = true,
                      bsrmm_op op_a = BSRMM_OP_NONE) {
  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
  bsrmm_context_t raw = nullptr;
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu, &raw));
  ContextHandle ctx(raw);
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx.get(), variant.c_str()));
  Random rng(seed);
  HostBsr a = random_bsr(rng, 3, 2, 48, 64, 0.6, k.a);  // 144 x 128, odd block height
  const std::vector<float> a_scales = random_scales(rng, scale_count(a, k.a_kind));
  const bsrmm_bsr_desc desc = a.desc();
  const bsrmm_scales a_scale_desc = scales_of(a_scales, k.a_kind);
  bsrmm_matrix_t matrix = nullptr;
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create_scaled(ctx.get(), &desc, &a_scale_desc, 0, &matrix));
  MatrixHandle a_handle(matrix);

  const bool transposed = op_a == BSRMM_OP_TRANSPOSE;
  const int64_t op_rows = transposed ? a.cols : a.rows;
  HostDense b(transposed ? a.rows : a.cols, 40, k.b);
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
  DeviceBuffer c_buffer(c.bytes().size());
  c_buffer.upload(c.bytes().data(), c.bytes().size());
  const bsrmm_dense b_desc{b_buffer.get(), b.rows(), b.cols(), b.ld(), BSRMM_LAYOUT_ROW_MAJOR, k.b, gpu};
  bsrmm_dense c_desc{c_buffer.get(), c.rows(), c.cols(), c.ld(), BSRMM_LAYOUT_ROW_MAJOR, k.c, gpu};
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.b_scales = &b_scale_desc;
  options.op_a = op_a;
  const bsrmm_status status = bsrmm_matmul(ctx.get(), a_handle.get(), &b_desc, &c_desc, &options);
  if (status != BSRMM_STATUS_SUCCESS) return status;
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx.get()));
  c_buffer.download(c.bytes().data(), c.bytes().size());
  const HostDense no_c(op_rows, b.cols(), k.c);
  expect_matches(c, reference_matmul(dequantised(a, a_scales, k.a_kind), a.rows, a.cols, op_a,
                                     dequantised(b, b_scales), no_c, 1.0, 0.0, nullptr, BSRMM_ACTIVATION_NONE),
                 variant.empty() ? "heuristic" : variant);
  const std::string ran = bsrmm_context_last_variant(ctx.get());
  EXPECT_NE(ran.find(pair_name(k.a, k.b)), std::string::npos) << ran;
  return status;
}

TEST(GpuFp8, EveryGenericVariantMatchesFloat64) {
  BSRMM_REQUIRE_GPU();
  uint64_t seed = 2700;
  for (bsrmm_dtype a : {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2})
    for (bsrmm_dtype b : {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2})
      for (bsrmm_dtype c : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16})
        for (bsrmm_scale_kind kind : {BSRMM_SCALE_PER_TENSOR, BSRMM_SCALE_PER_BLOCK, BSRMM_SCALE_PER_BLOCK_ROW})
          for (bool per_column : {false, true}) {
            const GpuFp8Case k{a, b, c, kind, per_column};
            const std::string variant =
                std::string("generic_") + pair_name(a, b) + "_" + c_name(c) + "_simt_m64n64k16";
            SCOPED_TRACE(variant + (per_column ? " per-column B scales" : " one B scale") +
                         " A scales kind " + std::to_string(kind));
            EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, variant, seed++));
            EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, run_case(k, "", seed++));
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

TEST(GpuFp8, PerColumnScalesInHostMemoryAreUnsupported) {
  BSRMM_REQUIRE_GPU();
  const GpuFp8Case k{BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_BF16,
                     BSRMM_SCALE_PER_BLOCK, true};
  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, run_case(k, "", 27, false));
}

}  // namespace
}  // namespace bsrmm::test
