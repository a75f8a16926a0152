// Multiplies inside a CUDA graph capture, as torch.compile's "reduce-overhead" mode or a serving
// loop makes them: a cold call (its plan still to build) fails with UNSUPPORTED saying what to
// run first, without invalidating the caller's capture; a warmed call is captured, and the
// graph's replays compute the product (checked against float64, C poisoned before each replay).
// Tuning never measures inside a capture.
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"
#include "gpu_test_support.hpp"

#include <memory>
#include <string>

namespace bsrmm::test {
namespace {

const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};

class GraphCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    BSRMM_REQUIRE_GPU();
    bsrmm_context_t ctx = nullptr;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu, &ctx));
    ctx_.reset(ctx);
    ASSERT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_stream(ctx_.get(), stream_));
    host_ = random_bsr(rng_, 12, 10, 16, 16, 0.4, BSRMM_DTYPE_F16);
    bsrmm_bsr_desc desc = host_.desc();
    bsrmm_matrix_t created = nullptr;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx_.get(), &desc, 0, &created));
    matrix_.reset(created);
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // Operands of op(A) B with N = 48 on the device; c NaN-poisoned.
  struct Operands {
    Operands(int64_t m, int64_t k, int64_t n, bsrmm_dtype dtype) : b(k, n, dtype), c(m, n, dtype) {}
    HostDense b, c;
    DeviceBuffer b_device, c_device;
    bsrmm_dense bd{}, cd{};
  };
  std::unique_ptr<Operands> operands(bsrmm_op op) {
    const bool t = op == BSRMM_OP_TRANSPOSE;
    const int64_t m = t ? host_.cols : host_.rows, k = t ? host_.rows : host_.cols, n = 48;
    auto o = std::make_unique<Operands>(m, k, n, host_.dtype);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) o->b.set(i, j, round_to(host_.dtype, rng_.uniform(-1, 1)));
    o->b_device = DeviceBuffer(o->b.bytes());
    o->c_device = DeviceBuffer(o->c.bytes());
    o->bd = bsrmm_dense{o->b_device.get(), k, n, n, BSRMM_LAYOUT_ROW_MAJOR, host_.dtype, gpu};
    o->cd = bsrmm_dense{o->c_device.get(), m, n, n, BSRMM_LAYOUT_ROW_MAJOR, host_.dtype, gpu};
    return o;
  }
  void poison(Operands& o) {
    ASSERT_CUDA(cudaMemsetAsync(o.c_device.get(), 0xff, o.c.bytes().size(), stream_));  // NaN
  }
  void expect_product(Operands& o, bsrmm_op op, const std::string& what) {
    ASSERT_CUDA(cudaStreamSynchronize(stream_));
    ASSERT_TRUE(o.c_device.download(o.c.bytes()));
    const Expected want = reference_matmul(host_.to_dense(), host_.rows, host_.cols, op, o.b, o.c, 1.0,
                                           0.0, nullptr, BSRMM_ACTIVATION_NONE);
    expect_matches(o.c, want, what + " (seed " + std::to_string(seed_) + ")");
  }

  ContextHandle ctx_;
  MatrixHandle matrix_;
  cudaStream_t stream_ = nullptr;
  uint64_t seed_ = test_seed();
  Random rng_{seed_};
  HostBsr host_;
};

TEST_F(GraphCapture, AColdCallSaysWhatToRunFirstAndLeavesTheCaptureIntact) {
  auto o = operands(BSRMM_OP_TRANSPOSE);  // A^T: its transposed copy is built on first use
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.op_a = BSRMM_OP_TRANSPOSE;
  ASSERT_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, bsrmm_matmul(ctx_.get(), matrix_.get(), &o->bd, &o->cd, &options));
  const std::string message = bsrmm_last_error();
  EXPECT_NE(message.find("captured into a CUDA graph"), std::string::npos) << message;
  EXPECT_NE(message.find("once before capturing"), std::string::npos) << message;
  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, bsrmm_tune(ctx_.get(), matrix_.get(), &o->bd, &o->cd, &options));
  cudaGraph_t graph = nullptr;
  ASSERT_CUDA(cudaStreamEndCapture(stream_, &graph));  // not invalidated by the refused calls
  ASSERT_CUDA(cudaGraphDestroy(graph));
  // Out of the capture the same call builds its plan and runs.
  poison(*o);
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx_.get(), matrix_.get(), &o->bd, &o->cd, &options));
  expect_product(*o, BSRMM_OP_TRANSPOSE, "after the capture");
}

TEST_F(GraphCapture, AWarmedCallIsCapturedAndEveryReplayComputesTheProduct) {
  for (bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE}) {
    auto o = operands(op);
    bsrmm_matmul_options options = bsrmm_matmul_options_default();
    options.op_a = op;
    // AUTO (the default): the warm-up builds the plan; the captured call must not measure.
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx_.get(), matrix_.get(), &o->bd, &o->cd, &options));
    ASSERT_CUDA(cudaStreamSynchronize(stream_));
    ASSERT_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx_.get(), matrix_.get(), &o->bd, &o->cd, &options));
    cudaGraph_t graph = nullptr;
    ASSERT_CUDA(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 3; ++replay) {
      poison(*o);
      ASSERT_CUDA(cudaGraphLaunch(exec, stream_));
      expect_product(*o, op, std::string(op == BSRMM_OP_TRANSPOSE ? "A^T" : "A") + " replay " +
                                 std::to_string(replay) + ", " + bsrmm_context_last_variant(ctx_.get()));
    }
    ASSERT_CUDA(cudaGraphExecDestroy(exec));
    ASSERT_CUDA(cudaGraphDestroy(graph));
  }
}

}  // namespace
}  // namespace bsrmm::test
