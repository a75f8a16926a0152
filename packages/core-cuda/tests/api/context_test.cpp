// Contexts: creation rules, settings and their validation, and concurrent use of one context.
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace bsrmm::test {
namespace {

bool message_has(const std::string& fragment) {
  return std::string(bsrmm_last_error()).find(fragment) != std::string::npos;
}

TEST(Context, CreationRules) {
  bsrmm_context_t ctx = reinterpret_cast<bsrmm_context_t>(0x1);
  EXPECT_EQ(bsrmm_context_create({static_cast<bsrmm_device_type>(4), 0}, &ctx), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("device.type = 4 is not a bsrmm_device_type"));
  EXPECT_EQ(ctx, nullptr);
  EXPECT_EQ(bsrmm_context_create({BSRMM_DEVICE_CUDA, -2}, &ctx), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("device.ordinal = -2 is negative"));
  EXPECT_EQ(bsrmm_context_create({BSRMM_DEVICE_CPU, 0}, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("out is NULL"));
}

TEST(Context, CudaContextWithoutAGpuIsNoDevice) {
  int32_t count = 0;
  if (bsrmm_cuda_device_count(&count) == BSRMM_STATUS_SUCCESS) GTEST_SKIP() << "a GPU is present";
  bsrmm_context_t ctx = nullptr;
  EXPECT_EQ(bsrmm_context_create({BSRMM_DEVICE_CUDA, 0}, &ctx), BSRMM_STATUS_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  if (!BSRMM_WITH_CUDA) EXPECT_TRUE(message_has("bsrmm was built without CUDA"));
}

TEST(Context, SettingsAreValidated) {
  Context ctx;
  const bsrmm_device device = ctx.device();
  EXPECT_EQ(device.type, BSRMM_DEVICE_CPU);
  EXPECT_EQ(device.ordinal, 0);

  void* dummy = &ctx;
  EXPECT_EQ(bsrmm_context_set_stream(ctx.get(), dummy), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("streams exist only on CUDA contexts; this context is on cpu"));
  ctx.set_stream(nullptr);
  EXPECT_EQ(ctx.stream(), nullptr);

  EXPECT_EQ(bsrmm_context_set_num_threads(ctx.get(), -1), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("threads = -1 is outside 0..1024"));
  EXPECT_EQ(bsrmm_context_set_num_threads(ctx.get(), 5000), BSRMM_STATUS_INVALID_ARGUMENT);
  ctx.set_num_threads(3);
  EXPECT_EQ(ctx.num_threads(), 3);
  ctx.set_num_threads(0);  // the default (BSRMM_NUM_THREADS, OMP_NUM_THREADS or the CPUs): >= 1
  EXPECT_GE(ctx.num_threads(), 1);
  EXPECT_EQ(bsrmm_context_get_num_threads(ctx.get(), nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("out is NULL"));

  EXPECT_EQ(bsrmm_context_set_f32_mode(ctx.get(), static_cast<bsrmm_f32_mode>(2)), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("mode = 2 is not a bsrmm_f32_mode"));
  ctx.set_f32_mode(BSRMM_F32_TF32);
  EXPECT_EQ(bsrmm_context_set_tuning_mode(ctx.get(), static_cast<bsrmm_tuning_mode>(3)),
            BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("mode = 3 is not a bsrmm_tuning_mode"));
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);

  EXPECT_EQ(bsrmm_context_set_variant(ctx.get(), "no_such_variant"), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("name = \"no_such_variant\" is not a variant of this build"));
  for (int32_t i = 0; i < bsrmm_variant_count(); ++i) {
    const std::string name = bsrmm_variant_name(i);
    if (name.rfind("cpu_", 0) == 0) continue;
    EXPECT_EQ(bsrmm_context_set_variant(ctx.get(), name.c_str()), BSRMM_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(message_has("is a CUDA variant; this context is on cpu"));
    break;
  }
  ctx.set_variant("cpu_reference_f64acc");
  ctx.set_variant("");
  EXPECT_EQ(bsrmm_context_set_variant(ctx.get(), nullptr), BSRMM_STATUS_SUCCESS);
  EXPECT_EQ(ctx.last_variant(), "") << "no multiply ran yet";
  ctx.synchronize();

  EXPECT_EQ(bsrmm_context_get_device(nullptr, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bsrmm_context_synchronize(nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("bsrmm_context_synchronize: ctx is NULL"));
  EXPECT_STREQ(bsrmm_context_last_variant(nullptr), "");
  bsrmm_context_destroy(nullptr);  // a no-op, like free(NULL)
}

// The SM budget: 0 and any positive count are taken (above the device's SMs means all of
// them), a negative one is refused naming the argument; a CPU context keeps it and multiplies
// exactly as before (it has no SMs to budget).
TEST(Context, SmBudgetIsValidatedAndACpuContextIgnoresIt) {
  Context ctx;
  EXPECT_EQ(ctx.sm_budget(), 0) << "the default: every SM";
  EXPECT_EQ(bsrmm_context_set_sm_budget(ctx.get(), -1), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("bsrmm_context_set_sm_budget: count = -1 is negative"));
  EXPECT_EQ(ctx.sm_budget(), 0) << "a refused count leaves the setting alone";
  EXPECT_EQ(bsrmm_context_set_sm_budget(nullptr, 8), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("ctx is NULL"));
  EXPECT_EQ(bsrmm_context_get_sm_budget(ctx.get(), nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("out is NULL"));
  ctx.set_sm_budget(1 << 20);
  EXPECT_EQ(ctx.sm_budget(), 1 << 20);

  ctx.set_sm_budget(8);
  EXPECT_EQ(ctx.sm_budget(), 8);
  Random rng(2811);
  HostBsr a = random_bsr(rng, 12, 20, 4, 8, 0.4, BSRMM_DTYPE_F32);
  Matrix matrix(ctx, a.desc());
  HostDense b(a.cols, 9, BSRMM_DTYPE_F32), c(a.rows, 9, BSRMM_DTYPE_F32);  // c starts NaN
  fill_random(b, rng);
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  bsrmm_dense b_desc = b.desc(), c_desc = c.desc();
  ASSERT_EQ(bsrmm_matmul(ctx.get(), matrix.get(), &b_desc, &c_desc, &options), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
  const HostDense none(0, 0, BSRMM_DTYPE_F32);
  expect_matches(c, reference_matmul(a.to_dense(), a.rows, a.cols, BSRMM_OP_NONE, b, none, 1.0, 0.0,
                                     nullptr, BSRMM_ACTIVATION_NONE),
                 "CPU multiply under an SM budget of 8");
}

// Several threads multiply through one context and one matrix at once; each result must be
// right (the pool and workspace are shared, the plan is built once).
TEST(Context, ConcurrentMultipliesThroughOneContext) {
  Random rng(77);
  HostBsr a = random_bsr(rng, 16, 16, 8, 8, 0.3, BSRMM_DTYPE_F32);
  Context ctx;
  ctx.set_num_threads(2);
  Matrix matrix(ctx, a.desc());
  constexpr int threads = 4;
  std::vector<HostDense> bs, cs;
  for (int t = 0; t < threads; ++t) {
    bs.emplace_back(a.rows, 24 + t, BSRMM_DTYPE_F32);  // op = A^T: B has A.rows rows
    cs.emplace_back(a.cols, 24 + t, BSRMM_DTYPE_F32);
    for (int64_t i = 0; i < a.rows; ++i)
      for (int64_t j = 0; j < 24 + t; ++j) bs[t].set(i, j, rng.uniform(-1, 1));
  }
  std::vector<std::thread> workers;
  std::vector<bsrmm_status> statuses(threads);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      bsrmm_matmul_options options = bsrmm_matmul_options_default();
      options.op_a = t % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
      bsrmm_dense b = bs[t].desc(), c = cs[t].desc();
      for (int repeat = 0; repeat < 5; ++repeat) statuses[t] = bsrmm_matmul(ctx.get(), matrix.get(), &b, &c, &options);
    });
  }
  for (std::thread& w : workers) w.join();
  for (int t = 0; t < threads; ++t) {
    ASSERT_EQ(statuses[t], BSRMM_STATUS_SUCCESS);
    const HostDense none(0, 0, BSRMM_DTYPE_F32);
    expect_matches(cs[t], reference_matmul(a.to_dense(), a.rows, a.cols, t % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE,
                                           bs[t], none, 1.0, 0.0, nullptr, BSRMM_ACTIVATION_NONE),
                   "thread " + std::to_string(t));
  }
}

}  // namespace
}  // namespace bsrmm::test
