// The narrow kernels (src/cuda/narrow) forced by name on what they exist for: tiny and odd
// block shapes (1x1 to 12x12, non-powers of two, rectangular), every dtype, N from 1 to past
// one warp's 16 columns, both layouts of B and C, unaligned B, long and empty block rows, the
// epilogue; and the heuristic's pick at small N. Each product is checked against float64 with
// C poisoned first (gpu_test_support).
#include "cuda/narrow/heuristic.hpp"
#include "cuda/narrow/packed_shape.hpp"
#include "gpu_test_support.hpp"

#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

namespace narrow = bsrmm::cuda::narrow;

struct Shape {
  int32_t height;
  int32_t width;
};

// The variants of the dtype: lanes along K with one warp per row slice or slices split over
// several warps, lanes along N (blocks at most 8 high) and lanes along M (at most 16 high).
std::vector<std::string> narrow_names(bsrmm_dtype dtype) {
  const std::string label = dtype_label(dtype);
  return {"narrow_" + label + "_simt_warprows", "narrow_" + label + "_simt_splitrows",
          "narrow_" + label + "_simt_nlanes", "narrow_" + label + "_simt_mlanes"};
}

bool takes(const std::string& variant, int32_t block_height) {
  if (variant.find("_nlanes") != std::string::npos) return block_height <= 8;
  if (variant.find("_mlanes") != std::string::npos) return block_height <= narrow::kRowLanesMaxRows;
  return true;
}

// Rotates B's and C's layouts, B's padding and offset and the epilogue terms through a sweep's
// cases by the case's number, so that a sweep of shapes and widths meets every combination.
void rotate_layouts_and_epilogue(Problem& problem, int run, bsrmm_activation activation) {
  problem.b_layout = run % 2 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
  problem.c_layout = run % 3 == 1 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
  problem.b_ld_pad = run % 4 == 2 ? 3 : 0;
  problem.b_ld_align = run % 4 == 2 ? 1 : 8;
  problem.b_offset = run % 5 == 3 ? 1 : 0;
  problem.beta = run % 4 == 1 ? 0.5 : 0.0;
  problem.alpha = run % 3 == 2 ? -1.25 : 1.0;
  problem.bias = run % 2 == 0;
  problem.activation = run % 6 == 4 ? activation : BSRMM_ACTIVATION_NONE;
}

class NarrowKernel : public ::testing::TestWithParam<bsrmm_dtype> {};

TEST_P(NarrowKernel, BlockShapesAndWidthsMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  const bsrmm_dtype dtype = GetParam();
  // 1x1 (CSR), small squares (several blocks per warp step), odd sides (lanes left idle),
  // rectangles, a block 64 wide (one row a warp in f64's 2-element loads: 32 lanes a row) and
  // 160 wide (more chunks a row than lanes).
  const std::vector<Shape> shapes = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 3}, {6, 6}, {8, 8},
                                     {12, 12}, {3, 8}, {16, 16}, {64, 64}, {2, 160}};
  const std::vector<int64_t> widths = {1, 2, 3, 8, 16, 17, 40, 70, 130};
  int run = 0;
  for (const std::string& variant : narrow_names(dtype)) {
    for (const Shape& shape : shapes) {
      for (int64_t n : widths) {
        Problem problem = shaped_problem(dtype, shape.height >= 64 ? 3 : 9, shape.width >= 64 ? 4 : 11,
                                         shape.height, shape.width, n, 0.45);
        problem.variant = variant;
        problem.empty_rows = run % 3 == 0;
        rotate_layouts_and_epilogue(problem, run, BSRMM_ACTIVATION_SILU);
        problem.op = run % 7 == 5 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
        ++run;
        if (!takes(variant, problem.op == BSRMM_OP_TRANSPOSE ? shape.width : shape.height)) continue;
        SCOPED_TRACE(problem.describe());
        const Outcome outcome = run_and_check(problem);
        if (HasFatalFailure()) return;
        EXPECT_EQ(outcome.variant, problem.variant);
      }
    }
  }
}

