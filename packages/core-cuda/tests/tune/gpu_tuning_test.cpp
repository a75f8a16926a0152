// Tuning on a GPU (skipped, with bsrmm's reason, where there is none): the candidates are the
// CUDA variants that support the operands, timed with CUDA events on the context's stream. Each
// case checks every element of C against float64 with random C and beta != 0 (a measuring run
// that wrote the caller's C would show), C's padding, the stored entry, and reuse / re-timing.
#include "../support/dense_reference.hpp"
#include "../support/device_buffer.hpp"
#include "../support/gpu_presence.hpp"
#include "../support/random.hpp"
#include "cache_sandbox.hpp"
#include "tune/cache_entry.hpp"
#include "tune/json.hpp"
#include "tune/tuner.hpp"

#include <bsrmm/bsrmm.hpp>
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

struct GpuCase {
  bsrmm_dtype dtype = BSRMM_DTYPE_F16;
  bsrmm_f32_mode f32_mode = BSRMM_F32_EXACT;
  int32_t block = 32;
  int64_t block_rows = 12, block_cols = 16;
  int64_t n = 96;
  bsrmm_layout layout = BSRMM_LAYOUT_ROW_MAJOR;  // of B and C
  bsrmm_op op = BSRMM_OP_NONE;
  double tolerance = 1e-3;  // of |C - reference| relative to sum |alpha a b| + |beta c|
};

// A problem on CUDA device 0 whose C can be reset to its random start and checked.
class GpuProblem {
 public:
  GpuProblem(const GpuCase& gc, uint64_t seed)
      : gc_(gc), b_(1, 1, gc.dtype), c_start_(1, 1, gc.dtype) {
    Random rng(seed);
    a_ = random_bsr(rng, gc.block_rows, gc.block_cols, gc.block, gc.block, 0.3, gc.dtype);
    const bool t = gc.op == BSRMM_OP_TRANSPOSE;
    const int64_t m = t ? a_.cols : a_.rows;
    const int64_t k = t ? a_.rows : a_.cols;
    b_ = HostDense(k, gc.n, gc.dtype, gc.layout, 8);  // padding keeps 16-byte rows for 16-bit types
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < gc.n; ++j) b_.set(i, j, round_to(gc.dtype, rng.uniform(-1, 1)));
    c_start_ = HostDense(m, gc.n, gc.dtype, gc.layout, 8);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < gc.n; ++j) c_start_.set(i, j, round_to(gc.dtype, rng.uniform(-1, 1)));
    b_device_ = DeviceBuffer(b_.bytes());
    c_device_ = DeviceBuffer(c_start_.bytes());
    options_ = matmul_options();
    options_.op_a = gc.op;
    options_.alpha = 0.75;
    options_.beta = 0.5;
  }

  bsrmm_bsr_desc a_desc() { return a_.desc(); }
  bsrmm_dense b() { return on_gpu(b_, b_device_.get()); }
  bsrmm_dense c() { return on_gpu(c_start_, c_device_.get()); }
  const bsrmm_matmul_options& options() const { return options_; }
  void reset_c() { c_device_.upload(c_start_.bytes()); }

  // Every element of C against float64, and C's padding still NaN.
  void check(const std::string& what) {
    HostDense got = c_start_;
    c_device_.download(got.bytes());
    const Expected want = reference_matmul(a_.to_dense(), a_.rows, a_.cols, gc_.op, b_, c_start_,
                                           options_.alpha, options_.beta, nullptr,
                                           BSRMM_ACTIVATION_NONE);
    int64_t bad = 0;
    for (int64_t i = 0; i < want.rows; ++i)
      for (int64_t j = 0; j < want.cols; ++j) {
        const size_t at = static_cast<size_t>(i * want.cols + j);
        const double error = std::fabs(got.get(i, j) - want.value[at]);
        if (!(error <= gc_.tolerance * want.magnitude[at] + 1e-30) && bad++ < 5)
          ADD_FAILURE() << what << ": C(" << i << ", " << j << ") = " << got.get(i, j)
                        << ", expected " << want.value[at];
      }
    EXPECT_EQ(bad, 0) << what << ": elements outside the tolerance";
    EXPECT_TRUE(got.padding_untouched()) << what << ": C's padding was written";
  }

 private:
  static bsrmm_dense on_gpu(HostDense& host, void* data) {
    bsrmm_dense d = host.desc();
    d.data = data;
    d.device = bsrmm_device{BSRMM_DEVICE_CUDA, 0};
    return d;
  }

  GpuCase gc_;
  HostBsr a_;
  HostDense b_, c_start_;
  DeviceBuffer b_device_, c_device_;
  bsrmm_matmul_options options_{};
};

// Runs one multiply (bsrmm_tune when tune_now), waits, checks C; returns the measurements it made.
int64_t run(Context& ctx, Matrix& a, GpuProblem& problem, bool tune_now, const std::string& what) {
  problem.reset_c();
  const bsrmm_dense b = problem.b();
  bsrmm_dense c = problem.c();
  const int64_t before = tuner::measurement_count();
  if (tune_now) {
    bsrmm::tune(ctx, a, b, c, problem.options());
  } else {
    matmul(ctx, a, b, c, problem.options());
  }
  ctx.synchronize();
  problem.check(what + " (" + ctx.last_variant() + ")");
  return tuner::measurement_count() - before;
}

