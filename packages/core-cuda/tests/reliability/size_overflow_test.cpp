// Sizes whose products leave 32 (or 64) bits. Where the product is an offset the library must
// handle it exactly: operands with leading dimensions past 2^31 elements and a B taller than
// 2^31 rows live in lazily committed mappings (only the touched pages cost memory), and every
// result is checked element by element, with the elements around each line checked untouched.
// Where the product cannot be addressed at all, the call must be rejected with a message naming
// the argument — never a short allocation or a wrapped index — after which the same context
// still multiplies correctly.
#include "stress_support.hpp"

#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

constexpr int64_t two_pow_31 = int64_t{1} << 31;

// A dense operand over an anonymous mapping of its whole extent. Untouched pages read as zero
// bits, which the checks use as the "never written" marker.
class MappedDense {
 public:
  MappedDense(int64_t rows, int64_t cols, int64_t ld, bsrmm_layout layout, bsrmm_dtype dtype)
      : rows_(rows), cols_(cols), ld_(ld), layout_(layout), dtype_(dtype) {
    const int64_t outer = layout == BSRMM_LAYOUT_ROW_MAJOR ? rows : cols;
    const int64_t inner = layout == BSRMM_LAYOUT_ROW_MAJOR ? cols : rows;
    bytes_ = static_cast<size_t>((outer - 1) * ld + inner + 1) * dtype_size(dtype);  // +1: a guard element
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
  }
  ~MappedDense() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  MappedDense(const MappedDense&) = delete;
  MappedDense& operator=(const MappedDense&) = delete;

  bool mapped() const { return data_ != nullptr; }
  size_t bytes() const { return bytes_; }
  bsrmm_dense desc() const {
    return bsrmm_dense{data_, rows_, cols_, ld_, layout_, dtype_, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  }
  int64_t offset(int64_t i, int64_t j) const { return layout_ == BSRMM_LAYOUT_ROW_MAJOR ? i * ld_ + j : j * ld_ + i; }
  double get(int64_t i, int64_t j) const { return load(dtype_, at(offset(i, j))); }
  void set(int64_t i, int64_t j, double v) { store(dtype_, at(offset(i, j)), v); }
  // True when the element just past each line's end and before each line's start (inside the
  // mapping) still holds zero bits.
  bool neighbours_untouched() const {
    const int64_t outer = layout_ == BSRMM_LAYOUT_ROW_MAJOR ? rows_ : cols_;
    const int64_t inner = layout_ == BSRMM_LAYOUT_ROW_MAJOR ? cols_ : rows_;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t e : {o * ld_ + inner, o * ld_ - 1}) {
        if (e < 0 || e > (outer - 1) * ld_ + inner) continue;  // the last one is the guard
        if (load(dtype_, at(e)) != 0.0 || std::signbit(load(dtype_, at(e)))) return false;
      }
    }
    return true;
  }

 private:
  unsigned char* at(int64_t element) const { return data_ + static_cast<size_t>(element) * dtype_size(dtype_); }

  int64_t rows_, cols_, ld_;
  bsrmm_layout layout_;
  bsrmm_dtype dtype_;
  size_t bytes_ = 0;
  unsigned char* data_ = nullptr;
};

#define SKIP_UNLESS_MAPPED(m) \
  if (!(m).mapped()) GTEST_SKIP() << "cannot reserve " << (m).bytes() << " bytes of address space (overcommit off?)"

const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
const char* const variants[] = {"cpu_blocked_simd", "cpu_reference_f64acc"};

std::string label(bsrmm_dtype dtype, const char* variant, bsrmm_layout b, bsrmm_layout c) {
  static const char* names[] = {"f32", "f16", "bf16", "f64"};
  return std::string(names[dtype]) + " " + variant + (b == BSRMM_LAYOUT_ROW_MAJOR ? " B row" : " B col") +
         (c == BSRMM_LAYOUT_ROW_MAJOR ? "-major, C row-major" : "-major, C col-major");
}

