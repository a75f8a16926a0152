// bsrmm_sddmm: check the pattern, X, Y and values against each other and the context, then run
// it through the context's backend (src/backend: the CPU's pool, or the GPU on the context's
// stream), forced to the context's variant when that is an SDDMM one, and record the kernel that
// ran as the context's last variant.
#include "../backend/backend.hpp"
#include "../common/dtype.hpp"
#include "../device/device_runtime.hpp"
#include "../matrix/dense_operand.hpp"
#include "execution.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "options.hpp"
#include "variants.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

namespace {

using bsrmm::api::guarded;
using bsrmm::api::require;
using bsrmm::detail::describe;
using bsrmm::detail::invalid_argument;
using bsrmm::matrix::BsrMatrix;

bsrmm_sddmm_options read_options(const bsrmm_sddmm_options* given) {
  return bsrmm::api::read_versioned(given, bsrmm_sddmm_options_default(), "bsrmm_sddmm_options_default");
}

void check_on_context(bsrmm_device device, bsrmm_device context, const char* what) {
  if (!bsrmm::detail::same_device(device, context)) {
    invalid_argument(what, " is on ", describe(device), " but the context is on ",
                     describe(context));
  }
}

// Every rule that relates the pattern, X, Y and values to each other and to the context.
void check_operands(const bsrmm_context_s& ctx, const BsrMatrix& pattern, const bsrmm_dense& x,
                    const bsrmm_dense& y, const bsrmm_dense& values) {
  bsrmm::matrix::validate_dense(x, "X");
  bsrmm::matrix::validate_dense(y, "Y");
  bsrmm::matrix::validate_dense(values, "values");
  check_on_context(pattern.device(), ctx.device, "pattern");
  check_on_context(x.device, ctx.device, "X");
  check_on_context(y.device, ctx.device, "Y");
  check_on_context(values.device, ctx.device, "values");

  if (x.dtype != pattern.dtype() || y.dtype != pattern.dtype() || values.dtype != pattern.dtype()) {
    bsrmm::detail::fail(BSRMM_STATUS_UNSUPPORTED, "mixed dtypes are not supported: pattern is ",
                        bsrmm::detail::name(pattern.dtype()), ", X is ",
                        bsrmm::detail::name(x.dtype), ", Y is ", bsrmm::detail::name(y.dtype),
                        ", values is ", bsrmm::detail::name(values.dtype));
  }

  const bsrmm::matrix::BsrShape& shape = pattern.shape();
  if (x.rows != shape.rows) {
    invalid_argument("X.rows = ", x.rows, " but the pattern has ", shape.rows, " rows (it is ",
                     shape.rows, " x ", shape.cols, ")");
  }
  if (y.cols != shape.cols) {
    invalid_argument("Y.cols = ", y.cols, " but the pattern has ", shape.cols,
                     " columns (it is ", shape.rows, " x ", shape.cols, ")");
  }
  if (y.rows != x.cols) invalid_argument("Y.rows = ", y.rows, " but X.cols = ", x.cols);

  const int64_t block_elements = shape.block_elements();
  if (values.rows != shape.nnzb || values.cols != block_elements) {
    invalid_argument("values is ", values.rows, " x ", values.cols, " but must be nnzb x (bh * bw) = ",
                     shape.nnzb, " x ", block_elements, " (one row-major block per row)");
  }
  if (values.layout != BSRMM_LAYOUT_ROW_MAJOR || values.ld != block_elements) {
    invalid_argument("values must be row-major and contiguous (ld = bh * bw = ", block_elements,
                     "), got ", bsrmm::detail::name(values.layout), " with ld = ", values.ld);
  }

  bsrmm::detail::check_pointer_on(x.data, x.device, "X.data");
  bsrmm::detail::check_pointer_on(y.data, y.device, "Y.data");
  bsrmm::detail::check_pointer_on(values.data, values.device, "values.data");
  if (bsrmm::matrix::dense_overlaps(values, x)) {
    invalid_argument("values overlaps X in memory: the output must not alias an input");
  }
  if (bsrmm::matrix::dense_overlaps(values, y)) {
    invalid_argument("values overlaps Y in memory: the output must not alias an input");
  }
}

// The operands as the backends see them: the pattern's structure where it lives (host arrays,
// or a CUDA matrix's device mirrors; no plan is built), X, Y and values as given.
bsrmm::backend::SddmmArgs backend_args(const BsrMatrix& pattern, const bsrmm_dense& x,
                                       const bsrmm_dense& y, const bsrmm_dense& values,
                                       const bsrmm_sddmm_options& options,
                                       const bsrmm::api::ContextSettings& settings) {
  const bsrmm::matrix::BsrShape& shape = pattern.shape();
  bsrmm::backend::SddmmArgs args;
  bsrmm::backend::BsrView& view = args.pattern;
  view.block_row_count = shape.block_row_count;
  view.block_col_count = shape.block_col_count;
  view.block_height = shape.block_height;
  view.block_width = shape.block_width;
  view.nnzb = shape.nnzb;
  view.dtype = pattern.dtype();
  const bool on_host = pattern.device().type == BSRMM_DEVICE_CPU;
  view.row_ptr = on_host ? pattern.row_ptr().data() : pattern.device_row_ptr().as<const int32_t>();
  view.col_idx = on_host ? pattern.col_idx().data() : pattern.device_col_idx().as<const int32_t>();
  args.x = x;
  args.y = y;
  args.values = values;
  args.alpha = options.alpha;
  args.beta = options.beta;
  args.device = pattern.device().ordinal;
  args.stream = settings.stream;
  args.sm_budget = settings.sm_budget;
  return args;
}

void checked_sddmm(bsrmm_context_t ctx, bsrmm_matrix_t pattern_handle, const bsrmm_dense* x,
                   const bsrmm_dense* y, bsrmm_dense* values, const bsrmm_sddmm_options* options) {
  bsrmm_context_s& context = require(ctx, "ctx");
  const BsrMatrix& pattern = *require(pattern_handle, "pattern").matrix;
  const bsrmm_dense& dense_x = require(x, "x");
  const bsrmm_dense& dense_y = require(y, "y");
  const bsrmm_dense& dense_values = require(values, "values");
  const bsrmm_sddmm_options opts = read_options(options);
  if (context.device.type == BSRMM_DEVICE_CUDA && !bsrmm::detail::cuda_compiled()) {
    bsrmm::detail::fail(BSRMM_STATUS_NO_DEVICE, bsrmm::detail::built_without_cuda());
  }
  check_operands(context, pattern, dense_x, dense_y, dense_values);
  if (pattern.shape().nnzb == 0) return;

  const bsrmm::api::ContextSettings settings = bsrmm::api::snapshot(context);
  bsrmm::api::check_forced_kind(settings.forced_variant, BSRMM_VARIANT_SDDMM, "bsrmm_sddmm");
  bsrmm::backend::Candidate run;
  run.variant = settings.forced_variant;
  std::string ran = bsrmm::api::backend_for(context, settings)
                        ->sddmm(backend_args(pattern, dense_x, dense_y, dense_values, opts, settings), run);
  std::lock_guard<std::mutex> lock(context.settings_mutex);
  context.last_variant = std::move(ran);
}

}  // namespace

extern "C" {

bsrmm_sddmm_options bsrmm_sddmm_options_default(void) {
  bsrmm_sddmm_options options = bsrmm::api::zeroed_options<bsrmm_sddmm_options>();
  options.alpha = 1.0;
  options.beta = 0.0;
  return options;
}

bsrmm_status bsrmm_sddmm(bsrmm_context_t ctx, bsrmm_matrix_t pattern, const bsrmm_dense* x,
                         const bsrmm_dense* y, bsrmm_dense* values,
                         const bsrmm_sddmm_options* options) {
  return guarded(__func__, [&] { checked_sddmm(ctx, pattern, x, y, values, options); });
}

}  // extern "C"
