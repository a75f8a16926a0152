// A^T as a matrix of its own (bsrmm_matrix_transpose) and A^T's values written into the caller's
// memory (bsrmm_matrix_transpose_values), on the CPU: every dtype's element width, blocks that
// are not square, empty and long block rows. Moving values is exact, so the results are
// compared bit for bit with A's dense form transposed, into NaN-poisoned memory.
#include "../../src/api/handles.hpp"
#include "../../src/matrix/plan.hpp"
#include "../support/fp8_operands.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace bsrmm::test {
namespace {

const bsrmm_device cpu{BSRMM_DEVICE_CPU, 0};

// The matrix's structure and values read back through the C ABI, as a HostBsr.
HostBsr exported(const Matrix& m) {
  const bsrmm_matrix_info info = m.info();
  HostBsr h;
  h.rows = info.rows;
  h.cols = info.cols;
  h.block_height = info.block_height;
  h.block_width = info.block_width;
  h.dtype = info.dtype;
  h.row_ptr.resize(static_cast<size_t>(info.rows / info.block_height) + 1);
  h.col_idx.resize(static_cast<size_t>(info.nnzb));
  h.values.resize(static_cast<size_t>(info.nnzb * h.block_elements()) * dtype_size(info.dtype));
  m.export_to(BSRMM_INDEX_I64, h.row_ptr.data(), h.col_idx.data(), h.values.data());
  return h;
}

void expect_transpose_of(const HostBsr& at, const HostBsr& a, const std::string& what) {
  ASSERT_EQ(at.rows, a.cols) << what;
  ASSERT_EQ(at.cols, a.rows) << what;
  ASSERT_EQ(at.block_height, a.block_width) << what;
  ASSERT_EQ(at.block_width, a.block_height) << what;
  ASSERT_EQ(at.nnzb(), a.nnzb()) << what;
  const std::vector<double> dense = a.to_dense(), dense_t = at.to_dense();
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j)
      ASSERT_EQ(dense_t[static_cast<size_t>(j * a.rows + i)], dense[static_cast<size_t>(i * a.cols + j)])
          << what << " at A(" << i << ", " << j << ")";
  // Every stored block of A is stored in A^T (zero values included), so the block counts per
  // block column of A are A^T's row lengths.
  std::vector<int64_t> counts(static_cast<size_t>(a.cols / a.block_width) + 1, 0);
  for (int64_t c : a.col_idx) ++counts[static_cast<size_t>(c) + 1];
  for (size_t r = 1; r < counts.size(); ++r) counts[r] += counts[r - 1];
  EXPECT_EQ(at.row_ptr, counts) << what;
}

// A pattern with an empty block row, a full one and random ones between.
HostBsr skewed(Random& rng, int64_t block_rows, int64_t block_cols, int32_t bh, int32_t bw, bsrmm_dtype dtype) {
  HostBsr a = random_bsr(rng, block_rows, block_cols, bh, bw, 0.4, dtype);
  std::vector<int64_t> row_ptr{0}, col_idx;
  for (int64_t r = 0; r < block_rows; ++r) {
    if (r == 1) {
      for (int64_t c = 0; c < block_cols; ++c) col_idx.push_back(c);
    } else if (r != 0) {
      for (int64_t p = a.row_ptr[static_cast<size_t>(r)]; p < a.row_ptr[static_cast<size_t>(r) + 1]; ++p)
        col_idx.push_back(a.col_idx[static_cast<size_t>(p)]);
    }
    row_ptr.push_back(static_cast<int64_t>(col_idx.size()));
  }
  a.row_ptr = row_ptr;
  a.col_idx = col_idx;
  a.values.assign(static_cast<size_t>(a.nnzb() * a.block_elements()) * dtype_size(dtype), 0);
  return with_fresh_values(a, rng);
}

using Case = std::tuple<bsrmm_dtype, int32_t, int32_t>;  // dtype, block height, block width
class Transpose : public ::testing::TestWithParam<Case> {};

TEST_P(Transpose, MatrixAndValuesAreAsTransposed) {
  const auto [dtype, bh, bw] = GetParam();
  Random rng(0x7a05e + 97 * bh + bw + 1000 * int(dtype));
  Context ctx(cpu);
  HostBsr a = skewed(rng, 6, 9, bh, bw, dtype);
  bsrmm_bsr_desc desc = a.desc();
  Matrix matrix(ctx, desc);
  Matrix at = matrix.transpose(ctx);
  const HostBsr at_host = exported(at);
  expect_transpose_of(at_host, a, "bsrmm_matrix_transpose");
  // Transposing twice gives A back.
  expect_transpose_of(exported(at.transpose(ctx)), at_host, "A^T^T");

  // A later step's values: written into poisoned memory, the same bytes A^T of them stores.
  const HostBsr next = with_fresh_values(a, rng);
  Matrix step = matrix.with_values(ctx, next.values.data(), cpu, BSRMM_CREATE_BORROW_VALUES);
  std::vector<unsigned char> written(next.values.size(), 0xff);
  step.transpose_values(ctx, written.data());
  HostBsr want = exported(step.transpose(ctx));
  EXPECT_EQ(written, want.values);
  expect_transpose_of(want, next, "A^T of the step's values");
  // The structure's transposition is planned once for the matrices that share it.
  EXPECT_EQ(&matrix.get()->matrix->plan().transposed_structure(nullptr),
            &step.get()->matrix->plan().transposed_structure(nullptr));
  // And the A^T of each (op_a = TRANSPOSE's, bsrmm_matrix_transpose's) shares one structure and
  // its plan: a step's A^T copies values only, it does not upload or schedule a structure again.
  const bsrmm::matrix::BsrMatrix& first = matrix.get()->matrix->plan().transposed(*matrix.get()->matrix, nullptr);
  const bsrmm::matrix::BsrMatrix& second = step.get()->matrix->plan().transposed(*step.get()->matrix, nullptr);
  EXPECT_EQ(&first.structure(), &second.structure());
  EXPECT_EQ(&first.structure(), &step.transpose(ctx).get()->matrix->structure());
  EXPECT_EQ(&first.plan().schedule(nullptr), &second.plan().schedule(nullptr));
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [dtype, bh, bw] = info.param;
  const char* names[] = {"f32", "f16", "bf16", "f64", "e4m3", "e5m2"};
  const int index = int(dtype);
  return std::string(index >= 0 && index < 6 ? names[index] : "dtype") + "_" + std::to_string(bh) + "x" +
         std::to_string(bw);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Transpose,
    ::testing::Values(Case{BSRMM_DTYPE_F64, 2, 2}, Case{BSRMM_DTYPE_F64, 3, 5}, Case{BSRMM_DTYPE_F32, 1, 1},
                      Case{BSRMM_DTYPE_F32, 4, 2}, Case{BSRMM_DTYPE_F16, 8, 3}, Case{BSRMM_DTYPE_BF16, 5, 7},
                      Case{BSRMM_DTYPE_F32, 33, 40}),
    case_name);

