#include "execution.hpp"

#include "../device/device_runtime.hpp"
#include "../common/error.hpp"
#include "../common/thread_pool.hpp"
#include "../cpu/blas_library.hpp"
#include "../matrix/dense_operand.hpp"
#include "../matrix/plan.hpp"
#include "../matrix/work_lists.hpp"
#include "../tune/cpu_identity.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>

namespace bsrmm::api {

namespace {

// The scratch C starts at the same offset modulo this as the caller's C, so every candidate
// sees the alignment the final run will see (vector loads, TMA, 128-byte lines).
constexpr std::size_t scratch_alignment = 256;

// The context's pool of `threads` workers (0: the context's default). Pools of every size a
// tuned choice asked for are kept: problems tuned to different thread counts alternate without
// restarting threads. A pool whose threads the system refuses throws OUT_OF_MEMORY and leaves
// no entry behind, so a later call tries again.
detail::ThreadPool& pool_for(bsrmm_context_s& ctx, int32_t threads) {
  const int size = threads > 0 ? threads : ctx.default_threads;
  std::unique_ptr<detail::ThreadPool>& pool = ctx.pools[size];
  if (!pool) pool = std::make_unique<detail::ThreadPool>(size);
  return *pool;
}

// The thread counts worth measuring when the context leaves the choice to bsrmm: its default
// count first (the heuristic: every CPU unless the environment limits it), then powers of two
// below it, descending (small problems lose more to waking workers than they gain; a loaded
// machine favours fewer). The tuner stops descending where fewer threads are clearly slower, so
// a large problem on a many-core machine times two or three counts, not every one down to a
// single thread.
std::vector<int32_t> thread_candidates(int32_t setting, int32_t default_threads) {
  if (setting > 0) return {setting};
  const int32_t all = default_threads;
  std::vector<int32_t> counts{all};
  int32_t power = 1;
  while (power * 2 < all) power *= 2;
  for (int32_t t = power; t >= 1 && t < all; t /= 2) counts.push_back(t);
  return counts;
}

// The reference variant is the correctness oracle, not a contender: it runs 5-60x slower than
// the blocked one on every problem measured, tiny ones included (docs/perf-log.md, "CPU tuning
// cost"). It is timed only where that costs next to nothing (about half a millisecond a run on
// one core), so the tuner still sees it where the blocked variant's fixed costs dominate; above
// this many multiply-adds its warm-up and probe would cost more than tuning everything else.
constexpr int64_t reference_tuning_limit = int64_t{1} << 18;

#if BSRMM_WITH_CUDA
// The blocks of the longest block row (row_order has the longest first).
int64_t longest_row_blocks(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& row_order) {
  if (row_order.empty()) return 0;
  const size_t longest = static_cast<size_t>(row_order.front());
  return row_ptr[longest + 1] - row_ptr[longest];
}
#endif

}  // namespace

Execution::Execution(bsrmm_context_s& ctx, const ContextSettings& settings,
                     const matrix::BsrMatrix& op_a, const bsrmm_dense& b, const bsrmm_dense& c,
                     const bsrmm_matmul_options& options)
    : ctx_(ctx), settings_(settings), op_a_(op_a), b_(b), c_(c), options_(options) {
  const matrix::BsrShape& shape = op_a.shape();
  if (on_cpu()) {
    const matrix::Schedule& schedule = op_a.plan().schedule(nullptr);
    cpu_args_.a = cpu::BsrView{shape.block_row_count,
                               shape.block_col_count,
                               shape.block_height,
                               shape.block_width,
                               shape.nnzb,
                               op_a.row_ptr().data(),
                               op_a.col_idx().data(),
                               op_a.values().data(),
                               nullptr,
                               schedule.work_prefix.data(),
                               op_a.dtype()};
    cpu_args_.a.used_columns = schedule.used_columns.data();
    cpu_args_.a.used_column_count = static_cast<int64_t>(schedule.used_columns.size());
    cpu_args_.a.packed_col_idx = schedule.packed_col_idx.data();
    cpu_args_.b = b;
    cpu_args_.c = c;
    cpu_args_.alpha = options.alpha;
    cpu_args_.beta = options.beta;
    cpu_args_.bias = options.bias;
    cpu_args_.activation = options.activation;
    return;
  }
#if BSRMM_WITH_CUDA
  const matrix::Schedule& schedule = op_a.plan().schedule(settings.stream);
  cuda_args_.a = cuda::BsrView{shape.block_row_count,
                               shape.block_col_count,
                               shape.block_height,
                               shape.block_width,
                               shape.nnzb,
                               op_a.device_row_ptr().as<const int32_t>(),
                               op_a.device_col_idx().as<const int32_t>(),
                               op_a.values().data(),
                               schedule.device_row_order.as<const int32_t>(),
                               op_a.dtype(),
                               longest_row_blocks(op_a.row_ptr(), schedule.row_order)};
  cuda_args_.a_dense = &dense_copy_;
  cuda_args_.b = cuda::DenseView{b.data, b.rows, b.cols, b.ld, b.layout, b.dtype};
  cuda_args_.c = cuda::DenseView{c.data, c.rows, c.cols, c.ld, c.layout, c.dtype};
  cuda_args_.alpha = options.alpha;
  cuda_args_.beta = options.beta;
  cuda_args_.bias = options.bias;
  cuda_args_.activation = options.activation;
  cuda_args_.f32_mode = settings.f32_mode;
  cuda_args_.device = ctx.device.ordinal;
  cuda_args_.stream = settings.stream;
  cuda_args_.work_lists = &op_a.plan().work_lists();
#else
  detail::fail(BSRMM_STATUS_NO_DEVICE, detail::built_without_cuda());
#endif
}

#if BSRMM_WITH_CUDA
const void* Execution::PlanDenseCopy::get(void* stream) { return a_.plan().dense_values(a_, stream); }
#endif

std::string Execution::run(const tuner::Choice& choice) {
  // Measuring is over: under memory pressure the run's own workspace may need the scratch C's
  // room (a multiply whose tuning ran out of memory then still runs untuned).
  scratch_ = detail::Buffer();
  scratch_c_ = bsrmm_dense{};
  return run_into(choice, c_);
}

std::string Execution::run_into(const tuner::Choice& choice, const bsrmm_dense& c) {
  if (on_cpu()) return run_cpu(choice, c);
#if BSRMM_WITH_CUDA
  cuda::MatmulArgs args = cuda_args_;
  args.c.data = c.data;
  return cuda::matmul(args, choice.variant);
#else
  detail::fail(BSRMM_STATUS_NO_DEVICE, detail::built_without_cuda());
#endif
}

std::string Execution::run_cpu(const tuner::Choice& choice, const bsrmm_dense& c) {
  std::string variant = choice.variant;
  const void* dense_a = nullptr;
  if (variant.empty()) {
    // The heuristic: the dense GEMM where A is dense enough and a BLAS is there, else blocked
    // (also when the dense copy finds no memory).
    variant = cpu::blocked_variant;
    if (dense_decision().placement == cpu::DensePlacement::first) {
      try {
        dense_a = op_a_.plan().dense_host_values(op_a_, cpu::dense_copy_dtype(op_a_.dtype()));
        variant = cpu::dense_variant;
      } catch (const detail::Error& error) {
        if (error.status() != BSRMM_STATUS_OUT_OF_MEMORY) throw;
      }
    }
  }
  const bool blocked = variant == cpu::blocked_variant;
  const bool dense = variant == cpu::dense_variant;
  const cpu::blas::Library* blas = nullptr;
  if (dense) {
    const cpu::DenseDecision& decision = dense_decision();
    if (!decision.refusal.empty())
      detail::fail(BSRMM_STATUS_UNSUPPORTED, cpu::dense_variant, " cannot run: ", decision.refusal);
    blas = cpu::blas::library(nullptr);
    if (dense_a == nullptr)
      dense_a = op_a_.plan().dense_host_values(op_a_, cpu::dense_copy_dtype(op_a_.dtype()));
  }
  cpu::MatmulArgs args = cpu_args_;
  args.c = c;
  if ((blocked || dense) && op_a_.dtype() != BSRMM_DTYPE_F64 && op_a_.shape().nnzb > 0) {
    args.a.values_f32 = op_a_.plan().values_f32(op_a_);
  }
  std::lock_guard<std::mutex> lock(ctx_.cpu_mutex);
  detail::ThreadPool& pool =
      pool_for(ctx_, choice.threads > 0 ? choice.threads : settings_.num_threads);
  if (dense) {
    cpu::matmul_dense(args, dense_a, *blas, pool, ctx_.workspace);
  } else if (blocked) {
    cpu::matmul_blocked(args, pool, ctx_.workspace);
  } else {
    cpu::matmul_reference(args, pool);
  }
  return variant;
}

const cpu::DenseDecision& Execution::dense_decision() {
  if (!dense_decision_) {
    std::string missing;
    const cpu::blas::Library* blas = cpu::blas::library(&missing);
    dense_decision_ = cpu::dense_decision(cpu_args_, blas, missing);
  }
  return *dense_decision_;
}

tuner::ProblemShape Execution::shape() const {
  return tuner::describe_problem(arch(), op_a_, b_, c_, options_, settings_.f32_mode);
}

tuner::CallSignature Execution::signature() const {
  const tuner::ProblemShape s = tuner::describe_problem("", op_a_, b_, c_, options_, settings_.f32_mode);
  const auto alignment = [](const void* pointer) {
    return static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(pointer) % scratch_alignment);
  };
  return tuner::CallSignature{{ctx_.device.type,
                               ctx_.device.ordinal,
                               s.dtype,
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
                               ctx_.default_threads}};
}