// C = alpha A B with B and C leading dimensions just past 2^31 elements, so element offsets
// pass 2^31 (row-major, a few lines) and 2^32 (column-major, 3 columns).
TEST(SizeOverflow, LeadingDimensionsPast2To31AreExact) {
  const int64_t ld = two_pow_31 + 5;
  int cases = 0;
  for (bsrmm_dtype dtype : dtypes) {
    Random rng(static_cast<uint64_t>(dtype) + 1);
    const HostBsr host = random_bsr(rng, 3, 2, 2, 3, 0.6, dtype);
    Context ctx;
    ctx.set_tuning_mode(BSRMM_TUNING_OFF);
    const Matrix a = matrix_of(ctx, host);
    const std::vector<double> dense_a = host.to_dense();
    for (const char* variant : variants) {
      ctx.set_variant(variant);
      for (bsrmm_layout bl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
        for (bsrmm_layout cl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
          const int64_t n = 3;
          MappedDense b(host.cols, n, ld, bl, dtype);
          MappedDense c(host.rows, n, ld, cl, dtype);
          SKIP_UNLESS_MAPPED(b);
          SKIP_UNLESS_MAPPED(c);
          for (int64_t i = 0; i < host.cols; ++i)
            for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(dtype, rng.uniform(-1, 1)));
          for (int64_t i = 0; i < host.rows; ++i)
            for (int64_t j = 0; j < n; ++j) c.set(i, j, std::nan(""));
          bsrmm_matmul_options options = matmul_options();
          options.alpha = -1.5;
          bsrmm_dense bd = b.desc(), cd = c.desc();
          matmul(ctx, a, bd, cd, options);
          const std::string what = label(dtype, variant, bl, cl);
          for (int64_t i = 0; i < host.rows; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double want = 0, magnitude = 0;
              for (int64_t p = 0; p < host.cols; ++p) {
                want += dense_a[static_cast<size_t>(i * host.cols + p)] * b.get(p, j);
                magnitude += std::fabs(dense_a[static_cast<size_t>(i * host.cols + p)] * b.get(p, j));
              }
              want *= options.alpha;
              magnitude *= std::fabs(options.alpha);
              const double bound = 1.5 * (accumulation_epsilon(dtype) + output_epsilon(dtype)) * magnitude + 0x1p-24;
              EXPECT_NEAR(c.get(i, j), want, bound) << what << ": C(" << i << ", " << j << ")";
            }
          }
          EXPECT_TRUE(c.neighbours_untouched()) << what << ": an element next to C was written";
          ++cases;
        }
      }
    }
  }
  std::printf("[ overflow ] %d multiplies with ld = 2^31 + 5, offsets up to 2^32\n", cases);
}