TEST_P(NarrowKernel, SkewedRowsAndManyBlocksPerRow) {
  BSRMM_REQUIRE_GPU();
  const bsrmm_dtype dtype = GetParam();
  for (const std::string& variant : narrow_names(dtype)) {
    for (int64_t n : {int64_t(1), int64_t(4), int64_t(16), int64_t(100)}) {
      // Dense rows of 300 blocks: many warp steps, the loads ahead and their tail.
      Problem problem = shaped_problem(dtype, 5, 300, 4, 4, n, 0.9);
      problem.variant = variant;
      problem.empty_rows = true;
      SCOPED_TRACE(problem.describe());
      run_and_check(problem);
      if (HasFatalFailure()) return;
      if (!takes(variant, 64)) continue;
      Problem weight = problem;  // few long slices of a large block: several warps a slice
      weight.block_height = 64;
      weight.block_width = 64;
      weight.block_rows = 2;
      weight.block_cols = 40;
      weight.density = 0.6;
      weight.empty_rows = false;
      weight.beta = 0.25;
      weight.bias = true;
      SCOPED_TRACE(weight.describe());
      run_and_check(weight);
      if (HasFatalFailure()) return;
    }
  }
}

// Lanes along N at the widths where a lane owns 2, 4 or 8 columns: B read in 4- to 16-byte runs
// where it is row-major and aligned (widths that leave a partial run at the end, which goes
// element by element), one column a run where it is not (odd leading dimension, B one element
// off its allocation, column-major), C stored in whole runs or element by element.
TEST_P(NarrowKernel, LanesAlongNReadRunsOfBAndTheirTails) {
  BSRMM_REQUIRE_GPU();
  const bsrmm_dtype dtype = GetParam();
  const std::string variant = "narrow_" + std::string(dtype_label(dtype)) + "_simt_nlanes";
  const std::vector<Shape> shapes = {{1, 1}, {3, 3}, {4, 4}, {5, 3}, {8, 8}, {2, 7}};
  const std::vector<int64_t> widths = {64, 127, 128, 131, 256, 261, 520};
  int run = 0;
  for (const Shape& shape : shapes) {
    for (int64_t n : widths) {
      Problem problem = shaped_problem(dtype, 7, 9, shape.height, shape.width, n, 0.5);
      problem.variant = variant;
      problem.empty_rows = run % 3 == 0;
      problem.b_layout = run % 5 == 4 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
      problem.b_ld_pad = run % 4 == 3 ? 1 : 0;
      problem.b_ld_align = run % 4 == 3 ? 1 : 8;
      problem.b_offset = run % 6 == 5 ? 1 : 0;
      problem.c_layout = run % 3 == 2 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
      problem.c_ld_pad = run % 7 == 6 ? 1 : 0;
      problem.c_ld_align = run % 7 == 6 ? 1 : 8;
      problem.beta = run % 2 ? 0.5 : 0.0;
      problem.bias = run % 3 == 1;
      problem.alpha = run % 4 == 2 ? -0.75 : 1.0;
      problem.activation = run % 5 == 2 ? BSRMM_ACTIVATION_GELU : BSRMM_ACTIVATION_NONE;
      ++run;
      SCOPED_TRACE(problem.describe());
      const Outcome outcome = run_and_check(problem);
      if (HasFatalFailure()) return;
      EXPECT_EQ(outcome.variant, variant);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NarrowKernel,
                         ::testing::Values(BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16,
                                           BSRMM_DTYPE_F64),
                         [](const ::testing::TestParamInfo<bsrmm_dtype>& info) {
                           return std::string(dtype_label(info.param));
                         });

// ---- the packed-rows kernel (packed_rows_kernel.cuh): tiny blocks at N <= 4 ----

int32_t element_bytes(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_F64 ? 8 : dtype == BSRMM_DTYPE_F32 ? 4 : 2;
}

int32_t accumulator_bytes(bsrmm_dtype dtype) { return dtype == BSRMM_DTYPE_F64 ? 8 : 4; }

// The columns of C the packed kernel's accumulators hold for N (1, 2 or 4).
int32_t packed_columns(int64_t n) { return n <= 1 ? 1 : n <= 2 ? 2 : 4; }

narrow::PackedShape packed_shape(bsrmm_dtype dtype, int32_t height, int32_t width, int64_t n) {
  return narrow::choose_packed_shape(height, width, element_bytes(dtype), accumulator_bytes(dtype),
                                     packed_columns(n));
}

// The block sides of finite-element and stencil codes (unknowns per node).
bool common_side(int32_t side) { return side <= 4 || side == 6 || side == 8; }

// The lane map, on the host: an iteration is whole blocks and whole 16-byte chunks, a period
// starts 16-byte aligned, at least 16 lanes load, the accumulators fit; and every block shape
// the kernel exists for (sides 1-4, 6, 8 in any pairing, 5x3) has a map at every N <= 4. (5x7
// or 7x7 have none: a period of 35 or 49 chunks fits no 16-32 lanes x 1-4 rounds.)
TEST(NarrowPackedShape, IterationsCoverWholeBlocksAndTinyBlocksAlwaysMap) {
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F64, BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16}) {
    for (int32_t height = 1; height <= 17; ++height) {
      for (int32_t width = 1; width <= 17; ++width) {
        for (int64_t n = 1; n <= 4; ++n) {
          const narrow::PackedShape shape = packed_shape(dtype, height, width, n);
          const int64_t block = int64_t(height) * width;
          SCOPED_TRACE(std::string(dtype_label(dtype)) + " " + std::to_string(height) + "x" +
                       std::to_string(width) + " N " + std::to_string(n));
          if ((common_side(height) && common_side(width)) || (height == 5 && width == 3) || (height == 3 && width == 5)) {
            EXPECT_TRUE(shape.ok());
          }
          if (height > narrow::kPackedMaxHeight) {
            EXPECT_FALSE(shape.ok());
          }
          if (!shape.ok()) continue;
          const int64_t iteration = int64_t(shape.lanes) * shape.rounds * shape.vec;
          EXPECT_EQ(shape.vec * element_bytes(dtype), 16);
          EXPECT_EQ(iteration % block, 0);
          EXPECT_EQ(iteration / block, shape.iteration_blocks);
          EXPECT_EQ(int64_t(shape.period_blocks) * block * element_bytes(dtype) % 16, 0);
          EXPECT_EQ(shape.iteration_blocks % shape.period_blocks, 0);
          EXPECT_GE(shape.lanes, narrow::kPackedMinLanes);
          EXPECT_LE(shape.lanes, 32);
          EXPECT_LE(shape.rounds * shape.vec, narrow::kPackedMaxSlots);
          EXPECT_LE(shape.rounds * shape.vec * packed_columns(n) * accumulator_bytes(dtype),
                    narrow::kPackedAccBytes);
        }
      }
    }
  }
}

