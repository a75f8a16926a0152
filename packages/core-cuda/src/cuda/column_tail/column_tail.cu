// The Hopper row tiles take N only in multiples of 8 (their TMA boxes and wgmma's n step), so
// a product of N = 8q + r columns (r = 1..7) would fall to the sm80 kernels: 2.3x slower on an
// H100 at 8192 x 8192, blocks of 64, d 0.25, bf16, N = 2049 (397 us against 171 at N = 2048;
// docs/perf-log.md entry 93). This variant hands the first 8q columns of B and C to the
// registry's pick for them (an sm90 kernel) and the last r to its pick for those (a narrow
// kernel), one after the other on the call's stream. Every column of C depends only on the same
// column of B, so the two halves are the product; the second reads A's blocks again, A's bytes
// at memory speed, small next to a row tile's work wherever N is large enough for one.
#include "column_tail.hpp"

#include "../../common/dtype.hpp"
#include "../variant.hpp"

#include <cstdint>
#include <vector>

namespace bsrmm::cuda {
namespace {

using column_tail::kMinColumns;

// `dense` from its column `first` on, `cols` wide (the same rows, layout and ld).
DenseView columns_of(const DenseView& dense, int64_t first, int64_t cols) {
  DenseView part = dense;
  const int64_t step = dense.layout == BSRMM_LAYOUT_ROW_MAJOR ? 1 : dense.ld;
  part.data = static_cast<char*>(dense.data) + first * step * int64_t(detail::element_size(dense.dtype));
  part.cols = cols;
  return part;
}

// The call restricted to `cols` columns of B and C from column `first` (B's per-column fp8
// scales with them).
MatmulArgs column_part(const MatmulArgs& args, int64_t first, int64_t cols) {
  MatmulArgs part = args;
  part.b = columns_of(args.b, first, cols);
  part.c = columns_of(args.c, first, cols);
  if (args.b_scale_kind == BSRMM_SCALE_PER_COLUMN) {
    if (args.b_scales) part.b_scales = args.b_scales + first;
    if (args.device_b_scales) part.device_b_scales = args.device_b_scales + first;
  }
  return part;
}

int64_t head_columns(const MatmulArgs& args) { return args.c.cols / 8 * 8; }

bool tail_supports(const MatmulArgs& args, const DeviceTraits& device) {
  const int64_t n = args.c.cols;
  // fp8 (per-column scales of B would go with their columns) is not offered until it is tested.
  if (n < kMinColumns || n % 8 == 0 || args.a.dtype == BSRMM_DTYPE_FLOAT8_E4M3 ||
      args.a.dtype == BSRMM_DTYPE_FLOAT8_E5M2)
    return false;
  // The last r columns need no check: the generic kernel takes every dtype, block and layout
  // but fp8's, which is refused above.
  return supported_by_family(Family::sm90, column_part(args, 0, head_columns(args)), device);
}

void tail_launch(const MatmulArgs& args, const DeviceTraits&) {
  const int64_t head = head_columns(args);
  matmul(column_part(args, 0, head), "");
  matmul(column_part(args, head, args.c.cols - head), "");
}

int tail_preference(const MatmulArgs&, const DeviceTraits&) { return 0; }

}  // namespace

std::vector<Variant> column_tail_variants() {
  return {Variant{"sm90_columns_of_8_then_tail", &tail_supports, &tail_launch, &tail_preference}};
}

}  // namespace bsrmm::cuda
