// GPU reliability (CUDA builds; each test skips with bsrmm's reason when no device is usable):
//   - out of device memory: matrices are created until cudaMalloc fails, which must come back as
//     OUT_OF_MEMORY naming the allocation; after freeing them the same context creates and
//     multiplies correctly;
//   - threads sharing one CUDA context and one matrix, and threads with their own contexts and
//     streams on one matrix, every result checked against the float64 reference.
#if BSRMM_WITH_CUDA

#include "stress_support.hpp"
#include "support/device_buffer.hpp"
#include "support/gpu_presence.hpp"

#include <atomic>
#include <cstdio>
#include <vector>

namespace bsrmm::test {
namespace {

constexpr int gpu_threads = 8;
constexpr std::chrono::milliseconds gpu_budget(3000);

// One checked multiply with device B and C, on `ctx`'s stream.
void checked_gpu_multiply(Context& ctx, const Matrix& a, const HostBsr& host, bsrmm_op op, int64_t n,
                          uint64_t seed, const std::string& what) {
  Random rng(seed);
  const bool t = op == BSRMM_OP_TRANSPOSE;
  const int64_t m = t ? host.cols : host.rows, k = t ? host.rows : host.cols;
  HostDense b(k, n, host.dtype, BSRMM_LAYOUT_ROW_MAJOR, 8);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(host.dtype, rng.uniform(-1, 1)));
  HostDense c(m, n, host.dtype, BSRMM_LAYOUT_ROW_MAJOR, 8);
  const HostDense c_before = c;
  const DeviceBuffer db(b.bytes()), dc(c.bytes());
  ASSERT_TRUE(db.get() && dc.get()) << what << ": cudaMalloc failed";
  bsrmm_dense bd = b.desc(), cd = c.desc();
  bd.data = db.get();
  cd.data = dc.get();
  bd.device = cd.device = cuda(0);
  bsrmm_matmul_options options = matmul_options();
  options.op_a = op;
  const bsrmm_status status = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, &options);
  ASSERT_EQ(status, BSRMM_STATUS_SUCCESS) << what << ": " << bsrmm_last_error();
  ASSERT_EQ(bsrmm_context_synchronize(ctx.get()), BSRMM_STATUS_SUCCESS) << what << ": " << bsrmm_last_error();
  ASSERT_TRUE(dc.download(c.bytes())) << what;
  const Expected expected = reference_matmul(host.to_dense(), host.rows, host.cols, op, b, c_before, 1.0, 0.0,
                                             nullptr, BSRMM_ACTIVATION_NONE);
  expect_matches(c, expected, what);
  EXPECT_TRUE(c.padding_untouched()) << what << ": C's padding was written";
}

TEST(CudaFaults, OutOfDeviceMemoryIsReportedAndRecovered) {
  BSRMM_REQUIRE_GPU();
  Context ctx(cuda(0));
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  // 512 MiB of f16 values per matrix, from one host array.
  const int32_t blocks = 4096;
  std::vector<int32_t> row_ptr{0, blocks}, col_idx(blocks);
  for (int32_t i = 0; i < blocks; ++i) col_idx[static_cast<size_t>(i)] = i;
  std::vector<uint16_t> values(size_t{blocks} * 256 * 256, 0x3c00);  // 1.0
  const bsrmm_bsr_desc desc{256, int64_t{blocks} * 256, 256, 256, blocks, row_ptr.data(), col_idx.data(),
                            BSRMM_INDEX_I32, values.data(), BSRMM_DTYPE_F16, cpu()};
  std::vector<bsrmm_matrix_t> held;
  bsrmm_status status = BSRMM_STATUS_SUCCESS;
  while (held.size() < 1024) {  // 512 GiB: more than any GPU has
    bsrmm_matrix_t m = nullptr;
    status = bsrmm_matrix_create(ctx.get(), &desc, 0, &m);
    if (status != BSRMM_STATUS_SUCCESS) {
      EXPECT_EQ(m, nullptr);
      break;
    }
    held.push_back(m);
  }
  const std::string message = bsrmm_last_error();
  EXPECT_EQ(status, BSRMM_STATUS_OUT_OF_MEMORY) << message;
  EXPECT_NE(message.find("cudaMalloc"), std::string::npos) << message;
  std::printf("[ fault    ] device memory ran out after %zu matrices of 512 MiB: %s\n", held.size(), message.c_str());
  for (bsrmm_matrix_t m : held) bsrmm_matrix_destroy(m);
  held.clear();

  bsrmm_matrix_t again = nullptr;
  EXPECT_EQ(bsrmm_matrix_create(ctx.get(), &desc, 0, &again), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  bsrmm_matrix_destroy(again);
  Random rng(3);
  const HostBsr host = random_bsr(rng, 4, 4, 16, 16, 0.5, BSRMM_DTYPE_F16);
  const Matrix a = matrix_of(ctx, host);
  checked_gpu_multiply(ctx, a, host, BSRMM_OP_NONE, 64, 5, "multiply after running out of device memory");
}

TEST(CudaConcurrency, ThreadsShareOneContextAndOneMatrix) {
  BSRMM_REQUIRE_GPU();
  Context ctx(cuda(0));
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  Random rng(17);
  const HostBsr host = random_bsr(rng, 8, 6, 16, 16, 0.4, BSRMM_DTYPE_F16);
  const Matrix a = matrix_of(ctx, host);
  std::atomic<long> multiplies{0};
  const Budget budget(gpu_budget, 3);
  on_threads(gpu_threads, [&](int w) {
    multiplies += budget.rounds([&](int r) {
      checked_gpu_multiply(ctx, a, host, (w + r) % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE, 16 * (1 + w % 4),
                           100 * r + w, "shared context, worker " + std::to_string(w) + " round " + std::to_string(r));
    });
  });
  std::printf("[ stress   ] CUDA, one context and one matrix: %d threads, %ld checked multiplies\n", gpu_threads,
              multiplies.load());
}

TEST(CudaConcurrency, ThreadsWithOwnContextsAndStreamsShareOneMatrix) {
  BSRMM_REQUIRE_GPU();
  Context owner(cuda(0));
  Random rng(19);
  const HostBsr host = random_bsr(rng, 6, 8, 32, 16, 0.5, BSRMM_DTYPE_BF16);
  const Matrix a = matrix_of(owner, host);
  std::atomic<long> multiplies{0};
  const Budget budget(gpu_budget, 3);
  on_threads(gpu_threads, [&](int w) {
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    {
      Context ctx(cuda(0));
      ctx.set_tuning_mode(BSRMM_TUNING_OFF);
      ctx.set_stream(stream);
      multiplies += budget.rounds([&](int r) {
        checked_gpu_multiply(ctx, a, host, (w + r) % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE, 24 + 8 * w,
                             300 * r + w, "own stream, worker " + std::to_string(w) + " round " + std::to_string(r));
      });
    }
    cudaStreamDestroy(stream);
  });
  std::printf("[ stress   ] CUDA, per-thread contexts and streams: %d threads, %ld checked multiplies\n", gpu_threads,
              multiplies.load());
}

}  // namespace
}  // namespace bsrmm::test

#endif  // BSRMM_WITH_CUDA