std::string Execution::arch() const {
  if (on_cpu()) return "cpu";
#if BSRMM_WITH_CUDA
  return cuda::device_identity(ctx_.device.ordinal).arch;
#else
  return "cuda";
#endif
}

std::string Execution::device() const {
  if (on_cpu()) return tuner::cpu_identity();
#if BSRMM_WITH_CUDA
  const cuda::DeviceIdentity identity = cuda::device_identity(ctx_.device.ordinal);
  return identity.name + " (" + identity.arch + ")";
#else
  return "cuda";
#endif
}

tuner::MeasurePolicy Execution::policy() const {
  return on_cpu() ? tuner::cpu_policy : tuner::gpu_policy;
}

const std::vector<tuner::Choice>& Execution::candidates() {
  if (have_candidates_) return candidates_;
  have_candidates_ = true;
  if (on_cpu()) {
    // Multiply-adds (value_count x N) within the limit; C is not empty, so N > 0.
    const bool small = op_a_.shape().value_count() <= reference_tuning_limit / c_.cols;
    std::vector<const char*> variants{cpu::blocked_variant};
    if (small) variants.push_back(cpu::reference_variant);
    for (const char* variant : variants)
      for (int32_t threads : thread_candidates(settings_.num_threads, ctx_.default_threads))
        candidates_.push_back(tuner::Choice{variant, threads});
    return candidates_;
  }
#if BSRMM_WITH_CUDA
  for (std::string& name : cuda::supporting_variants(cuda_args_))
    candidates_.push_back(tuner::Choice{std::move(name), 0});
#endif
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
#if BSRMM_WITH_CUDA
  if (!on_cpu()) {
    cuda::MatmulArgs args = cuda_args_;
    args.c.data = scratch.data;
    return cuda::time_matmul(args, choice.variant);
  }
#endif
  const auto start = std::chrono::steady_clock::now();
  run_cpu(choice, scratch);
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count();
}

}  // namespace bsrmm::api
