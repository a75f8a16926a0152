// bsrmm_matmul on the GPU with the heuristic's choice of kernel: dtypes, square, rectangular and
// odd block shapes, layouts, op(A) = A^T, alpha/beta, N from 1 to 4096, densities 0.01..1,
// empty rows, bias and activations. Each case checks every element against float64.
#include "gpu_test_support.hpp"

#include <string>
#include <utility>
#include <vector>

namespace bsrmm::test {
namespace {

struct Case {
  std::string name;
  Problem problem;
};

std::vector<Case> cases() {
  std::vector<Case> list;
  auto add = [&](std::string name, Problem p) { list.push_back({std::move(name), std::move(p)}); };
  const bsrmm_dtype f16 = BSRMM_DTYPE_F16, bf16 = BSRMM_DTYPE_BF16, f32 = BSRMM_DTYPE_F32,
                    f64 = BSRMM_DTYPE_F64;

  // Square blocks 16..128 in every dtype, N = 64, a third of the rows empty.
  for (bsrmm_dtype dtype : {f16, bf16, f32, f64})
    for (int b : {16, 32, 64, 128}) {
      Problem p = shaped_problem(dtype, 512 / b, 384 / b, b, b, 64, 0.5);
      p.empty_rows = true;
      add(std::string(dtype_label(dtype)) + "_b" + std::to_string(b), p);
    }
  for (int b : {16, 64, 128}) {
    Problem p = shaped_problem(f32, 512 / b, 256 / b, b, b, 96, 0.5);
    p.f32_mode = BSRMM_F32_TF32;
    add("tf32_b" + std::to_string(b), p);
  }

  // N: 1, 7 (below one vector), 1000 (a tail in every tile size), 4096 (few, larger).
  for (int64_t n : {1, 7, 1000}) {
    add("f16_b64_n" + std::to_string(n), shaped_problem(f16, 6, 5, 64, 64, n, 0.5));
    add("bf16_b32_n" + std::to_string(n) + "_bcol", [&] {
      Problem p = shaped_problem(bf16, 6, 7, 32, 32, n, 0.4);
      p.b_layout = BSRMM_LAYOUT_COL_MAJOR;
      return p;
    }());
  }
  add("f16_b64_n4096", shaped_problem(f16, 8, 8, 64, 64, 4096, 0.25));
  add("bf16_b128_n4096_ccol", [&] {
    Problem p = shaped_problem(bf16, 4, 4, 128, 128, 4096, 0.5);
    p.c_layout = BSRMM_LAYOUT_COL_MAJOR;
    return p;
  }());

  // Rectangular blocks whose sides are multiples of 16 (tensor-core path) ...
  const std::pair<int, int> rectangles[] = {{16, 48}, {48, 32}, {32, 64}, {64, 16}, {128, 32}, {32, 128}};
  for (auto [bh, bw] : rectangles)
    for (bsrmm_dtype dtype : {f16, f32}) {
      Problem p = shaped_problem(dtype, 384 / bh, 384 / bw, bh, bw, 200, 0.5);
      add(std::string(dtype_label(dtype)) + "_rect" + std::to_string(bh) + "x" + std::to_string(bw), p);
    }
  // ... and odd shapes, which only the generic kernel takes.
  const std::pair<int, int> odd[] = {{1, 1}, {3, 5}, {7, 7}, {24, 24}, {5, 128}, {40, 8}};
  for (auto [bh, bw] : odd)
    for (bsrmm_dtype dtype : {f16, bf16, f32, f64}) {
      Problem p = shaped_problem(dtype, std::max(1, 120 / bh), std::max(1, 120 / bw), bh, bw, 33, 0.3);
      add(std::string(dtype_label(dtype)) + "_odd" + std::to_string(bh) + "x" + std::to_string(bw), p);
    }

  // Densities from 0.01 to 1, with empty rows.
  for (double density : {0.01, 0.05, 0.25, 1.0}) {
    Problem p = shaped_problem(f16, 40, 40, 16, 16, 128, density);
    p.empty_rows = density < 1.0;
    add("f16_density" + std::to_string(int(density * 100)), p);
  }

  // Layouts x transposes x epilogues.
  int variant = 0;
  for (bsrmm_layout b_layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
    for (bsrmm_layout c_layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
      for (bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE})
        for (bsrmm_dtype dtype : {f16, bf16, f32}) {
          Problem p = shaped_problem(dtype, 6, 4, 32, 64, 77, 0.5);
          p.b_layout = b_layout;
          p.c_layout = c_layout;
          p.op = op;
          p.b_ld_pad = variant % 3 == 0 ? 8 : 0;
          p.c_ld_pad = variant % 2;
          p.alpha = variant % 4 == 1 ? -2.0 : 0.5;
          p.beta = variant % 3 == 2 ? 0.75 : 0.0;
          p.bias = variant % 2 == 0;
          p.activation = bsrmm_activation(variant % 4);
          ++variant;
          add(std::string(dtype_label(dtype)) + (b_layout ? "_bcol" : "_brow") + (c_layout ? "_ccol" : "_crow") +
                  (op ? "_transposed" : ""),
              p);
        }

  // beta != 0 with alpha = 0 (C scaled, A unused), and every activation on f64.
  add("f16_alpha0_beta", [&] {
    Problem p = shaped_problem(f16, 4, 4, 64, 64, 100, 0.5);
    p.alpha = 0.0;
    p.beta = 2.0;
    return p;
  }());
  for (int act = 1; act <= 3; ++act) {
    Problem p = shaped_problem(f64, 5, 5, 16, 16, 50, 0.5);
    p.bias = true;
    p.beta = 0.5;
    p.activation = bsrmm_activation(act);
    add("f64_activation" + std::to_string(act), p);
  }

  // B not 16-byte aligned: the tensor-core kernels decline, a correct kernel still runs.
  add("f16_b64_misaligned_b", [&] {
    Problem p = shaped_problem(f16, 4, 4, 64, 64, 64, 0.5);
    p.b_offset = 1;
    return p;
  }());
  return list;
}

class HeuristicMatmul : public ::testing::TestWithParam<Case> {};

TEST_P(HeuristicMatmul, MatchesFloat64Reference) {
  BSRMM_REQUIRE_GPU();
  const Outcome outcome = run_and_check(GetParam().problem);
  RecordProperty("variant", outcome.variant);
  RecordProperty("relative_error", std::to_string(outcome.relative_error));
  EXPECT_FALSE(outcome.variant.empty());
  EXPECT_NE(outcome.variant.rfind("cpu", 0), 0u) << "a CUDA context ran a CPU variant";
}

INSTANTIATE_TEST_SUITE_P(Sweep, HeuristicMatmul, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// The caller's stream is honoured: work queued on it after bsrmm_matmul sees the result.
TEST(CudaStream, MatmulOnCallerStream) {
  BSRMM_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Problem p = shaped_problem(BSRMM_DTYPE_F16, 8, 8, 64, 64, 256, 0.5);
  p.stream = stream;
  run_and_check(p);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace bsrmm::test
