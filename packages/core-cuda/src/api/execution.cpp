#include "execution.hpp"

#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "../cpu/cpu_backend.hpp"
#include "../device/device_runtime.hpp"
#include "../matrix/dense_operand.hpp"
#include "../matrix/plan.hpp"
#include "../matrix/work_lists.hpp"

#include <cstdint>

#if BSRMM_WITH_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace bsrmm::api {

namespace {

// The scratch C starts at the same offset modulo this as the caller's C, so every candidate
// sees the alignment the final run will see (vector loads, TMA, 128-byte lines).
constexpr std::size_t scratch_alignment = 256;

bool on_host(const matrix::BsrMatrix& a) { return a.device().type == BSRMM_DEVICE_CPU; }

// op(A) as the backends see it: its arrays where they live (host memory, or the device mirrors
// of a CUDA matrix) and the plan's aids for that device.
backend::BsrView bsr_view(const matrix::BsrMatrix& a, void* stream) {
  const matrix::BsrShape& shape = a.shape();
  backend::BsrView view;
  view.block_row_count = shape.block_row_count;
  view.block_col_count = shape.block_col_count;
  view.block_height = shape.block_height;
  view.block_width = shape.block_width;
  view.nnzb = shape.nnzb;
  view.values = a.values().data();
  view.dtype = a.dtype();
  if (a.scales() != nullptr) {
    view.scales = a.scales()->values.data();
    view.device_scales = a.scales()->device_copy.as<const float>();
    view.scale_kind = a.scales()->kind;
  }
  if (on_host(a)) {
    const matrix::Schedule& schedule = a.plan().schedule(nullptr);
    view.row_ptr = a.row_ptr().data();
    view.col_idx = a.col_idx().data();
    view.work_prefix = schedule.work_prefix.data();
    view.used_columns = schedule.used_columns.data();
    view.used_column_count = static_cast<int64_t>(schedule.used_columns.size());
    view.packed_col_idx = schedule.packed_col_idx.data();
    view.max_row_blocks = a.max_row_blocks();
    // The f32 copy serves the fast variants (for fp8: dequantised, which cpu_blocked_simd
    // multiplies); f64 has none.
    if (a.dtype() != BSRMM_DTYPE_F64 && shape.nnzb > 0) view.values_f32 = a.plan().values_f32(a);
  } else {
    const matrix::Schedule& schedule = a.plan().schedule(stream);
    view.row_ptr = a.device_row_ptr().as<const int32_t>();
    view.col_idx = a.device_col_idx().as<const int32_t>();
    view.row_order = schedule.device_row_order.as<const int32_t>();
    view.max_row_blocks = a.max_row_blocks();
  }
  return view;
}

}  // namespace

std::unique_ptr<backend::Backend> backend_for(bsrmm_context_s& ctx, const ContextSettings& settings) {
  if (ctx.device.type == BSRMM_DEVICE_CPU)
    return std::make_unique<cpu::CpuBackend>(ctx.cpu, settings.num_threads);
#if BSRMM_WITH_CUDA
  return cuda::make_backend(ctx.device.ordinal);
#else
  detail::fail(BSRMM_STATUS_NO_DEVICE, detail::built_without_cuda());
#endif
}

Execution::Execution(bsrmm_context_s& ctx, const ContextSettings& settings,
                     const matrix::BsrMatrix& op_a, const bsrmm_dense& b, const bsrmm_dense& c,
                     const bsrmm_matmul_options& options, const matrix::ValueScales* b_scales)
    : ctx_(ctx),
      settings_(settings),
      op_a_(op_a),
      b_(b),
      c_(c),
      options_(options),
      backend_(backend_for(ctx, settings)) {
  args_.a = bsr_view(op_a, settings.stream);
  args_.a_dense = &dense_copy_;
  args_.b = b;
  if (b_scales != nullptr) {
    args_.b_scales = b_scales->values.data();
    args_.device_b_scales = b_scales->caller_device;
    args_.b_scale_kind = b_scales->kind;
  }
  args_.c = c;
  args_.alpha = options.alpha;
  args_.beta = options.beta;
  args_.bias = options.bias;
  args_.activation = options.activation;
  args_.f32_mode = settings.f32_mode;
  args_.device = ctx.device.ordinal;
  args_.stream = settings.stream;
  args_.sm_budget = settings.sm_budget;
  if (!on_host(op_a)) args_.work_lists = &op_a.plan().work_lists();
}

