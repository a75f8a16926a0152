// How the lanes of a warp cover a block row's packed values in the packed-rows kernel
// (packed_rows_kernel.cuh): every lane loads 16-byte chunks of the values array, and the chunks
// of one warp iteration cover a whole number of blocks, so the element a lane's chunk slot holds
// is the same (row in block, column in block, block offset) in every iteration. That mapping is
// worked out once per thread; the loop does no division. Plain C++: chosen on the host per launch.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::narrow {

// The kernel's limits: block rows at most 16 high (each of a warp's lanes owns at most two of
// the block row's height x columns outputs), chunks a lane loads per iteration, bytes of
// accumulators a lane may hold (32 registers), the chunk elements a lane maps (one register
// each), and the busy lanes a shape must keep. Past these the kernel spilled (ptxas, sm_90a).
constexpr int32_t kPackedMaxHeight = 16;
constexpr int32_t kPackedMaxRounds = 4;
constexpr int32_t kPackedMaxCols = 4;
constexpr int32_t kPackedAccBytes = 128;
constexpr int32_t kPackedMaxSlots = 8;  // chunk elements a lane maps: rounds x vec
constexpr int32_t kPackedMinLanes = 16;

struct PackedShape {
  int32_t vec = 0;               // elements in one 16-byte chunk
  int32_t lanes = 0;             // lanes that load (the others idle): L
  int32_t rounds = 0;            // chunks one lane loads per iteration: U (1 to 4)
  int32_t iteration_blocks = 0;  // blocks one warp iteration covers: L * U * vec / (bh * bw)
  int32_t period_blocks = 0;     // blocks in the shortest run that starts 16-byte aligned
  bool ok() const { return lanes > 0; }
};

inline int64_t packed_gcd(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

// An iteration of L lanes x U chunks x vec elements must be a whole number of periods (the
// shortest run of whole blocks that is a whole number of chunks: lcm(bh * bw, vec) elements).
// The most busy lanes win, then the fewest rounds (fewer accumulators). Not ok where no (L, U)
// keeps kPackedMinLanes lanes busy within the accumulator budget (large odd blocks in f64, a
// block row over 16 high): the lanes-along-K kernels take those.
inline PackedShape choose_packed_shape(int32_t block_height, int32_t block_width, int32_t elem_bytes,
                                       int32_t acc_bytes, int32_t cols) {
  PackedShape best;
  if (block_height < 1 || block_width < 1 || block_height > kPackedMaxHeight || cols < 1 ||
      cols > kPackedMaxCols || elem_bytes < 1 || 16 % elem_bytes != 0)
    return best;
  const int32_t vec = 16 / elem_bytes;
  const int64_t block_elems = int64_t(block_height) * block_width;
  const int64_t period = block_elems / packed_gcd(block_elems, vec) * vec;
  const int64_t chunks_per_period = period / vec;
  for (int32_t rounds = 1; rounds <= kPackedMaxRounds; ++rounds) {
    if (rounds * vec * cols * acc_bytes > kPackedAccBytes || rounds * vec > kPackedMaxSlots) break;
    for (int32_t lanes = 32; lanes > best.lanes && lanes >= kPackedMinLanes; --lanes) {
      if ((int64_t(lanes) * rounds) % chunks_per_period != 0) continue;
      best.vec = vec;
      best.lanes = lanes;
      best.rounds = rounds;
      best.iteration_blocks = int32_t(int64_t(lanes) * rounds * vec / block_elems);
      best.period_blocks = int32_t(period / block_elems);
      break;
    }
  }
  return best;
}

}  // namespace bsrmm::cuda::narrow
