// bsrmm_matmul: checks the operands against each other, applies op(A) through the plan, picks
// the backend and variant, and runs it.
#include "../common/device_runtime.hpp"
#include "../common/dtype.hpp"
#include "../cpu/cpu_backend.hpp"
#include "../matrix/dense_operand.hpp"
#include "../matrix/plan.hpp"
#include "guard.hpp"
#include "handles.hpp"

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>

#if BSRMM_WITH_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace {

using bsrmm::api::guarded;
using bsrmm::api::require;
using bsrmm::detail::describe;
using bsrmm::detail::invalid_argument;
using bsrmm::matrix::BsrMatrix;

bsrmm_matmul_options read_options(const bsrmm_matmul_options* given) {
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  if (given == nullptr) return options;
  if (given->struct_size < sizeof(bsrmm_matmul_options)) {
    invalid_argument("options->struct_size = ", given->struct_size, " < ",
                     sizeof(bsrmm_matmul_options),
                     " (initialise options with bsrmm_matmul_options_default())");
  }
  // A newer caller's struct may be longer; the fields this version knows come first.
  std::memcpy(&options, given, sizeof(options));
  options.struct_size = sizeof(options);
  if (!bsrmm::detail::is_valid(options.op_a)) {
    invalid_argument("options->op_a = ", static_cast<int>(options.op_a),
                     " is not a bsrmm_op (0 = NONE, 1 = TRANSPOSE)");
  }
  if (!bsrmm::detail::is_valid(options.activation)) {
    invalid_argument("options->activation = ", static_cast<int>(options.activation),
                     " is not a bsrmm_activation (0 = NONE, 1 = RELU, 2 = GELU, 3 = SILU)");
  }
  return options;
}

void check_on_context(bsrmm_device device, bsrmm_device context, const char* what) {
  if (!bsrmm::detail::same_device(device, context)) {
    invalid_argument(what, " is on ", describe(device), " but the context is on ",
                     describe(context));
  }
}

bool spans_overlap(const void* x, std::size_t x_bytes, const void* y, std::size_t y_bytes) {
  const auto x0 = reinterpret_cast<std::uintptr_t>(x);
  const auto y0 = reinterpret_cast<std::uintptr_t>(y);
  return x_bytes != 0 && y_bytes != 0 && x0 < y0 + y_bytes && y0 < x0 + x_bytes;
}

// Every rule that relates A, B, C and the bias to each other and to the context.
void check_operands(const bsrmm_context_s& ctx, const BsrMatrix& a, const bsrmm_dense& b,
                    const bsrmm_dense& c, const bsrmm_matmul_options& options) {
  bsrmm::matrix::validate_dense(b, "B");
  bsrmm::matrix::validate_dense(c, "C");
  check_on_context(a.device(), ctx.device, "A");
  check_on_context(b.device, ctx.device, "B");
  check_on_context(c.device, ctx.device, "C");

  if (b.dtype != a.dtype() || c.dtype != a.dtype()) {
    bsrmm::detail::fail(BSRMM_STATUS_UNSUPPORTED, "mixed dtypes are not supported: A is ",
                        bsrmm::detail::name(a.dtype()), ", B is ", bsrmm::detail::name(b.dtype),
                        ", C is ", bsrmm::detail::name(c.dtype));
  }

  const bool transpose = options.op_a == BSRMM_OP_TRANSPOSE;
  const int64_t m = transpose ? a.shape().cols : a.shape().rows;
  const int64_t k = transpose ? a.shape().rows : a.shape().cols;
  const char* op = transpose ? "op(A) = A^T" : "op(A) = A";
  if (b.rows != k) {
    invalid_argument("B.rows = ", b.rows, " but ", op, " has ", k, " columns (A is ",
                     a.shape().rows, " x ", a.shape().cols, ")");
  }
  if (c.rows != m) {
    invalid_argument("C.rows = ", c.rows, " but ", op, " has ", m, " rows (A is ",
                     a.shape().rows, " x ", a.shape().cols, ")");
  }
  if (c.cols != b.cols) invalid_argument("C.cols = ", c.cols, " but B.cols = ", b.cols);

  bsrmm::detail::check_pointer_on(b.data, b.device, "B.data");
  bsrmm::detail::check_pointer_on(c.data, c.device, "C.data");
  if (bsrmm::matrix::dense_overlaps(b, c)) {
    invalid_argument("C overlaps B in memory: the output must not alias an input");
  }
  if (spans_overlap(c.data, bsrmm::matrix::dense_extent_bytes(c), a.values().data(),
                    a.value_bytes())) {
    invalid_argument("C overlaps A's values in memory: the output must not alias an input");
  }
  if (options.bias != nullptr) {
    const std::size_t element = bsrmm::detail::element_size(c.dtype);
    if (reinterpret_cast<std::uintptr_t>(options.bias) % element != 0) {
      invalid_argument("options->bias is not aligned to ", element, " bytes (the size of ",
                       bsrmm::detail::name(c.dtype), ")");
    }
    bsrmm::detail::check_pointer_on(options.bias, c.device, "options->bias");
    if (spans_overlap(c.data, bsrmm::matrix::dense_extent_bytes(c), options.bias,
                      static_cast<std::size_t>(c.rows) * element)) {
      invalid_argument("C overlaps options->bias in memory: the output must not alias an input");
    }
  }
}