// A has one block row and 2^23 + 1 block columns of width 256: B is taller than 2^31 rows, and
// only the rows under A's two blocks exist in memory; offsets col * 256 * ldb pass 2^34. Only
// the reference variant runs: cpu_blocked_simd packs all of B first (K * N elements whatever
// A's sparsity: 64 GiB here), which is a clean OUT_OF_MEMORY on a small machine and minutes of
// copying on a large one.
TEST(SizeOverflow, BTallerThan2To31RowsIsExact) {
  const int32_t bw = 256, bh = 2;
  const int64_t block_cols = (two_pow_31 / bw) + 1;
  HostBsr host;
  host.rows = bh;
  host.cols = block_cols * bw;
  host.block_height = bh;
  host.block_width = bw;
  host.dtype = BSRMM_DTYPE_F32;
  host.row_ptr = {0, 2};
  host.col_idx = {0, block_cols - 1};
  host.values.resize(2 * bh * bw * sizeof(float));
  Random rng(5);
  for (int64_t p = 0; p < 2; ++p)
    for (int32_t i = 0; i < bh; ++i)
      for (int32_t j = 0; j < bw; ++j) host.set_value(p, i, j, round_to(host.dtype, rng.uniform(-1, 1)));

  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  bsrmm_bsr_desc desc = host.desc();
  const Matrix a(ctx, desc);
  int exact = 0;
  for (const char* variant : {"cpu_reference_f64acc"}) {
    ctx.set_variant(variant);
    for (int64_t n : {8, 5}) {
      MappedDense b(host.cols, n, n, BSRMM_LAYOUT_ROW_MAJOR, host.dtype);
      SKIP_UNLESS_MAPPED(b);
      for (int64_t p = 0; p < 2; ++p)
        for (int32_t k = 0; k < bw; ++k)
          for (int64_t j = 0; j < n; ++j) b.set(host.col_idx[static_cast<size_t>(p)] * bw + k, j, rng.uniform(-1, 1));
      HostDense c(bh, n, host.dtype);
      bsrmm_dense bd = b.desc(), cd = c.desc();
      const bsrmm_status status = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr);
      const std::string what = std::string(variant) + " n = " + std::to_string(n);
      ASSERT_EQ(status, BSRMM_STATUS_SUCCESS) << what << ": " << bsrmm_last_error();
      for (int32_t i = 0; i < bh; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double want = 0, magnitude = 0;
          for (int64_t p = 0; p < 2; ++p) {
            for (int32_t k = 0; k < bw; ++k) {
              const double term = host.value(p, i, k) * b.get(host.col_idx[static_cast<size_t>(p)] * bw + k, j);
              want += term;
              magnitude += std::fabs(term);
            }
          }
          EXPECT_NEAR(c.get(i, j), want, 2e-6 * magnitude + 1e-30) << what << ": C(" << i << ", " << j << ")";
        }
      }
      ++exact;
    }
  }
  std::printf("[ overflow ] B with %lld rows: %d exact multiplies\n", static_cast<long long>(host.cols), exact);
}

// Dense conversions through a leading dimension past 2^31.
TEST(SizeOverflow, DenseConversionsWithHugeLeadingDimension) {
  Random rng(9);
  const HostBsr host = random_bsr(rng, 2, 3, 2, 2, 0.7, BSRMM_DTYPE_F32);
  Context ctx;
  const Matrix a = matrix_of(ctx, host);
  for (bsrmm_layout layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
    MappedDense out(host.rows, host.cols, two_pow_31 + 1, layout, host.dtype);
    SKIP_UNLESS_MAPPED(out);
    bsrmm_dense od = out.desc();
    a.to_dense(ctx, od);
    const std::vector<double> dense = host.to_dense();
    for (int64_t i = 0; i < host.rows; ++i)
      for (int64_t j = 0; j < host.cols; ++j)
        EXPECT_EQ(out.get(i, j), dense[static_cast<size_t>(i * host.cols + j)]) << "(" << i << ", " << j << ")";
    EXPECT_TRUE(out.neighbours_untouched());
    const Matrix back = Matrix::from_dense(ctx, od, host.block_height, host.block_width);
    EXPECT_EQ(back.info().nnzb, host.nnzb());
  }
}

std::string rejected(bsrmm_status status) {
  return std::string(bsrmm_status_name(status)) + ": " + bsrmm_last_error();
}