std::vector<tuner::Entry> entries() {
  const tuner::Json json = tuner::parse_json(tuner_cache_entries());
  std::vector<tuner::Entry> all;
  for (const tuner::Json& item : json.items()) all.push_back(tuner::entry_from_json(item));
  return all;
}

std::vector<GpuCase> cases() {
  std::vector<GpuCase> all;
  GpuCase f16;
  all.push_back(f16);
  GpuCase bf16;
  bf16.dtype = BSRMM_DTYPE_BF16;
  bf16.block = 64;
  bf16.block_rows = 6;
  bf16.block_cols = 8;
  bf16.tolerance = 1e-2;
  all.push_back(bf16);
  GpuCase f32;
  f32.dtype = BSRMM_DTYPE_F32;
  f32.block = 16;
  f32.tolerance = 1e-5;
  f32.layout = BSRMM_LAYOUT_COL_MAJOR;
  f32.op = BSRMM_OP_TRANSPOSE;
  all.push_back(f32);
  GpuCase tf32 = f32;
  tf32.f32_mode = BSRMM_F32_TF32;
  tf32.tolerance = 2e-3;  // both inputs rounded to 10 mantissa bits
  tf32.layout = BSRMM_LAYOUT_ROW_MAJOR;
  tf32.op = BSRMM_OP_NONE;
  all.push_back(tf32);
  return all;
}

TEST(GpuTuning, AutoMeasuresOnTheThirdCallStoresAndReuses) {
  BSRMM_REQUIRE_GPU();
  uint64_t seed = 1000;
  for (const GpuCase& gc : cases()) {
    CacheSandbox sandbox;
    SCOPED_TRACE(std::string("dtype ") + std::to_string(gc.dtype) + " block " +
                 std::to_string(gc.block));
    GpuProblem problem(gc, seed++);
    Context ctx(cuda(0));
    ctx.set_f32_mode(gc.f32_mode);
    ctx.set_tuning_mode(BSRMM_TUNING_AUTO);
    Matrix a(ctx, problem.a_desc());

    // Each case is a key of its own, first met here: the heuristic until its third call.
    for (int call = 1; call < tuner::auto_tuning_call; ++call) {
      EXPECT_EQ(run(ctx, a, problem, false, "untuned AUTO multiply " + std::to_string(call)), 0);
      EXPECT_TRUE(entries().empty());
    }
    EXPECT_EQ(run(ctx, a, problem, false, "AUTO multiply that tunes"), 1);
    const std::string chosen = ctx.last_variant();
    std::vector<tuner::Entry> stored = entries();
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_EQ(stored[0].variant, chosen);
    EXPECT_EQ(stored[0].threads, 0);
    EXPECT_GT(stored[0].time_ms, 0.0);
    EXPECT_GE(stored[0].candidates, 1);
    EXPECT_NE(stored[0].key.find("arch=sm_"), std::string::npos) << stored[0].key;
    EXPECT_NE(stored[0].device.find("(sm_"), std::string::npos) << stored[0].device;
    EXPECT_EQ(chosen.rfind("cpu_", 0), std::string::npos) << "a CUDA variant: " << chosen;

    EXPECT_EQ(run(ctx, a, problem, false, "AUTO multiply after tuning"), 0);
    EXPECT_EQ(ctx.last_variant(), chosen);

    Context other(cuda(0));
    other.set_f32_mode(gc.f32_mode);
    EXPECT_EQ(run(other, a, problem, false, "AUTO multiply on another context"), 0);
    EXPECT_EQ(other.last_variant(), chosen);

    ctx.set_tuning_mode(BSRMM_TUNING_FORCE);
    EXPECT_EQ(run(ctx, a, problem, false, "FORCE multiply"), 1);
    EXPECT_EQ(run(ctx, a, problem, true, "bsrmm_tune"), 1);
    EXPECT_EQ(entries().size(), 1u) << "FORCE and bsrmm_tune overwrite the one entry";

    ctx.set_tuning_mode(BSRMM_TUNING_OFF);
    EXPECT_EQ(run(ctx, a, problem, false, "OFF multiply"), 0);
  }
}

TEST(GpuTuning, MeasuresOnTheContextsStream) {
  BSRMM_REQUIRE_GPU();
  CacheSandbox sandbox;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    GpuProblem problem(GpuCase{}, 2000);
    Context ctx(cuda(0));
    ctx.set_stream(stream);
    Matrix a(ctx, problem.a_desc());
    EXPECT_EQ(run(ctx, a, problem, true, "bsrmm_tune on a non-blocking stream"), 1);
    EXPECT_EQ(run(ctx, a, problem, false, "AUTO multiply on a non-blocking stream"), 0);
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace bsrmm::test
