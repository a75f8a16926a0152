// Bugs the fuzz targets found, one test each; the inputs themselves replay from fuzz/regressions/
// (ctest fuzz_replay_*) in every build.
//
// 1. An enum field holding a value outside its enumerators (dtype = 83, as a C caller may pass)
//    was loaded in C++ as an enum without a fixed underlying type: undefined behaviour (UBSan:
//    "load of value 83, which is not a valid value for type 'bsrmm_dtype'"), under which a
//    compiler may drop the very range check that rejects it. bsrmm.h now gives every enum the
//    underlying type int in C++.
// 2. Exporting a matrix without blocks passed an empty vector's data() (NULL) to memcpy, which
//    is undefined even for 0 bytes (UBSan, bsr_matrix.cpp).
// 3. cpu_blocked_simd on a block row without blocks computed `B + offset` from the B it had not
//    packed (NULL): undefined (UBSan, blocked_rows.cpp), also hit by 9 random core tests.
// Tests 2 and 3 compute the right answer either way; the sanitized build is where they fail.
// 4. (the model, not the core) The matmul fuzzer called every options->struct_size below
//    sizeof(bsrmm_matmul_options) invalid, but exactly the size before b_scales was appended is an
//    older caller's and valid (any other smaller size is not): the core ran it and the fuzzer
//    aborted. fp8_rules_test.cpp tests the older size.
#include "support/host_arrays.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace bsrmm::test {
namespace {

template <typename Enum>
constexpr bool int_based = std::is_same_v<std::underlying_type_t<Enum>, int>;
static_assert(int_based<bsrmm_status> && int_based<bsrmm_dtype> && int_based<bsrmm_index_type> &&
                  int_based<bsrmm_layout> && int_based<bsrmm_op> && int_based<bsrmm_device_type> &&
                  int_based<bsrmm_f32_mode> && int_based<bsrmm_activation> && int_based<bsrmm_tuning_mode> &&
                  int_based<bsrmm_scale_kind>,
              "every C ABI enum must have the fixed underlying type int in C++ (see above)");

// 6: one past the last dtype (4 and 5 are the fp8 ones, which fp8_rules_test.cpp covers).
const int wild_values[] = {83, -1, 6, INT_MIN, INT_MAX};

bool rejected_naming(bsrmm_status status, const std::string& words) {
  return status == BSRMM_STATUS_INVALID_ARGUMENT && std::string(bsrmm_last_error()).find(words) != std::string::npos;
}

TEST(FuzzRegressions, EnumValuesOutsideTheirEnumeratorsAreRejected) {
  Context ctx;
  std::vector<int32_t> row_ptr{0, 1}, col_idx{0};
  std::vector<float> values(4, 1.0f);
  const bsrmm_bsr_desc good{2, 2, 2, 2, 1, row_ptr.data(), col_idx.data(), BSRMM_INDEX_I32, values.data(),
                            BSRMM_DTYPE_F32, cpu()};
  const Matrix a(ctx, good);
  HostDense b(2, 3, BSRMM_DTYPE_F32), c(2, 3, BSRMM_DTYPE_F32);
  b.fill(1.0);
  for (int wild : wild_values) {
    const std::string v = " = " + std::to_string(wild) + " is not a ";
    bsrmm_matrix_t out = nullptr;
    bsrmm_bsr_desc desc = good;
    desc.dtype = static_cast<bsrmm_dtype>(wild);
    EXPECT_TRUE(rejected_naming(bsrmm_matrix_create(ctx.get(), &desc, 0, &out), "desc.dtype" + v)) << bsrmm_last_error();
    desc = good;
    desc.index_type = static_cast<bsrmm_index_type>(wild);
    EXPECT_TRUE(rejected_naming(bsrmm_matrix_create(ctx.get(), &desc, 0, &out), "desc.index_type" + v))
        << bsrmm_last_error();
    desc = good;
    desc.device.type = static_cast<bsrmm_device_type>(wild);
    EXPECT_TRUE(rejected_naming(bsrmm_matrix_create(ctx.get(), &desc, 0, &out), "desc.device.type" + v))
        << bsrmm_last_error();
    EXPECT_EQ(out, nullptr);

    bsrmm_dense bd = b.desc(), cd = c.desc();
    bd.layout = static_cast<bsrmm_layout>(wild);
    EXPECT_TRUE(rejected_naming(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr), "B.layout" + v)) << bsrmm_last_error();
    bd = b.desc();
    cd.dtype = static_cast<bsrmm_dtype>(wild);
    EXPECT_TRUE(rejected_naming(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr), "C.dtype" + v)) << bsrmm_last_error();
    cd = c.desc();
    bsrmm_matmul_options options = matmul_options();
    options.op_a = static_cast<bsrmm_op>(wild);
    EXPECT_TRUE(rejected_naming(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, &options), "options->op_a" + v))
        << bsrmm_last_error();
    options = matmul_options();
    options.activation = static_cast<bsrmm_activation>(wild);
    EXPECT_TRUE(rejected_naming(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, &options), "options->activation" + v))
        << bsrmm_last_error();

    EXPECT_TRUE(rejected_naming(bsrmm_context_set_f32_mode(ctx.get(), static_cast<bsrmm_f32_mode>(wild)), "mode" + v))
        << bsrmm_last_error();
    EXPECT_TRUE(rejected_naming(bsrmm_context_set_tuning_mode(ctx.get(), static_cast<bsrmm_tuning_mode>(wild)),
                                "mode" + v))
        << bsrmm_last_error();
    EXPECT_TRUE(rejected_naming(
        bsrmm_matrix_export(a.get(), static_cast<bsrmm_index_type>(wild), row_ptr.data(), nullptr, nullptr),
        "index_type" + v))
        << bsrmm_last_error();
    bsrmm_context_t none = nullptr;
    EXPECT_TRUE(rejected_naming(bsrmm_context_create(bsrmm_device{static_cast<bsrmm_device_type>(wild), 0}, &none),
                                "device.type" + v))
        << bsrmm_last_error();
  }
  EXPECT_TRUE(std::isnan(c.get(0, 0))) << "a rejected multiply wrote C";
}