// Extents whose element count or byte count does not fit 64 bits.
TEST(SizeOverflow, UnaddressableDenseExtentsAreRejected) {
  Random rng(3);
  const HostBsr host = random_bsr(rng, 2, 2, 2, 2, 1.0, BSRMM_DTYPE_F64);
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  const Matrix a = matrix_of(ctx, host);
  HostDense b(host.cols, 4, BSRMM_DTYPE_F64), c(host.rows, 4, BSRMM_DTYPE_F64);
  for (int64_t i = 0; i < host.cols; ++i)
    for (int64_t j = 0; j < 4; ++j) b.set(i, j, rng.uniform(-1, 1));
  const HostDense c_before = c;
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;

  bsrmm_dense bd = b.desc(), cd = c.desc();
  bd.ld = huge;  // (rows - 1) * ld overflows
  bsrmm_status status = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr);
  EXPECT_EQ(status, BSRMM_STATUS_INVALID_ARGUMENT) << rejected(status);
  EXPECT_NE(std::string(bsrmm_last_error()).find("B extent"), std::string::npos) << bsrmm_last_error();

  bd = b.desc();
  cd.layout = BSRMM_LAYOUT_COL_MAJOR;
  cd.ld = std::numeric_limits<int64_t>::max() / 4;  // 3 * ld fits, but not its 8-byte elements
  status = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr);
  EXPECT_EQ(status, BSRMM_STATUS_INVALID_ARGUMENT) << rejected(status);
  EXPECT_NE(std::string(bsrmm_last_error()).find("C extent"), std::string::npos) << bsrmm_last_error();
  EXPECT_TRUE(std::isnan(c.get(0, 0))) << "a rejected multiply wrote C";

  bsrmm_dense wide{nullptr, huge, huge, huge, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  bsrmm_matrix_t out = nullptr;
  status = bsrmm_matrix_from_dense(ctx.get(), &wide, 1, 1, &out);
  EXPECT_EQ(status, BSRMM_STATUS_INVALID_ARGUMENT) << rejected(status);
  EXPECT_EQ(out, nullptr);

  bd = b.desc();
  cd = c.desc();
  matmul(ctx, a, bd, cd);
  expect_matches(c, reference_matmul(host.to_dense(), host.rows, host.cols, BSRMM_OP_NONE, b, c_before, 1.0, 0.0,
                                     nullptr, BSRMM_ACTIVATION_NONE),
                 "the same matrix and operands with valid extents");
  expect_still_works(ctx, "unaddressable extents");
}

// Counts past int32 that bsrmm stores as int32, and products of sizes past int64.
TEST(SizeOverflow, CountsPastInt32AreRejected) {
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  std::vector<int64_t> row_ptr{0, 1};
  std::vector<int64_t> col_idx{0};
  std::vector<float> values(4, 1.0f);
  auto create = [&](bsrmm_bsr_desc d) {
    bsrmm_matrix_t out = nullptr;
    const bsrmm_status status = bsrmm_matrix_create(ctx.get(), &d, 0, &out);
    EXPECT_EQ(out, nullptr);
    return status;
  };
  const bsrmm_bsr_desc base{2, 2, 2, 2, 1, row_ptr.data(), col_idx.data(), BSRMM_INDEX_I64, values.data(),
                            BSRMM_DTYPE_F32, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  struct Case {
    const char* what;
    bsrmm_bsr_desc desc;
    const char* message;
  };
  std::vector<Case> cases;
  bsrmm_bsr_desc d = base;
  d.rows = (two_pow_31 + 1) * 2;  // block rows past INT32_MAX
  cases.push_back({"block rows", d, "exceeds INT32_MAX"});
  d = base;
  d.cols = std::numeric_limits<int64_t>::max() - 1;  // block columns past INT32_MAX
  cases.push_back({"block columns", d, "exceeds INT32_MAX"});
  d = base;
  d.nnzb = two_pow_31;
  cases.push_back({"nnzb", d, "exceeds INT32_MAX"});
  d = base;
  d.rows = d.cols = two_pow_31 * 2;
  d.block_height = d.block_width = 256;
  d.nnzb = std::numeric_limits<int32_t>::max();  // capacity fine; values need 2^47 bytes: not read
  d.row_ptr = nullptr;
  cases.push_back({"row_ptr missing for 2^24 block rows", d, "row_ptr is NULL"});
  for (const Case& c : cases) {
    const bsrmm_status status = create(c.desc);
    EXPECT_EQ(status, BSRMM_STATUS_INVALID_ARGUMENT) << c.what << ": " << rejected(status);
    EXPECT_NE(std::string(bsrmm_last_error()).find(c.message), std::string::npos) << c.what << ": " << bsrmm_last_error();
  }
  row_ptr[1] = two_pow_31;  // an int64 index past int32
  EXPECT_EQ(create(base), BSRMM_STATUS_INVALID_ARGUMENT) << bsrmm_last_error();
  row_ptr[1] = 1;
  col_idx[0] = int64_t{1} << 40;
  EXPECT_EQ(create(base), BSRMM_STATUS_INVALID_ARGUMENT) << bsrmm_last_error();
  expect_still_works(ctx, "counts past INT32_MAX");
}

}  // namespace
}  // namespace bsrmm::test
