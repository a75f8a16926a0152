// A^T's values on a GPU (bsrmm_matrix_transpose_values, bsrmm_matrix_transpose), against the
// CPU's, which tests/matrix/transpose_test.cpp checks against A's dense form: bit for bit, into
// poisoned memory, for each kernel (small blocks; shared-memory tiles from 32 x 32 up, partial
// tiles included; 16-byte tiles for sides that are multiples of 64, and the element-wise tiles
// for the same blocks when out is not 16-byte aligned), every element width, skewed patterns; and inside a CUDA graph capture (cold:
// refused, saying what to run first; warm: captured and replayed).
#include "../support/random.hpp"
#include "gpu_test_support.hpp"

#include <string>
#include <tuple>
#include <vector>

namespace bsrmm::test {
namespace {

const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
const bsrmm_device cpu{BSRMM_DEVICE_CPU, 0};

MatrixHandle create(bsrmm_context_t ctx, HostBsr& host) {
  bsrmm_bsr_desc desc = host.desc();
  bsrmm_matrix_t created = nullptr;
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx, &desc, 0, &created));
  return MatrixHandle(created);
}

// A random pattern with one full block row and one empty one: rows of A^T of every length.
HostBsr skewed(Random& rng, int64_t block_rows, int64_t block_cols, int32_t bh, int32_t bw,
               bsrmm_dtype dtype) {
  HostBsr a = random_bsr(rng, block_rows, block_cols, bh, bw, 0.3, dtype);
  HostBsr out = a;
  out.row_ptr = {0};
  out.col_idx.clear();
  for (int64_t r = 0; r < block_rows; ++r) {
    if (r == 0) {
      for (int64_t c = 0; c < block_cols; ++c) out.col_idx.push_back(c);
    } else if (r != 1) {
      for (int64_t p = a.row_ptr[static_cast<size_t>(r)]; p < a.row_ptr[static_cast<size_t>(r) + 1]; ++p)
        out.col_idx.push_back(a.col_idx[static_cast<size_t>(p)]);
    }
    out.row_ptr.push_back(out.nnzb());
  }
  out.values.assign(static_cast<size_t>(out.nnzb() * out.block_elements()) * dtype_size(dtype), 0);
  return with_fresh_values(out, rng);
}

using Case = std::tuple<bsrmm_dtype, int32_t, int32_t>;

class GpuTranspose : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    BSRMM_REQUIRE_GPU();
    bsrmm_context_t ctx = nullptr;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu, &ctx));
    ctx_.reset(ctx);
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(cpu, &ctx));
    host_ctx_.reset(ctx);
  }
  ContextHandle ctx_, host_ctx_;
  uint64_t seed_ = test_seed();
  Random rng_{seed_};
};

TEST_P(GpuTranspose, ValuesMatchTheCpusBitForBit) {
  const auto [dtype, bh, bw] = GetParam();
  HostBsr a = skewed(rng_, 7, 9, bh, bw, dtype);
  const std::string what = std::string(dtype_label(dtype)) + " " + std::to_string(bh) + "x" +
                           std::to_string(bw) + ", seed " + std::to_string(seed_);
  MatrixHandle on_gpu = create(ctx_.get(), a), on_host = create(host_ctx_.get(), a);
  std::vector<unsigned char> want(a.values.size()), got(a.values.size(), 0xff);
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_transpose_values(host_ctx_.get(), on_host.get(), want.data()));

  DeviceBuffer out(got);  // poisoned
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_transpose_values(ctx_.get(), on_gpu.get(), out.get()));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx_.get()));
  ASSERT_TRUE(out.download(got));
  EXPECT_EQ(got, want) << what;

  // One element off 16-byte alignment: blocks of 64-multiples leave the 16-byte kernel for the
  // element-wise tiles, with the same result.
  const std::size_t element = dtype_size(dtype);
  DeviceBuffer shifted(a.values.size() + element);
  std::vector<unsigned char> poisoned(a.values.size() + element, 0xff), got_shifted(a.values.size() + element);
  ASSERT_TRUE(shifted.upload(poisoned));
  void* off = static_cast<unsigned char*>(shifted.get()) + element;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_transpose_values(ctx_.get(), on_gpu.get(), off));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx_.get()));
  ASSERT_TRUE(shifted.download(got_shifted));
  EXPECT_EQ(std::vector<unsigned char>(got_shifted.begin() + long(element), got_shifted.end()), want)
      << what << " (out not 16-byte aligned)";

  // A^T as a matrix on the GPU stores the same values.
  bsrmm_matrix_t transposed = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_transpose(ctx_.get(), on_gpu.get(), &transposed));
  MatrixHandle at(transposed);
  std::vector<unsigned char> stored(a.values.size(), 0xff);
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_export(at.get(), BSRMM_INDEX_I64, nullptr, nullptr, stored.data()));
  EXPECT_EQ(stored, want) << what << " (bsrmm_matrix_transpose)";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [dtype, bh, bw] = info.param;
  return std::string(dtype_label(dtype)) + "_" + std::to_string(bh) + "x" + std::to_string(bw);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuTranspose,
    ::testing::Values(Case{BSRMM_DTYPE_F64, 2, 2}, Case{BSRMM_DTYPE_F32, 3, 5}, Case{BSRMM_DTYPE_F16, 16, 16},
                      Case{BSRMM_DTYPE_BF16, 32, 32}, Case{BSRMM_DTYPE_BF16, 128, 128},
                      Case{BSRMM_DTYPE_F16, 64, 128}, Case{BSRMM_DTYPE_F16, 128, 64},
                      Case{BSRMM_DTYPE_F32, 96, 32}, Case{BSRMM_DTYPE_F32, 64, 64},
                      Case{BSRMM_DTYPE_F64, 64, 128}, Case{BSRMM_DTYPE_F64, 33, 40},
                      Case{BSRMM_DTYPE_F16, 40, 72}, Case{BSRMM_DTYPE_F32, 31, 64}),
    case_name);

TEST_F(GpuTranspose, CapturedIntoACudaGraphOnceWarm) {
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_stream(ctx_.get(), stream));
  HostBsr a = skewed(rng_, 6, 5, 64, 64, BSRMM_DTYPE_BF16);
  MatrixHandle on_gpu = create(ctx_.get(), a), on_host = create(host_ctx_.get(), a);
  std::vector<unsigned char> want(a.values.size()), got(a.values.size());
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_transpose_values(host_ctx_.get(), on_host.get(), want.data()));
  DeviceBuffer out(a.values.size());

  // Cold: the structure's transposition needs an upload and a wait, which a capture cannot hold.
  ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, bsrmm_matrix_transpose_values(ctx_.get(), on_gpu.get(), out.get()));
  EXPECT_NE(std::string(bsrmm_last_error()).find("captur"), std::string::npos) << bsrmm_last_error();
  cudaGraph_t graph = nullptr;
  ASSERT_CUDA(cudaStreamEndCapture(stream, &graph));  // not invalidated by the refused call
  ASSERT_CUDA(cudaGraphDestroy(graph));

  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_transpose_values(ctx_.get(), on_gpu.get(), out.get()));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_transpose_values(ctx_.get(), on_gpu.get(), out.get()));
  ASSERT_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaMemsetAsync(out.get(), 0xff, a.values.size(), stream));
  ASSERT_CUDA(cudaGraphLaunch(exec, stream));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_TRUE(out.download(got));
  EXPECT_EQ(got, want) << "replayed, seed " << seed_;
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_stream(ctx_.get(), nullptr));
  ASSERT_CUDA(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace bsrmm::test
