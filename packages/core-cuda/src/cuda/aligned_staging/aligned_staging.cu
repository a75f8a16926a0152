// Copies of B and C shaped for the tensor-core kernels, for two cases they decline:
//
// - B or C whose rows (row-major) or columns (column-major) do not start 16 bytes apart, or
//   whose base is not 16-byte aligned: TMA and cp.async move 16-byte pieces. A row-major B of an
//   odd N (numpy's (K, 2049)) took the dense fallback's unaligned cuBLASLt kernel on an H100 at
//   2.1 ms where the aligned product runs in 0.19 (8192^2 blocks of 64, bf16, d 0.25;
//   docs/perf-log.md entry 93).
// - N not a multiple of 8, below the column tail's range: the Hopper row tiles take N in steps
//   of 8 only, and the sm80 kernels that took N = 9..1023 ran 3-6x slower than the row tile one
//   column narrower (the same matrix, row-major B: N = 33 135 us against 22 at N = 32; entry 99).
//
// Either way the operands are copied into stream-ordered scratch with the leading dimension
// rounded up to 16 bytes and, where the staged pick is a Hopper row tile, N rounded up to a
// multiple of 8 (one strided copy kernel each, strided_copy.hpp; B's extra columns zeroed, C
// copied in first only where beta reads it). The registry's pick for the staged problem runs,
// and C's first N columns are copied back. Every column of C depends only on the same column of B, so the extra
// columns change nothing and are dropped.
#include "../../common/dtype.hpp"
#include "../dense_fallback/stream_scratch.hpp"
#include "../runtime/cuda_check.hpp"
#include "../variant.hpp"
#include "strided_copy.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace bsrmm::cuda {
namespace {

using dense_fallback::StreamScratch;

// Below this N the narrow kernels, which read any layout, are the pick anyway.
constexpr int64_t kMinColumns = 9;
constexpr uintptr_t kScratchAlignment = 256;  // what the stream-ordered pool hands out

int64_t element_bytes(const DenseView& dense) { return int64_t(detail::element_size(dense.dtype)); }

// A dense operand's extent along its leading dimension (the row length of a row-major one) and
// across it.
int64_t inner_of(const DenseView& dense) { return dense.layout == BSRMM_LAYOUT_ROW_MAJOR ? dense.cols : dense.rows; }
int64_t outer_of(const DenseView& dense) { return dense.layout == BSRMM_LAYOUT_ROW_MAJOR ? dense.rows : dense.cols; }

bool misaligned(const DenseView& dense) {
  return reinterpret_cast<uintptr_t>(dense.data) % 16 != 0 || (dense.ld * element_bytes(dense)) % 16 != 0;
}

int64_t round_up(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

// `dense` as staged: `cols` columns, the leading dimension rounded up to 16 bytes, at `data`.
DenseView staged_view(const DenseView& dense, int64_t cols, void* data) {
  DenseView staged = dense;
  staged.data = data;
  staged.cols = cols;
  staged.ld = round_up(inner_of(staged), 16 / element_bytes(dense));
  return staged;
}

std::size_t staged_bytes(const DenseView& staged) {
  return std::size_t(round_up(outer_of(staged) * staged.ld * element_bytes(staged), int64_t(kScratchAlignment)));
}

// The call with B and C staged `cols` wide (B at `b_data`, C at `c_data`; null: kept, only
// where `cols` is N).
MatmulArgs staged_args(const MatmulArgs& args, int64_t cols, void* b_data, void* c_data) {
  MatmulArgs staged = args;
  if (b_data) staged.b = staged_view(args.b, cols, b_data);
  if (c_data) staged.c = staged_view(args.c, cols, c_data);
  return staged;
}

// What a call stages: B and / or C, and how many columns.
struct Plan {
  bool stage_b = false, stage_c = false;
  int64_t cols = 0;
  const Variant* pick = nullptr;  // the staged problem's
};

// The staged problem's pick for `plan` (nothing launched), probed at an aligned dummy address.
const Variant* staged_pick(const MatmulArgs& args, const Plan& plan, const DeviceTraits& device) {
  void* aligned = reinterpret_cast<void*>(kScratchAlignment);
  return heuristic_pick(staged_args(args, plan.cols, plan.stage_b ? aligned : nullptr, plan.stage_c ? aligned : nullptr),
                        device);
}

// The plan for this call, or cols = 0 where staging is no use.
Plan plan_for(const MatmulArgs& args, const DeviceTraits& device) {
  const int64_t n = args.c.cols;
  if (n < kMinColumns || detail::is_fp8(args.a.dtype) || detail::is_fp8(args.b.dtype) || args.b.rows == 0 || args.c.rows == 0)
    return {};
  // N up to a multiple of 8, where a Hopper row tile then takes it: B and C are both copied.
  if (n % 8 != 0) {
    Plan padded{true, true, round_up(n, 8)};
    padded.pick = staged_pick(args, padded, device);
    if (padded.pick != nullptr && padded.pick->family == Family::sm90) return padded;
  }
  Plan plan{misaligned(args.b), misaligned(args.c), n};
  if (!plan.stage_b && !plan.stage_c) return {};
  // Worth a copy only where a tensor-core kernel (or the aligned dense fallback) takes the staged
  // problem: the generic and narrow kernels read the unaligned operands as they are.
  plan.pick = staged_pick(args, plan, device);
  if (plan.pick == nullptr || plan.pick->family == Family::generic || plan.pick->family == Family::narrow ||
      plan.pick->family == Family::aligned_staging)
    return {};
  return plan;
}

// One call's supports() and launch() get the same arguments, one after the other on the
// calling thread (registry.cu ranks, then launches): the plan made for the first is kept for the
// second, so the staged problem is ranked once a call, not twice (each ranking ~5-7 us of host
// time; perf-log 99). Keyed by the arguments' bytes: any other call plans afresh.
static_assert(std::is_trivially_copyable_v<MatmulArgs> && std::is_trivially_copyable_v<DeviceTraits>);
struct KeptPlan {
  unsigned char args[sizeof(MatmulArgs)];
  unsigned char device[sizeof(DeviceTraits)];
  Plan plan;
  bool valid = false;
};
thread_local KeptPlan kept;

Plan planned(const MatmulArgs& args, const DeviceTraits& device) {
  if (kept.valid && std::memcmp(kept.args, &args, sizeof args) == 0 &&
      std::memcmp(kept.device, &device, sizeof device) == 0)
    return kept.plan;
  const Plan plan = plan_for(args, device);  // may plan (and keep) nested staged calls first
  std::memcpy(kept.args, &args, sizeof args);
  std::memcpy(kept.device, &device, sizeof device);
  kept.plan = plan;
  kept.valid = true;
  return plan;
}

bool staging_supports(const MatmulArgs& args, const DeviceTraits& device) { return planned(args, device).cols != 0; }

// `from` copied into `to` over `to`'s extent, zeros where `to` reaches past `from` (B's extra
// columns: their products land in C's dropped columns, and zeros keep them finite).
void copy_operand(const DenseView& to, const DenseView& from, cudaStream_t stream) {
  aligned_staging::strided_copy({to.data, to.ld, from.data, from.ld, inner_of(to), outer_of(to), inner_of(from),
                                 outer_of(from), int(element_bytes(to))},
                                stream);
}

void staging_launch(const MatmulArgs& args, const DeviceTraits& device) {
  const Plan plan = planned(args, device);
  const auto stream = static_cast<cudaStream_t>(args.stream);
  const std::size_t b_bytes = plan.stage_b ? staged_bytes(staged_view(args.b, plan.cols, nullptr)) : 0;
  const std::size_t c_bytes = plan.stage_c ? staged_bytes(staged_view(args.c, plan.cols, nullptr)) : 0;
  StreamScratch scratch(b_bytes + c_bytes, args.device, stream, "aligned staging");
  char* base = scratch.as<char>();
  const MatmulArgs staged =
      staged_args(args, plan.cols, plan.stage_b ? base : nullptr, plan.stage_c ? base + b_bytes : nullptr);
  if (plan.stage_b) copy_operand(staged.b, args.b, stream);
  if (plan.stage_c && args.beta != 0.0) copy_operand(staged.c, args.c, stream);
  // The pick the plan was made for, launched directly rather than through matmul(), which would
  // rank the staged call again.
  plan.pick->launch(staged, device);
  if (plan.stage_c) {
    // Back over the caller's extent only: C's padding and the dropped columns stay where they are.
    DenseView back = staged.c;
    back.cols = args.c.cols;
    copy_operand(args.c, back, stream);
  }
}

int staging_preference(const MatmulArgs&, const DeviceTraits&) { return 0; }

}  // namespace

std::vector<Variant> aligned_staging_variants() {
  return {Variant{"cuda_aligned_staging", &staging_supports, &staging_launch, &staging_preference}};
}

}  // namespace bsrmm::cuda