std::string packed_name(bsrmm_dtype dtype) { return "narrow_" + std::string(dtype_label(dtype)) + "_simt_packed"; }

class NarrowPacked : public ::testing::TestWithParam<bsrmm_dtype> {};

// Every block shape of the brief at N = 1-4 (and 9: three chunks of columns, the last partial),
// the layouts, paddings and epilogues rotated; rows of 0 to ~5 blocks, so a row's first period
// starts inside the previous row's blocks (masked) and odd block counts leave the array's last
// 16-byte chunk partial.
TEST_P(NarrowPacked, TinyBlocksAtSmallNMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  const bsrmm_dtype dtype = GetParam();
  const std::vector<Shape> shapes = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 3}, {6, 6}, {8, 8},
                                     {12, 12}, {16, 16}, {2, 7}, {7, 2}};
  int run = 0;
  int ran = 0;
  for (const Shape& shape : shapes) {
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(3), int64_t(4), int64_t(9)}) {
      Problem problem = shaped_problem(dtype, 13 + run % 5, 11, shape.height, shape.width, n, 0.4);
      problem.variant = packed_name(dtype);
      problem.empty_rows = run % 2 == 0;
      rotate_layouts_and_epilogue(problem, run, BSRMM_ACTIVATION_RELU);
      ++run;
      if (!packed_shape(dtype, shape.height, shape.width, n).ok()) continue;
      SCOPED_TRACE(problem.describe());
      const Outcome outcome = run_and_check(problem);
      if (HasFatalFailure()) return;
      EXPECT_EQ(outcome.variant, problem.variant);
      ++ran;
    }
  }
  EXPECT_GE(ran, 40);  // at least the 8 shapes up to 8 x 8 at 5 widths
}