TEST(TransposeFp8, ScalesFollowTheirBlocksAndValuesAloneAreRefused) {
  Random rng(0xf8);
  Context ctx(cpu);
  HostBsr a = random_bsr(rng, 4, 5, 2, 3, 0.5, BSRMM_DTYPE_FLOAT8_E4M3);
  ASSERT_GT(a.nnzb(), 1);
  const std::vector<float> row_scales = random_scales(rng, 4);
  bsrmm_bsr_desc desc = a.desc();
  Matrix matrix = Matrix::scaled(ctx, desc, scales_of(row_scales, BSRMM_SCALE_PER_BLOCK_ROW));
  Matrix at = matrix.transpose(ctx);
  const HostBsr at_host = exported(at);
  bsrmm_scale_kind kind{};
  int64_t count = 0;
  ASSERT_EQ(bsrmm_matrix_export_scales(at.get(), &kind, &count, nullptr), BSRMM_STATUS_SUCCESS);
  ASSERT_EQ(kind, BSRMM_SCALE_PER_BLOCK);
  ASSERT_EQ(count, a.nnzb());
  std::vector<float> scales(static_cast<size_t>(count));
  ASSERT_EQ(bsrmm_matrix_export_scales(at.get(), &kind, &count, scales.data()), BSRMM_STATUS_SUCCESS);
  // Block t of A^T lies in A's block row at_host.col_idx[t]: that row's scale.
  for (int64_t t = 0; t < count; ++t)
    EXPECT_EQ(scales[static_cast<size_t>(t)], row_scales[static_cast<size_t>(at_host.col_idx[static_cast<size_t>(t)])]);

  std::vector<unsigned char> out(a.values.size());
  EXPECT_EQ(bsrmm_matrix_transpose_values(ctx.get(), matrix.get(), out.data()), BSRMM_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(bsrmm_last_error()).find("bsrmm_matrix_transpose"), std::string::npos) << bsrmm_last_error();
}

TEST(TransposeErrors, NameTheArgumentAndTheRule) {
  Random rng(0xe7);
  Context ctx(cpu);
  HostBsr a = random_bsr(rng, 4, 4, 2, 2, 0.6, BSRMM_DTYPE_F32);
  ASSERT_GT(a.nnzb(), 0);
  bsrmm_bsr_desc desc = a.desc();
  Matrix matrix(ctx, desc);
  std::vector<float> out(static_cast<size_t>(a.nnzb() * 4) + 1);
  auto expect_invalid = [&](bsrmm_status got, const std::string& mentions) {
    EXPECT_EQ(got, BSRMM_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(bsrmm_last_error()).find(mentions), std::string::npos) << bsrmm_last_error();
  };
  expect_invalid(bsrmm_matrix_transpose_values(ctx.get(), matrix.get(), nullptr), "out is NULL");
  expect_invalid(bsrmm_matrix_transpose_values(ctx.get(), nullptr, out.data()), "a");
  expect_invalid(bsrmm_matrix_transpose_values(nullptr, matrix.get(), out.data()), "ctx");
  expect_invalid(bsrmm_matrix_transpose_values(ctx.get(), matrix.get(),
                                               reinterpret_cast<unsigned char*>(out.data()) + 2),
                 "aligned");
  void* own_values = const_cast<void*>(matrix.get()->matrix->values().data());
  expect_invalid(bsrmm_matrix_transpose_values(ctx.get(), matrix.get(), own_values), "overlaps");
  bsrmm_matrix_t result = reinterpret_cast<bsrmm_matrix_t>(0x1);  // reset to NULL on failure
  expect_invalid(bsrmm_matrix_transpose(ctx.get(), nullptr, &result), "a");
  EXPECT_EQ(result, nullptr);
  expect_invalid(bsrmm_matrix_transpose(ctx.get(), matrix.get(), nullptr), "out");

  // No stored block: nothing to write, so no memory is needed.
  HostBsr empty = random_bsr(rng, 3, 2, 2, 2, 0.0, BSRMM_DTYPE_F32);
  ASSERT_EQ(empty.nnzb(), 0);
  bsrmm_bsr_desc empty_desc = empty.desc();
  Matrix nothing(ctx, empty_desc);
  EXPECT_EQ(bsrmm_matrix_transpose_values(ctx.get(), nothing.get(), nullptr), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
  expect_transpose_of(exported(nothing.transpose(ctx)), empty, "no stored block");
}

}  // namespace
}  // namespace bsrmm::test
