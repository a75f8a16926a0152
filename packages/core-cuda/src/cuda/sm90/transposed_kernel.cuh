// Small blocks (16, 32; 64 also compiles): C^T = B^T A^T, so the dense side fills the wgmma M.
//
// A 16x16 block cannot fill wgmma's 64-row M, but 64 columns of N can: each consumer warpgroup
// computes D = (Chunks x 64 columns of B)^T x (A blocks)^T. A tile is a group of Group block
// rows (Rows rows of C; the plan groups rows with similar columns: src/matrix/row_groups) x
// 128 * Chunks columns (64 * Chunks per consumer). B panels are the
// scarce resource (each B row slice is used once per A block that touches it, and there is no
// other reuse), so the producer walks the union of the group's column indices in order (merged
// once per matrix by the plan: src/matrix/group_columns) and loads each B slice once for all
// rows of the group that contain that column: a stage = one column c: the Block x TileN slice
// of B at rows c * Block, plus the A blocks of the rows that have column c (slot i for the
// group's row i); meta[stage] is the bit set of those rows, 0 meaning "tile done".
// WideBlocks: blocks wider than high (32 x 64, 16 x 64: width a multiple of Block,
// p.block_parts of it) take a stage per Block-wide part of each column: the part's Block
// rows of B and the Block x Block part of each block, so the consumers see the square kernel's
// stages. Square blocks compile without the parts' bookkeeping: at N = 16, where these kernels
// are bound by the producer's work per column, it cost them 3-5% (perf-log entry 31).
// The consumers issue the wgmma by 64-row unit or, with ByRow, by block row
// (transposed_mainloop.cuh; perf-log entry 29). Up to 4 producer warps share the columns (the
// per-column barrier and TMA work of one warp was the bottleneck).
// Rows x Chunks is 256 (accumulators: units x chunks x 32 floats = 128 per thread). Fewer rows
// and more chunks give each column (each barrier round trip, which is what bounds these kernels
// at low density) more work, for fewer rows sharing each B slice. Performance notes:
// docs/perf-log.md. The epilogue transposes through shared memory (stmatrix.trans), up to 128
// rows x 64 columns at a time, so C rows are stored 16 bytes at a time.
//
// The pieces: this file is the frame (shared memory, barriers, role dispatch) and the
// consumers' tile loop; transposed_producer.cuh the column walk and its TMA loads,
// transposed_mainloop.cuh the wgmma over the ring, transposed_epilogue.cuh the transposed stores
// to C; transposed_config.cuh the shape (TransposedConfig<Block<32>, Rows<128>, ByRow, ...>) and
// what follows from it, transposed_smem.cuh where each piece lives in shared memory.
#pragma once

#include "kernel_params.cuh"
#include "mbarrier.cuh"
#include "tma.cuh"
#include "transposed_config.cuh"
#include "transposed_epilogue.cuh"
#include "transposed_mainloop.cuh"
#include "transposed_producer.cuh"
#include "transposed_smem.cuh"
#include "warpgroup.cuh"
#include "work_walk.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

// One consumer warpgroup's tiles: every tile of the walk, its main loop then its epilogue.
template <typename T, typename Config>
__device__ __forceinline__ void consume_transposed_tiles(const TransposedParams& p, TransposedSmem<Config> smem,
                                                         int consumer) {
  const int thread = threadIdx.x % 128;
  const int lane = threadIdx.x % 32;
  TransposedAccumulators<Config> acc;
  TransposedMainloop<T, Config> mainloop{smem, consumer, lane, {}, {}};
  const TransposedEpilogue<T, Config> epilogue{p, smem, consumer, thread, thread / 32, lane, static_cast<T*>(p.c),
                                               static_cast<const T*>(p.bias)};
  for (TileWalk walk(p); walk.more(); walk.advance()) {
    const int tile = walk.tile();
    const int n_tile = tile / p.tile_slots;
    const TransposedTileRows<Config> rows{p, (tile - n_tile * p.tile_slots) * Config::kGroup};
    mainloop.run(acc);
    epilogue(acc, n_tile, rows);
  }
}

// The frame: barriers, then the roles (warpgroup 0 the producer, up to kProducerWarps of its
// warps; warpgroups 1 and 2 the consumers). setmaxnreg needs each role to be one branch of this
// if/else (warpgroup.cuh).
template <typename T, typename Config>
__global__ void __launch_bounds__(Config::kThreads, 1)
    transposed_kernel(const __grid_constant__ TransposedParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kStages = Config::kStages;
  extern __shared__ uint8_t smem_raw[];
  const TransposedSmem<Config> smem(smem_raw);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&smem.full()[s], 1);
      mbarrier_init(&smem.empty()[s], 8);  // lane 0 of each of the 8 consumer warps
    }
    mbarrier_init_fence();
    tma_prefetch_map(&p.a_map);
    tma_prefetch_map(&p.b_map);
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  const int lane = threadIdx.x % 32;
  if (warpgroup == 0) {
    warpgroup_release_registers<Config::kProducerRegisters>();
    const int producer_warp = threadIdx.x / 32;
    if (threadIdx.x < kStages) smem.dirty()[threadIdx.x] = (1u << Config::kGroup) - 1;  // smem starts undefined
    named_barrier_sync(3, 128);
    if (producer_warp >= Config::kProducerWarps) return;
    TransposedProducer<Config>{p, smem, lane, producer_warp, Config::kWide ? p.block_parts : 1, {}}.run();
  } else {
    warpgroup_claim_registers<Config::kConsumerRegisters>();
    consume_transposed_tiles<T>(p, smem, warpgroup - 1);
  }
#endif
}

}  // namespace bsrmm::cuda::sm90