// One very long block row among short and empty ones: many batches and the loads' tail, with
// the epilogue; a transposed A (the library hands the kernel the transpose's BSR).
TEST_P(NarrowPacked, LongRowsAndTransposeMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  const bsrmm_dtype dtype = GetParam();
  for (const Shape& shape : std::vector<Shape>{{1, 1}, {3, 3}, {4, 4}, {8, 8}}) {
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(4)}) {
      Problem problem =
          shaped_problem(dtype, 4, shape.width == 1 ? 3000 : 400, shape.height, shape.width, n, 0.85);
      problem.variant = packed_name(dtype);
      problem.empty_rows = true;
      problem.beta = 0.25;
      problem.bias = true;
      problem.alpha = 0.75;
      SCOPED_TRACE(problem.describe());
      EXPECT_EQ(run_and_check(problem).variant, problem.variant);
      if (HasFatalFailure()) return;
      Problem transposed = problem;
      transposed.block_rows = 30;
      transposed.block_cols = 7;
      transposed.density = 0.5;
      transposed.op = BSRMM_OP_TRANSPOSE;
      transposed.c_layout = BSRMM_LAYOUT_COL_MAJOR;
      SCOPED_TRACE(transposed.describe());
      EXPECT_EQ(run_and_check(transposed).variant, problem.variant);
      if (HasFatalFailure()) return;
    }
  }
}