bsrmm::detail::ThreadPool& pool_for(bsrmm_context_s& ctx, int32_t num_threads) {
  const int threads = num_threads > 0 ? num_threads : bsrmm::detail::hardware_threads();
  if (!ctx.pool || ctx.pool->size() != threads) {
    ctx.pool.reset();
    ctx.pool = std::make_unique<bsrmm::detail::ThreadPool>(threads);
  }
  return *ctx.pool;
}

std::string run_cpu(bsrmm_context_s& ctx, const bsrmm::api::ContextSettings& settings,
                    const BsrMatrix& a, const bsrmm_dense& b, const bsrmm_dense& c,
                    const bsrmm_matmul_options& options) {
  const bsrmm::matrix::Schedule& schedule = a.plan().schedule(a, nullptr);
  const std::string variant =
      settings.forced_variant.empty() ? bsrmm::cpu::blocked_variant : settings.forced_variant;
  const bool blocked = variant == bsrmm::cpu::blocked_variant;

  bsrmm::cpu::MatmulArgs args{};
  const bsrmm::matrix::BsrShape& shape = a.shape();
  args.a = bsrmm::cpu::BsrView{shape.block_row_count,
                               shape.block_col_count,
                               shape.block_height,
                               shape.block_width,
                               shape.nnzb,
                               a.row_ptr().data(),
                               a.col_idx().data(),
                               a.values().data(),
                               nullptr,
                               schedule.work_prefix.data(),
                               a.dtype()};
  if (blocked && a.dtype() != BSRMM_DTYPE_F64 && shape.nnzb > 0) {
    args.a.values_f32 = a.plan().values_f32(a);
  }
  args.b = b;
  args.c = c;
  args.alpha = options.alpha;
  args.beta = options.beta;
  args.bias = options.bias;
  args.activation = options.activation;

  std::lock_guard<std::mutex> lock(ctx.cpu_mutex);
  bsrmm::detail::ThreadPool& pool = pool_for(ctx, settings.num_threads);
  if (blocked) {
    bsrmm::cpu::matmul_blocked(args, pool, ctx.workspace);
  } else {
    bsrmm::cpu::matmul_reference(args, pool);
  }
  return variant;
}

#if BSRMM_WITH_CUDA
std::string run_cuda(const bsrmm_context_s& ctx, const bsrmm::api::ContextSettings& settings,
                     const BsrMatrix& a, const bsrmm_dense& b, const bsrmm_dense& c,
                     const bsrmm_matmul_options& options) {
  const bsrmm::matrix::Schedule& schedule = a.plan().schedule(a, settings.stream);
  const bsrmm::matrix::BsrShape& shape = a.shape();
  bsrmm::cuda::MatmulArgs args{};
  args.a = bsrmm::cuda::BsrView{shape.block_row_count,
                                shape.block_col_count,
                                shape.block_height,
                                shape.block_width,
                                shape.nnzb,
                                a.device_row_ptr().as<const int32_t>(),
                                a.device_col_idx().as<const int32_t>(),
                                a.values().data(),
                                schedule.device_row_order.as<const int32_t>(),
                                a.dtype()};
  args.b = bsrmm::cuda::DenseView{b.data, b.rows, b.cols, b.ld, b.layout, b.dtype};
  args.c = bsrmm::cuda::DenseView{c.data, c.rows, c.cols, c.ld, c.layout, c.dtype};
  args.alpha = static_cast<float>(options.alpha);
  args.beta = static_cast<float>(options.beta);
  args.bias = options.bias;
  args.activation = options.activation;
  args.f32_mode = settings.f32_mode;
  args.device = ctx.device.ordinal;
  args.stream = settings.stream;
  return bsrmm::cuda::matmul(args, settings.forced_variant);
}
#endif

}  // namespace

extern "C" {

bsrmm_matmul_options bsrmm_matmul_options_default(void) {
  bsrmm_matmul_options options;
  std::memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.op_a = BSRMM_OP_NONE;
  options.alpha = 1.0;
  options.beta = 0.0;
  options.bias = nullptr;
  options.activation = BSRMM_ACTIVATION_NONE;
  return options;
}

bsrmm_status bsrmm_matmul(bsrmm_context_t ctx, bsrmm_matrix_t a, const bsrmm_dense* b,
                          bsrmm_dense* c, const bsrmm_matmul_options* options) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    const BsrMatrix& matrix = *require(a, "a").matrix;
    const bsrmm_dense& dense_b = require(b, "b");
    const bsrmm_dense& dense_c = require(c, "c");
    const bsrmm_matmul_options opts = read_options(options);
    check_operands(context, matrix, dense_b, dense_c, opts);
    if (bsrmm::matrix::is_empty(dense_c)) return;

    const bsrmm::api::ContextSettings settings = bsrmm::api::snapshot(context);
    const BsrMatrix& op_a = opts.op_a == BSRMM_OP_TRANSPOSE
                                ? matrix.plan().transposed(matrix, settings.stream)
                                : matrix;
    std::string ran;
    if (context.device.type == BSRMM_DEVICE_CPU) {
      ran = run_cpu(context, settings, op_a, dense_b, dense_c, opts);
    } else {
#if BSRMM_WITH_CUDA
      ran = run_cuda(context, settings, op_a, dense_b, dense_c, opts);
#else
      bsrmm::detail::fail(BSRMM_STATUS_NO_DEVICE, bsrmm::detail::built_without_cuda());
#endif
    }
    std::lock_guard<std::mutex> lock(context.settings_mutex);
    context.last_variant = std::move(ran);
  });
}

}  // extern "C"
