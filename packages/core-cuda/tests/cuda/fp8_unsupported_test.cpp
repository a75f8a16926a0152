// fp8 on a CUDA context (issue 27): no CUDA kernel takes fp8 yet, so the matrix is created (its
// values and scales copied to the device) but a multiply is a clear UNSUPPORTED naming the
// backend, forced variants included, and C is left as it was.
#include "../support/fp8_operands.hpp"
#include "gpu_test_support.hpp"

#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

TEST(GpuFp8, MultiplyIsUnsupportedAndLeavesCAlone) {
  BSRMM_REQUIRE_GPU();
  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
  bsrmm_context_t raw = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu, &raw));
  ContextHandle ctx(raw);
  Random rng(27);
  HostBsr a = random_bsr(rng, 2, 2, 64, 64, 1.0, BSRMM_DTYPE_FLOAT8_E4M3);
  const std::vector<float> a_scales = random_scales(rng, a.nnzb());
  const bsrmm_bsr_desc desc = a.desc();
  const bsrmm_scales scales = scales_of(a_scales, BSRMM_SCALE_PER_BLOCK);
  bsrmm_matrix_t matrix = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create_scaled(ctx.get(), &desc, &scales, 0, &matrix));
  MatrixHandle a_handle(matrix);

  HostDense b(128, 32, BSRMM_DTYPE_FLOAT8_E4M3);
  fill_random(b, rng);
  DeviceBuffer b_buffer(b.bytes().size());
  b_buffer.upload(b.bytes().data(), b.bytes().size());
  std::vector<float> c_host(128 * 32, 7.0f);
  DeviceBuffer c_buffer(c_host.size() * sizeof(float));
  c_buffer.upload(c_host.data(), c_host.size() * sizeof(float));
  const bsrmm_dense b_desc{b_buffer.get(), 128, 32, 32, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_FLOAT8_E4M3, gpu};
  bsrmm_dense c_desc{c_buffer.get(), 128, 32, 32, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, gpu};
  const std::vector<float> one{1.0f};
  const bsrmm_scales b_scales = scales_of(one, BSRMM_SCALE_PER_TENSOR);
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.b_scales = &b_scales;

  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, bsrmm_matmul(ctx.get(), a_handle.get(), &b_desc, &c_desc, &options));
  EXPECT_NE(std::string(bsrmm_last_error()).find("the CUDA backend does not multiply fp8 operands yet"),
            std::string::npos)
      << bsrmm_last_error();
  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, bsrmm_tune(ctx.get(), a_handle.get(), &b_desc, &c_desc, &options));
  for (int32_t i = 0; i < bsrmm_variant_count(); ++i) {
    const std::string name = bsrmm_variant_name(i);
    if (name.rfind("cpu_", 0) == 0) continue;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx.get(), name.c_str()));
    SCOPED_TRACE(name);
    EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, bsrmm_matmul(ctx.get(), a_handle.get(), &b_desc, &c_desc, &options));
  }
  std::vector<float> after(c_host.size());
  c_buffer.download(after.data(), after.size() * sizeof(float));
  EXPECT_EQ(after, c_host);
}

}  // namespace
}  // namespace bsrmm::test