// The packed kernel lost every case swept on the H100 (perf-log entry 49): the untuned pick for
// tiny blocks at small N stays the lanes-along-K kernel; the packed one runs only when tuned or forced.
TEST(NarrowPackedHeuristic, TinyBlocksAtSmallNKeepTheWarpRowsKernel) {
  BSRMM_REQUIRE_GPU();
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F64, BSRMM_DTYPE_F32, BSRMM_DTYPE_BF16}) {
    for (const Shape& shape : std::vector<Shape>{{3, 3}, {4, 4}, {8, 8}}) {
      for (int64_t n : {1, 2, 4}) {
        const Problem problem = shaped_problem(dtype, 40, 40, shape.height, shape.width, n, 0.1);
        SCOPED_TRACE(problem.describe());
        const std::string ran = run_and_check(problem).variant;
        if (HasFatalFailure()) return;
        EXPECT_NE(ran, packed_name(dtype));
        EXPECT_EQ(ran.rfind("narrow_", 0), 0u) << ran;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NarrowPacked,
                         ::testing::Values(BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16,
                                           BSRMM_DTYPE_F64),
                         [](const ::testing::TestParamInfo<bsrmm_dtype>& info) {
                           return std::string(dtype_label(info.param));
                         });

// Untuned, small N and tiny blocks go to the narrow family (lanes along N for tiny blocks at
// large N); a large N with tensor-core blocks does not.
TEST(NarrowHeuristic, PicksNarrowForSmallNAndTinyBlocks) {
  BSRMM_REQUIRE_GPU();
  const Problem small_n = shaped_problem(BSRMM_DTYPE_F16, 4, 8, 64, 64, 1, 0.25);
  EXPECT_EQ(run_and_check(small_n).variant.rfind("narrow_", 0), 0u);
  // Lanes along N from 4096 warps (block rows x slices of N): 4096 x 2 here, 64 x 2 below.
  const Problem tiny = shaped_problem(BSRMM_DTYPE_F64, 4096, 64, 4, 4, 200, 0.05);
  EXPECT_EQ(run_and_check(tiny).variant, "narrow_f64_simt_nlanes");
  const Problem few_rows = shaped_problem(BSRMM_DTYPE_F64, 64, 64, 4, 4, 200, 0.1);
  EXPECT_EQ(run_and_check(few_rows).variant, "narrow_f64_simt_warprows");
  Problem wide = small_n;
  wide.n = 256;
  EXPECT_NE(run_and_check(wide).variant.rfind("narrow_", 0), 0u);
}

// Tiny blocks at N <= 4 go to lanes along M where the block rows give 2048 warps or more (a
// group of lanes a block row), to lanes along K where they are fewer or skewed.
TEST(NarrowHeuristic, LanesAlongMForTinyBlocksOverManyBlockRowsAtSmallN) {
  BSRMM_REQUIRE_GPU();
  for (int64_t n : {1, 2, 4}) {
    const Problem stencil_like = shaped_problem(BSRMM_DTYPE_F64, 16384, 64, 4, 4, n, 0.05);
    SCOPED_TRACE(stencil_like.describe());
    EXPECT_EQ(run_and_check(stencil_like).variant, "narrow_f64_simt_mlanes");
    const Problem few_rows = shaped_problem(BSRMM_DTYPE_F32, 512, 64, 3, 3, n, 0.1);
    SCOPED_TRACE(few_rows.describe());
    const std::string ran = run_and_check(few_rows).variant;
    EXPECT_EQ(ran.rfind("narrow_f32_simt_", 0), 0u) << ran;
    EXPECT_NE(ran, "narrow_f32_simt_mlanes");
    if (HasFatalFailure()) return;
  }
  const Problem wider = shaped_problem(BSRMM_DTYPE_F32, 16384, 64, 4, 4, 8, 0.05);
  EXPECT_NE(run_and_check(wider).variant, "narrow_f32_simt_mlanes");
}

// Lanes along M on long block rows of many steps (a batch's tail, rows of different lengths in
// one warp) and block widths that split a lane's row into 1-, 2-, 4- and 8-element chunks.
TEST_P(NarrowKernel, LanesAlongMWalkLongAndUnevenRows) {
  BSRMM_REQUIRE_GPU();
  const bsrmm_dtype dtype = GetParam();
  const std::string variant = "narrow_" + std::string(dtype_label(dtype)) + "_simt_mlanes";
  const std::vector<Shape> shapes = {{1, 1}, {2, 2}, {3, 5}, {4, 4}, {7, 7}, {8, 8}, {16, 16}, {13, 24}};
  int run = 0;
  for (const Shape& shape : shapes) {
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(3), int64_t(4), int64_t(9)}) {
      Problem problem = shaped_problem(dtype, 70, 90, shape.height, shape.width, n, run % 2 ? 0.6 : 0.15);
      problem.variant = variant;
      problem.empty_rows = run % 3 == 0;
      rotate_layouts_and_epilogue(problem, run, BSRMM_ACTIVATION_GELU);
      ++run;
      SCOPED_TRACE(problem.describe());
      EXPECT_EQ(run_and_check(problem).variant, variant);
      if (HasFatalFailure()) return;
    }
  }
}

// f64 on blocks the DMMA tiles take goes to them from N = 4 (entry 79), not only from 8.
TEST(NarrowHeuristic, F64TensorCoreShapesLeaveTheNarrowKernelsFromN4) {
  BSRMM_REQUIRE_GPU();
  Problem problem = shaped_problem(BSRMM_DTYPE_F64, 24, 24, 64, 64, 2, 0.2);
  EXPECT_EQ(run_and_check(problem).variant.rfind("narrow_", 0), 0u);
  problem.n = 4;
  EXPECT_EQ(run_and_check(problem).variant.rfind("sm80_f64_", 0), 0u);
}

