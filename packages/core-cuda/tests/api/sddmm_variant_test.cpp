// SDDMM kernels as first-class variants through the C ABI: listed after the matmul variants with
// their kind (bsrmm_variant_get_kind), forced with bsrmm_context_set_variant (each CPU SDDMM
// variant runs, matches the float64 reference and is the last variant), and a forced variant of
// the other operation refused by bsrmm_sddmm and bsrmm_matmul with INVALID_ARGUMENT, the output
// untouched. (The CUDA SDDMM variants forced one by one: tests/cuda/sddmm_test.cpp.)
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"
#include "../support/sddmm_reference.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

bool message_has(const std::string& fragment) {
  return std::string(bsrmm_last_error()).find(fragment) != std::string::npos;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

struct Listed {
  std::string name;
  bsrmm_variant_kind kind;
};

std::vector<Listed> listed_variants() {
  std::vector<Listed> list;
  for (int32_t i = 0; i < bsrmm_variant_count(); ++i) {
    Listed entry{bsrmm_variant_name(i), BSRMM_VARIANT_MATMUL};
    EXPECT_EQ(bsrmm_variant_get_kind(i, &entry.kind), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
    list.push_back(entry);
  }
  return list;
}

std::vector<std::string> cpu_sddmm_variants() {
  std::vector<std::string> names;
  for (const Listed& v : listed_variants())
    if (v.kind == BSRMM_VARIANT_SDDMM && starts_with(v.name, "cpu_")) names.push_back(v.name);
  return names;
}

struct Case {
  int64_t block_rows = 5, block_cols = 4;
  int32_t bh = 3, bw = 5;
  double density = 0.5;
  int64_t t = 41;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  bsrmm_layout x_layout = BSRMM_LAYOUT_COL_MAJOR, y_layout = BSRMM_LAYOUT_ROW_MAJOR;
  int64_t x_pad = 1, y_pad = 2;
  double alpha = 0.75, beta = 0;
};

TEST(SddmmVariant, ListedAfterTheMatmulVariantsWithTheirKind) {
  const std::vector<Listed> list = listed_variants();
  bool seen_sddmm = false;
  for (const Listed& v : list) {
    // Every SDDMM kernel says so in its name (cpu_sddmm_, cuda_sddmm_simt_, sm80_sddmm_,
    // sm90_sddmm_); no matmul kernel does.
    EXPECT_EQ(v.kind == BSRMM_VARIANT_SDDMM, v.name.find("_sddmm_") != std::string::npos) << v.name;
    if (v.kind == BSRMM_VARIANT_SDDMM) seen_sddmm = true;
    EXPECT_FALSE(seen_sddmm && v.kind == BSRMM_VARIANT_MATMUL)
        << v.name << ": matmul variants keep the indices they had before the SDDMM ones were listed";
  }
  const std::vector<std::string> cpu = cpu_sddmm_variants();
  EXPECT_EQ(cpu, (std::vector<std::string>{"cpu_sddmm_blocked", "cpu_sddmm_reference_f64acc"}));
  if (bsrmm_cuda_compiled()) {
    const auto has_prefix = [&](const char* prefix) {
      for (const Listed& v : list)
        if (v.kind == BSRMM_VARIANT_SDDMM && starts_with(v.name, prefix)) return true;
      return false;
    };
    EXPECT_TRUE(has_prefix("cuda_sddmm_simt_"));
    EXPECT_TRUE(has_prefix("sm80_sddmm_"));
    EXPECT_TRUE(has_prefix("sm90_sddmm_"));
  }

  bsrmm_variant_kind kind = BSRMM_VARIANT_SDDMM;
  EXPECT_EQ(bsrmm_variant_get_kind(bsrmm_variant_count(), &kind), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("index = " + std::to_string(bsrmm_variant_count()) + " is outside"));
  EXPECT_EQ(bsrmm_variant_get_kind(-1, &kind), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(kind, BSRMM_VARIANT_SDDMM) << "a refused call leaves *out alone";
  EXPECT_EQ(bsrmm_variant_get_kind(0, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("out is NULL"));
}

// Each CPU SDDMM variant, forced, on every dtype with both betas: the float64 reference's values
// and its own name as the last variant.
TEST(SddmmVariant, EachForcedCpuVariantRunsAndIsTheLastVariant) {
  const std::vector<std::string> names = cpu_sddmm_variants();
  ASSERT_FALSE(names.empty());
  uint64_t seed = 4100;
  for (const std::string& name : names) {
    for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64}) {
      for (double beta : {0.0, -0.5}) {
        Case tc;
        tc.dtype = dtype;
        tc.beta = beta;
        Random rng(seed++);
        SddmmProblem p = make_sddmm_problem(tc, rng);
        Context ctx;
        ctx.set_num_threads(2);
        ctx.set_variant(name);
        bsrmm_bsr_desc desc = p.pattern.desc();
        Matrix pattern(ctx, desc);
        bsrmm_dense xd = p.x.desc(), yd = p.y.desc(), vd = p.values.desc();
        sddmm(ctx, pattern, xd, yd, vd, tc.alpha, tc.beta);
        const std::string what = name + " dtype " + std::to_string(dtype) + " beta " + std::to_string(beta);
        expect_matches(p.values, p.expected(), what);
        EXPECT_EQ(ctx.last_variant(), name) << what;
      }
    }
  }
}

// A context forced to a matmul variant runs no SDDMM, and one forced to an SDDMM variant no
// matmul: INVALID_ARGUMENT naming both, the output byte for byte as it was, the last variant
// still the one that ran before; clearing the variant lets both run again.
TEST(SddmmVariant, ForcedVariantOfTheOtherOperationIsRefused) {
  Case tc;
  tc.beta = 0.5;  // random values before: a refused call must leave them exactly so
  Random rng(4200);
  SddmmProblem p = make_sddmm_problem(tc, rng);
  Context ctx;
  bsrmm_bsr_desc desc = p.pattern.desc();
  Matrix pattern(ctx, desc);
  bsrmm_dense xd = p.x.desc(), yd = p.y.desc(), vd = p.values.desc();
  bsrmm_sddmm_options sddmm_options = bsrmm_sddmm_options_default();

  ctx.set_variant("cpu_sddmm_reference_f64acc");
  HostDense b(p.pattern.cols, 3, tc.dtype), c(p.pattern.rows, 3, tc.dtype);
  fill_random(b, rng);
  fill_random(c, rng);
  const std::vector<unsigned char> c_before = c.bytes();
  bsrmm_dense bd = b.desc(), cd = c.desc();
  EXPECT_EQ(bsrmm_matmul(ctx.get(), pattern.get(), &bd, &cd, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("forced variant \"cpu_sddmm_reference_f64acc\" is an SDDMM variant and "
                          "bsrmm_matmul runs matmul variants"))
      << bsrmm_last_error();
  EXPECT_EQ(c.bytes(), c_before);
  EXPECT_EQ(ctx.last_variant(), "");

  ctx.set_variant("cpu_reference_f64acc");
  const std::vector<unsigned char> values_before = p.values.bytes();
  EXPECT_EQ(bsrmm_sddmm(ctx.get(), pattern.get(), &xd, &yd, &vd, &sddmm_options),
            BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("forced variant \"cpu_reference_f64acc\" is a matmul variant and "
                          "bsrmm_sddmm runs SDDMM variants"))
      << bsrmm_last_error();
  EXPECT_EQ(p.values.bytes(), values_before);
  EXPECT_EQ(ctx.last_variant(), "");

  ctx.set_variant("");
  sddmm_options.alpha = tc.alpha;
  sddmm_options.beta = tc.beta;
  ASSERT_EQ(bsrmm_sddmm(ctx.get(), pattern.get(), &xd, &yd, &vd, &sddmm_options), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
  expect_matches(p.values, p.expected(), "unforced after the refusals");
  EXPECT_EQ(ctx.last_variant(), "cpu_sddmm_blocked");
}

}  // namespace
}  // namespace bsrmm::test
