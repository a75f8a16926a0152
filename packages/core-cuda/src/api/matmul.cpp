// bsrmm_matmul and bsrmm_tune: check the operands against each other, apply op(A) through the
// plan, pick the variant (forced, tuned or the heuristic's) and run it (execution.hpp).
#include "../device/device_runtime.hpp"
#include "../common/dtype.hpp"
#include "../matrix/dense_operand.hpp"
#include "../matrix/plan.hpp"
#include "../tune/tuner.hpp"
#include "execution.hpp"
#include "fp8_operands.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "options.hpp"
#include "variants.hpp"

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <string>

namespace {

using bsrmm::api::guarded;
using bsrmm::api::require;
using bsrmm::detail::describe;
using bsrmm::detail::invalid_argument;
using bsrmm::matrix::BsrMatrix;

bsrmm_matmul_options read_options(const bsrmm_matmul_options* given) {
  const bsrmm_matmul_options options =
      bsrmm::api::read_versioned(given, bsrmm_matmul_options_default(), "bsrmm_matmul_options_default",
                                 offsetof(bsrmm_matmul_options, b_scales));
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

// Every rule that relates A, B, C and the bias to each other and to the context. Returns B's
// scales when B is fp8.
std::optional<bsrmm::matrix::ValueScales> check_operands(bsrmm_context_s& ctx, const BsrMatrix& a,
                                                         const bsrmm_dense& b, const bsrmm_dense& c,
                                                         const bsrmm_matmul_options& options) {
  bsrmm::matrix::validate_dense(b, "B", true);
  bsrmm::matrix::validate_dense(c, "C");
  check_on_context(a.device(), ctx.device, "A");
  check_on_context(b.device, ctx.device, "B");
  check_on_context(c.device, ctx.device, "C");
  std::optional<bsrmm::matrix::ValueScales> b_scales =
      bsrmm::api::check_dtypes(a, b, c, options, bsrmm::api::stream_of(ctx));

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
  return b_scales;
}

// The tuner's decision, or none (the heuristic's pick runs) when there is no candidate (the
// heuristic's run then reports why: UNSUPPORTED, naming the arguments) or, unless `required`
// (bsrmm_tune), no memory to measure with (the scratch C, a workspace, worker threads): a
// context's tuning never fails a multiply that could run untuned (Execution::run releases the
// scratch C first).
std::optional<bsrmm::tuner::Decision> tuner_decision(bsrmm::api::Execution& execution,
                                                     bsrmm_tuning_mode mode, bool required) {
  if (execution.candidates().empty()) return std::nullopt;
  try {
    return bsrmm::tuner::decide(mode, execution.shape(), execution);
  } catch (const bsrmm::detail::Error& error) {
    if (required || error.status() != BSRMM_STATUS_OUT_OF_MEMORY) throw;
  } catch (const std::bad_alloc&) {
    if (required) throw;
  }
  return std::nullopt;
}

// C = alpha * op(A) * B + beta * C with the forced variant, the tuner's choice or the heuristic's.
// `tune_now` (bsrmm_tune) measures whatever the context's tuning mode and forced variant say:
// it is asked to choose. Returns the variant that ran.
std::string multiply(bsrmm_context_s& context, const BsrMatrix& matrix, const bsrmm_dense& b,
                     const bsrmm_dense& c, const bsrmm_matmul_options& options,
                     const bsrmm::matrix::ValueScales* b_scales, bool tune_now) {
  const bsrmm::api::ContextSettings settings = bsrmm::api::snapshot(context);
  // A multiply enqueued into a CUDA graph capture runs what it can without allocating, copying
  // from the host or waiting on the stream (a plan still to build says so, before enqueuing
  // anything), and never measures: the heuristic's pick or a choice this process already made.
  const bool capturing = bsrmm::detail::stream_capturing(context.device, settings.stream);
  if (capturing && tune_now)
    bsrmm::detail::fail(BSRMM_STATUS_UNSUPPORTED,
                        "bsrmm_tune cannot measure while its context's CUDA stream is being captured "
                        "into a CUDA graph: tune before capturing");
  const bsrmm::detail::CaptureScope capture_scope(capturing);
  const BsrMatrix& op_a = options.op_a == BSRMM_OP_TRANSPOSE
                              ? matrix.plan().transposed(matrix, settings.stream)
                              : matrix;
  bsrmm::api::Execution execution(context, settings, op_a, b, c, options, b_scales);

  bsrmm::tuner::Choice choice;  // empty: the heuristic's pick
  bsrmm_tuning_mode mode = settings.tuning_mode;
  if (tune_now) {
    mode = BSRMM_TUNING_FORCE;
  } else if (!settings.forced_variant.empty()) {
    bsrmm::api::check_forced_kind(settings.forced_variant, BSRMM_VARIANT_MATMUL, "bsrmm_matmul");
    choice.variant = settings.forced_variant;
    mode = BSRMM_TUNING_OFF;
  } else if (op_a.shape().nnzb == 0) {
    mode = BSRMM_TUNING_OFF;  // C = beta * C + bias: nothing to choose between
  }
  if (mode == BSRMM_TUNING_AUTO) {
    // A problem this process has seen: no key to build, no cache to search.
    const bsrmm::tuner::CallSignature signature = execution.signature();
    if (std::optional<bsrmm::tuner::Choice> known = bsrmm::tuner::recall(signature)) {
      return execution.run(*known);
    }
    if (capturing) return execution.run(choice);
    if (std::optional<bsrmm::tuner::Decision> tuned = tuner_decision(execution, mode, false)) {
      choice = tuned->choice;
      // A deferred decision must come back to the tuner until the key's tuning call.
      if (!tuned->deferred) bsrmm::tuner::remember(signature, choice);
    }
  } else if (mode == BSRMM_TUNING_FORCE && !capturing) {
    if (std::optional<bsrmm::tuner::Decision> tuned = tuner_decision(execution, mode, tune_now)) {
      choice = tuned->choice;
    }
  }
  return execution.run(choice);
}

// The whole of bsrmm_matmul (tune_now = false) and bsrmm_tune (true).
void checked_multiply(bsrmm_context_t ctx, bsrmm_matrix_t a, const bsrmm_dense* b, bsrmm_dense* c,
                      const bsrmm_matmul_options* options, bool tune_now) {
  bsrmm_context_s& context = require(ctx, "ctx");
  const BsrMatrix& matrix = *require(a, "a").matrix;
  const bsrmm_dense& dense_b = require(b, "b");
  const bsrmm_dense& dense_c = require(c, "c");
  const bsrmm_matmul_options opts = read_options(options);
  const std::optional<bsrmm::matrix::ValueScales> b_scales =
      check_operands(context, matrix, dense_b, dense_c, opts);
  if (bsrmm::matrix::is_empty(dense_c)) return;

  std::string ran = multiply(context, matrix, dense_b, dense_c, opts,
                             b_scales ? &*b_scales : nullptr, tune_now);
  std::lock_guard<std::mutex> lock(context.settings_mutex);
  context.last_variant = std::move(ran);
}

}  // namespace

extern "C" {

bsrmm_matmul_options bsrmm_matmul_options_default(void) {
  bsrmm_matmul_options options = bsrmm::api::zeroed_options<bsrmm_matmul_options>();
  options.op_a = BSRMM_OP_NONE;
  options.alpha = 1.0;
  options.beta = 0.0;
  options.bias = nullptr;
  options.activation = BSRMM_ACTIVATION_NONE;
  options.b_scales = nullptr;
  return options;
}

bsrmm_status bsrmm_matmul(bsrmm_context_t ctx, bsrmm_matrix_t a, const bsrmm_dense* b,
                          bsrmm_dense* c, const bsrmm_matmul_options* options) {
  return guarded(__func__, [&] { checked_multiply(ctx, a, b, c, options, false); });
}

bsrmm_status bsrmm_tune(bsrmm_context_t ctx, bsrmm_matrix_t a, const bsrmm_dense* b,
                        bsrmm_dense* c, const bsrmm_matmul_options* options) {
  return guarded(__func__, [&] { checked_multiply(ctx, a, b, c, options, true); });
}

}  // extern "C"