bool Execution::PlanDenseCopy::kept() const { return on_host(a_) || !a_.values().borrowed(); }

const void* Execution::PlanDenseCopy::get(void* stream) {
  if (on_host(a_)) return a_.plan().dense_host_values(a_, cpu::dense_copy_dtype(a_.dtype()));
  return a_.plan().dense_values(a_, stream);
}

backend::MatmulArgs Execution::args_into(const bsrmm_dense& c) const {
  backend::MatmulArgs args = args_;
  args.c = c;
  return args;
}

std::string Execution::run(const tuner::Choice& choice) {
  // Measuring is over: under memory pressure the run's own workspace may need the scratch C's
  // room (a multiply whose tuning ran out of memory then still runs untuned).
  scratch_ = detail::Buffer();
  scratch_c_ = bsrmm_dense{};
  return backend_->matmul(args_, backend::Candidate{choice.variant, choice.threads});
}

tuner::ProblemShape Execution::shape() const {
  tuner::ProblemShape shape =
      tuner::describe_problem(backend_->arch(), op_a_, b_, c_, options_, settings_.f32_mode);
  shape.sm_budget = settings_.sm_budget;
  return shape;
}

tuner::CallSignature Execution::signature() const {
  const tuner::ProblemShape s = tuner::describe_problem("", op_a_, b_, c_, options_, settings_.f32_mode);
  const auto alignment = [](const void* pointer) {
    return static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(pointer) % scratch_alignment);
  };
  return tuner::CallSignature{{ctx_.device.type,
                               ctx_.device.ordinal,
                               s.dtype,
                               s.b_dtype,
                               s.c_dtype,
                               s.f32_mode,
                               s.op_a,
                               s.b_layout,
                               s.c_layout,
                               s.block_height,
                               s.block_width,
                               s.block_rows,
                               s.block_cols,
                               s.nnzb,
                               s.max_row_blocks,
                               s.m,
                               s.k,
                               s.n,
                               b_.ld,
                               c_.ld,
                               alignment(b_.data),
                               alignment(c_.data),
                               options_.bias ? alignment(options_.bias) + 1 : 0,
                               alignment(op_a_.values().data()),
                               s.beta,
                               s.activation,
                               settings_.num_threads,
                               ctx_.cpu.default_threads,
                               settings_.sm_budget}};
}

std::string Execution::device() const { return backend_->device_name(); }

tuner::MeasurePolicy Execution::policy() const {
  return backend_->clock() == backend::Clock::host ? tuner::cpu_policy : tuner::gpu_policy;
}

const std::vector<tuner::Choice>& Execution::candidates() {
  if (have_candidates_) return candidates_;
  have_candidates_ = true;
  for (backend::Candidate& candidate : backend_->matmul_candidates(args_))
    candidates_.push_back(tuner::Choice{std::move(candidate.variant), candidate.threads});
  return candidates_;
}

const bsrmm_dense& Execution::scratch_c() {
  if (scratch_c_.data != nullptr) return scratch_c_;
  const std::size_t bytes = matrix::dense_extent_bytes(c_);
  scratch_ = detail::Buffer::allocate(bytes + scratch_alignment, c_.device);
  const std::size_t offset = reinterpret_cast<std::uintptr_t>(c_.data) % scratch_alignment;
  scratch_c_ = c_;
  scratch_c_.data = scratch_.as<unsigned char>() + offset;
  return scratch_c_;
}

double Execution::time_once(std::size_t index) {
  const tuner::Choice& choice = candidates().at(index);
  const bsrmm_dense& scratch = scratch_c();
  // beta reads C: every run starts from the caller's values, not from the previous run's
  // output (which grows run after run, and could reach inf and slow down a CPU).
  if (options_.beta != 0.0) {
    detail::copy_bytes(scratch.data, scratch.device, c_.data, c_.device,
                       matrix::dense_extent_bytes(c_), settings_.stream);
  }
  return backend_->time_matmul(args_into(scratch), backend::Candidate{choice.variant, choice.threads});
}

}  // namespace bsrmm::api