TEST(FuzzRegressions, ExportOfAMatrixWithoutBlocks) {
  Context ctx;
  std::vector<int32_t> row_ptr{0, 0, 0};
  const bsrmm_bsr_desc desc{4, 6, 2, 3, 0, row_ptr.data(), nullptr, BSRMM_INDEX_I32, nullptr, BSRMM_DTYPE_F16, cpu()};
  const Matrix a(ctx, desc);
  std::vector<int32_t> rows(3, -1), cols(1, -1);
  std::vector<int64_t> rows64(3, -1), cols64(1, -1);
  std::vector<uint16_t> values(1, 0xFFFF);
  a.export_to(BSRMM_INDEX_I32, rows.data(), cols.data(), values.data());
  a.export_to(BSRMM_INDEX_I64, rows64.data(), cols64.data(), values.data());
  EXPECT_EQ(rows, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(rows64, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(cols[0], -1) << "nothing to write past an empty col_idx";
  EXPECT_EQ(values[0], 0xFFFF) << "nothing to write past empty values";
}

TEST(FuzzRegressions, BlockedVariantOnRowsWithoutBlocks) {
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_F64}) {
    // Block rows 0 and 2 are empty; with nnzb == 0 on a fresh context (no workspace yet) B is
    // never packed at all.
    for (bool any_block : {false, true}) {
      Context ctx;
      ctx.set_tuning_mode(BSRMM_TUNING_OFF);
      ctx.set_variant("cpu_blocked_simd");
      std::vector<int32_t> row_ptr = any_block ? std::vector<int32_t>{0, 0, 1, 1} : std::vector<int32_t>{0, 0, 0, 0};
      HostBsr host;
      host.rows = 6;
      host.cols = 4;
      host.block_height = host.block_width = 2;
      host.dtype = dtype;
      host.row_ptr.assign(row_ptr.begin(), row_ptr.end());
      if (any_block) host.col_idx = {1};
      host.values.resize(static_cast<size_t>(host.nnzb()) * 4 * dtype_size(dtype));
      for (int64_t p = 0; p < host.nnzb(); ++p)
        for (int32_t i = 0; i < 2; ++i)
          for (int32_t j = 0; j < 2; ++j) host.set_value(p, i, j, 1 + i - j);
      bsrmm_bsr_desc desc = host.desc();
      const Matrix a(ctx, desc);
      HostDense b(4, 13, dtype), c(6, 13, dtype);
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 13; ++j) b.set(i, j, static_cast<double>((i * 13 + j) % 7) - 3);
      bsrmm_dense bd = b.desc(), cd = c.desc();
      matmul(ctx, a, bd, cd, matmul_options());
      const std::vector<double> dense = host.to_dense();
      for (int64_t i = 0; i < 6; ++i) {
        for (int64_t j = 0; j < 13; ++j) {
          double want = 0;
          for (int64_t k = 0; k < 4; ++k) want += dense[static_cast<size_t>(i * 4 + k)] * b.get(k, j);
          EXPECT_EQ(c.get(i, j), want) << "C(" << i << ", " << j << ")";
        }
      }
    }
  }
}

}  // namespace
}  // namespace bsrmm::test