// The rules behind the untuned pick, from the facts alone (no GPU): what counts as skewed rows,
// and what they, f64 and exact f32 change (docs/perf-log.md entry 79).
TEST(NarrowHeuristic, SkewedRowsF64AndExactF32MoveThePick) {
  using narrow::Facts;
  EXPECT_TRUE(narrow::skewed_rows(512, 512 * 16, 512)) << "power-law: longest 32x the mean";
  EXPECT_FALSE(narrow::skewed_rows(24, 512 * 16, 512)) << "uniform";
  EXPECT_FALSE(narrow::skewed_rows(512, 512 * 256, 512)) << "causal: longest 2x the mean";
  EXPECT_FALSE(narrow::skewed_rows(40, 512 * 2, 512)) << "skewed, but the longest row is short";
  // Tensor-core shapes: narrow below N = 8, f64 below 4.
  EXPECT_TRUE(narrow::preferred(Facts{64, 32, 2, 8, false, false}));
  EXPECT_FALSE(narrow::preferred(Facts{64, 32, 4, 8, false, false}));
  EXPECT_TRUE(narrow::preferred(Facts{64, 32, 4, 2, false, false}));
  EXPECT_FALSE(narrow::preferred(Facts{64, 32, 8, 2, false, false}));
  EXPECT_TRUE(narrow::preferred(Facts{4, 4, 4096, 2, false, false})) << "no tensor-core family takes 4x4";
  // Exact f32 on skewed rows up to N = 32: the split slices, not the 3xTF32 tiles.
  EXPECT_TRUE(narrow::preferred(Facts{64, 32, 16, 4, true, true}));
  EXPECT_TRUE(narrow::split_slices_preferred(Facts{64, 32, 16, 4, true, true}));
  EXPECT_FALSE(narrow::preferred(Facts{64, 32, 16, 4, true, false}));
  EXPECT_FALSE(narrow::split_slices_preferred(Facts{64, 32, 16, 4, true, false}));
  // Warps a slice shares: even rows up to ~2048 warps in all (N's chunks counted), skewed rows up
  // to 16384; two steps a warp or more either way.
  EXPECT_EQ(narrow::warps_per_slice(2048, 1, 16, false), 1) << "8192^2 block 64 f16: 2048 slices";
  EXPECT_EQ(narrow::warps_per_slice(1024, 1, 56, false), 2) << "4096 x 14336 block 64 f16, d 0.25";
  EXPECT_EQ(narrow::warps_per_slice(512, 1, 112, false), 4);
  EXPECT_EQ(narrow::warps_per_slice(100, 1, 1000, false), 8) << "at most a CTA's warps";
  EXPECT_EQ(narrow::warps_per_slice(512, 4, 64, false), 1) << "N's chunks count as warps";
  EXPECT_EQ(narrow::warps_per_slice(64, 1, 3, false), 1) << "each warp keeps two steps";
  EXPECT_EQ(narrow::warps_per_slice(4096, 1, 8, true), 4) << "skewed: up to 16384 warps";
  EXPECT_EQ(narrow::warps_per_slice(4096, 1, 8, false), 1);
  EXPECT_FALSE(narrow::preferred(Facts{64, 32, 16, 4, false, true})) << "tf32";
  EXPECT_FALSE(narrow::preferred(Facts{64, 32, 64, 4, true, true})) << "past N = 32";
  // Tiny blocks: lanes along N and the tiny-block mma kernels, but not on skewed rows.
  EXPECT_TRUE(narrow::column_lanes_preferred(8, 1024, false, 4096));
  EXPECT_FALSE(narrow::column_lanes_preferred(8, 1024, true, 4096));
  // ... nor where block rows x slices of N give too few warps: 512 block rows at N = 64 are 512.
  EXPECT_EQ(narrow::column_lanes_warps(512, 64, 8, 4), 512);
  EXPECT_EQ(narrow::column_lanes_warps(512, 1024, 8, 4), 4096);
  EXPECT_EQ(narrow::column_lanes_warps(2048, 256, 2, 2), 2048);
  EXPECT_FALSE(narrow::column_lanes_preferred(8, 64, false, 512));
  EXPECT_TRUE(narrow::tiny_block_mma_preferred(8, 256, false));
  EXPECT_FALSE(narrow::tiny_block_mma_preferred(8, 256, true));
  // Lanes along M: blocks at most 16 high, N <= 4, not skewed, 2048 warps (32 / height block rows
  // a warp).
  EXPECT_EQ(narrow::row_lanes_warps(262144, 4), 32768);
  EXPECT_EQ(narrow::row_lanes_warps(1000, 3), 100);
  EXPECT_EQ(narrow::row_lanes_warps(33, 16), 17);
  // A 27-point stencil's rows: lanes along K give a 4x4 f32 block row ~3.4 steps of a warp
  // (8 blocks a step), an 8x8 f64 one 27 steps of 32 busy lanes.
  const auto fill = [](int32_t side, int32_t bytes) {
    return narrow::lanes_along_k_fill(narrow::choose_warp_shape(side, side, bytes, 256), 27.0);
  };
  EXPECT_NEAR(fill(4, 4).steps, 27.0 / 8, 1e-9);
  EXPECT_NEAR(fill(8, 8).steps, 27.0, 1e-9);
  EXPECT_NEAR(fill(8, 8).busy, 1.0, 1e-9);
  EXPECT_NEAR(fill(6, 8).busy, 18.0 / 32, 1e-9) << "6x6 f64: 3 lanes a row x 6 rows";
  EXPECT_TRUE(narrow::row_lanes_preferred(4, 1, false, 32768, fill(4, 4)));
  EXPECT_TRUE(narrow::row_lanes_preferred(16, 4, false, 2048, fill(16, 4)));
  EXPECT_TRUE(narrow::row_lanes_preferred(6, 1, false, 32768, fill(6, 8))) << "lanes along K half idle";
  EXPECT_FALSE(narrow::row_lanes_preferred(8, 1, false, 32768, fill(8, 8))) << "lanes along K fill 27 steps";
  EXPECT_FALSE(narrow::row_lanes_preferred(16, 2, false, 32768, fill(16, 4)));
  EXPECT_TRUE(narrow::row_lanes_preferred(8, 4, false, 32768, fill(8, 8))) << "at N = 4 lanes along M still win";
  EXPECT_FALSE(narrow::row_lanes_preferred(4, 1, true, 32768, fill(4, 4))) << "skewed";
  EXPECT_FALSE(narrow::row_lanes_preferred(4, 8, false, 32768, fill(4, 4))) << "N past 4";
  EXPECT_FALSE(narrow::row_lanes_preferred(4, 1, false, 1024, fill(4, 4))) << "too few warps";
  EXPECT_FALSE(narrow::row_lanes_preferred(32, 1, false, 32768, fill(4, 4))) << "taller than 16";
  // f64 16x16 at N = 4: lanes along M, not the DMMA tile (entry 82).
  EXPECT_TRUE(narrow::preferred(Facts{16, 16, 4, 8, false, false}));
  EXPECT_FALSE(narrow::preferred(Facts{16, 16, 8, 8, false, false}));
  EXPECT_FALSE(narrow::preferred(Facts{16, 32, 4, 8, false, false}));
  EXPECT_EQ(narrow::row_lanes_cols(1), 1);
  EXPECT_EQ(narrow::row_lanes_cols(2), 2);
  EXPECT_EQ(narrow::row_lanes_cols(3), 4);
  EXPECT_EQ(narrow::row_lanes_cols(100), 4);
}

}  // namespace
}  // namespace bsrmm::test
