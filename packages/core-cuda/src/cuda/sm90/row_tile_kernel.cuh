// Large block rows (64, 128): C = A * B tile by tile, one tile = one block row x TileN columns.
//
// Warp-specialised and persistent: warpgroup 0 is the producer (one thread issues TMA), two
// consumer warpgroups issue wgmma. A stage is 64 deep in K (one 128-byte swizzle row of 16-bit
// elements) and holds the A slices of that depth with the matching 64 x TileN slice of B (32
// deep for N tiles 512 wide, whose A slices then sit in the 64-byte swizzle). Blocks
// 64 or 128 wide give a stage a 64-column slice of one block (BlockW / 64 stages per block); a
// 32-wide block is too shallow to fill a stage alone, so a stage takes two consecutive blocks of
// the row (each A slice 32 wide, in the 64-byte swizzle; their B panels one above the other) and
// a row with an odd count ends on a stage whose second half is zeros, loaded from past the ends
// of A and B (skipping those k-steps instead would branch around wgmma, which makes ptxas fence
// every one of them). Block height 128: each consumer owns 64 rows x TileN columns (m64nTileN);
// 64: both own the same 64 rows and split the N tile (so a 512-wide tile reads each A slice once
// for 512 columns of B: 10% fewer bytes per flop than at 256, block 64 being bound by them).
// Every CTA walks its tiles (work_walk.cuh): the plan's balanced list, mostly N-tile-major (the B
// panels of one N tile stay in L2 while every block row uses them) with the longest rows started
// early enough to end with the rest; or, without a list, round robin over N tiles x rows
// longest first (row_order).
//
// The pieces: this file is the frame (shared memory, barriers, role dispatch) and the
// consumers' tile loop; row_tile_producer.cuh the TMA loads into the ring, row_tile_mainloop.cuh
// the wgmma over it, row_tile_epilogue.cuh the stores to C; row_tile_config.cuh the shape
// (RowTileConfig<Block<64, 32>, NTile<256>, PingPong, ...>) and what follows from it,
// row_tile_smem.cuh where each piece lives in shared memory.
//
// Cluster<2>: the kernel is bound by L2 -> SM traffic (ncu on the H100 grid: L2 throughput 88%
// at block 128, 82% at 64, with the SMs ~40-65% busy), and A is a third of it at block 128. Two
// CTAs of a cluster take the same block row and neighbouring N tiles (a work item is a pair of N
// tiles); each loads half of every A slice and multicasts it into both, so A crosses L2 once per
// pair. A stage is then free only when the consumers of both CTAs released it: each consumer
// warp arrives on its own and on its peer's empty barrier. Measured at block 128, d = 0.125: L2
// reads 805 -> 710 MB, time -3% (-7% at d = 0.25); L2 is not the whole limit (docs/perf-log.md).
#pragma once

#include "cluster.cuh"
#include "kernel_params.cuh"
#include "mbarrier.cuh"
#include "pipeline.cuh"
#include "row_tile_config.cuh"
#include "row_tile_epilogue.cuh"
#include "row_tile_mainloop.cuh"
#include "row_tile_operands.cuh"
#include "row_tile_producer.cuh"
#include "row_tile_smem.cuh"
#include "tma.cuh"
#include "warpgroup.cuh"
#include "work_walk.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

// fp8: B's per-column scales (one B scale is in alpha; A's were applied block by block). The
// thread holds columns col_base + 8j + 2(lane % 4) and the next, acc[4j .. 4j + 3] (rows r and
// r + 8).
template <int N>
__device__ __forceinline__ void scale_columns(float (&acc)[N / 2], const float* column_scales, int n, int col_base,
                                              int lane) {
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    const int col = col_base + 8 * j + 2 * (lane % 4);
    const float s0 = col < n ? __ldg(column_scales + col) : 0.0f;
    const float s1 = col + 1 < n ? __ldg(column_scales + col + 1) : 0.0f;
    acc[4 * j] *= s0;
    acc[4 * j + 1] *= s1;
    acc[4 * j + 2] *= s0;
    acc[4 * j + 3] *= s1;
  }
}

// One consumer warpgroup's tiles: the walk's tiles (every one, or with PingPong every other),
// each a main loop over its stages and the epilogue of its part.
//
// PingPong (blocks 64 high): the consumers take the walk's tiles in turn, each a whole
// 64 x TileN tile (m64nTileN, twice the accumulators of splitting N), and their main loops run
// one after the other, so one consumer's epilogue and pipeline drain overlap the other's wgmma
// instead of leaving the tensor cores idle at every tile's end. The order is also what keeps
// the ring's parity waits sound: a consumer starts waiting on its tile's stages only once the
// other has waited on all of its own, so no stage can be two laps ahead of it.
template <typename T, typename Config>
__device__ __forceinline__ void consume_row_tiles(const RowTileParams& p, RowTileSmem<Config> smem,
                                                  uint32_t rank, int worker, int workers, int consumer) {
  const int warp = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;
  constexpr int kN = Config::kConsumerN;
  constexpr bool kFp8 = RowTileTypes<T>::kFp8;
  static_assert(RowTileTypes<T>::kElementBytes == Config::kElementBytes, "the config's element size is T's");
  float acc[kN / 2];
  using Mainloop = RowTileMainloop<T, Config>;
  [[maybe_unused]] float part_acc[kFp8 ? Mainloop::kPartN / 2 : 1];  // fp8: a block's product (run_scaled)
  Mainloop mainloop{smem, consumer, lane, rank, {}};
  const RowTileEpilogue<typename RowTileTypes<T>::C, Config> epilogue{p, smem, consumer, warp, lane};
  // Ping-pong order: consumer c waits on barrier kOrder + c, which the other arrives on once
  // it has issued its main loop (and only when this consumer has a turn after it).
  constexpr int kOrder = 3;
  int turn = 0;
  for (TileWalk walk(p, worker, workers); walk.more(); walk.advance(), ++turn) {
    const int tile = walk.tile();
    const int item_n = tile / p.tile_slots;
    const int n_tile = item_n * Config::kCluster + int(rank);
    const int row = TileWalk::row_of(p, tile - item_n * p.tile_slots);
    const int steps = Config::stages_of(__ldg(p.row_ptr + row + 1) - __ldg(p.row_ptr + row));
    if constexpr (Config::kPingPong) {
      if (turn % 2 != consumer) {
        mainloop.ring.skip(steps);
        continue;
      }
      if (turn > 0) named_barrier_sync(kOrder + consumer, 256);
    }
    const int col_base = n_tile * Config::kTileN + (Config::kSplitN ? consumer * kN : 0);
    int previous = -1;
    if constexpr (kFp8) {
      // A's scale of each block: its own, its block row's or the tensor's.
      const bool per_block = p.a_scale_kind == BSRMM_SCALE_PER_BLOCK;
      const float* scales = per_block                                       ? p.a_scales + __ldg(p.row_ptr + row)
                            : p.a_scale_kind == BSRMM_SCALE_PER_BLOCK_ROW ? p.a_scales + row
                                                                           : p.a_scales;
      mainloop.run_scaled(acc, part_acc, steps, scales, per_block ? 1 : 0);
    } else {
      previous = mainloop.run(acc, steps);
    }
    if constexpr (Config::kPingPong)
      if (!walk.last()) named_barrier_arrive(kOrder + (consumer ^ 1), 256);
    mainloop.finish(acc, previous);
    if constexpr (kFp8)
      if (p.b_column_scales != nullptr) scale_columns<kN>(acc, p.b_column_scales, p.n, col_base, lane);
    epilogue(acc, row * Config::kBlockH + (Config::kSplitM ? consumer * 64 : 0), col_base);
  }
  if (threadIdx.x % 128 == 0) bulk_wait<0>();  // stores must finish reading before exit
}

// The frame: barriers, then the roles (warpgroup 0 the producer, whose one thread issues TMA;
// warpgroups 1 and 2 the consumers). setmaxnreg needs each role to be one branch of this
// if/else (warpgroup.cuh).
template <typename T, typename Config>
__global__ void __launch_bounds__(Config::kThreads, 1) row_tile_kernel(const __grid_constant__ RowTileParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kCluster = Config::kCluster;
  // This CTA's N tile within its work item's kCluster tiles, and the peer that shares its A.
  const uint32_t rank = kCluster > 1 ? cluster_cta_rank() : 0;
  const int worker = int(blockIdx.x) / kCluster, workers = int(gridDim.x) / kCluster;
  extern __shared__ uint8_t smem_raw[];
  const RowTileSmem<Config> smem(smem_raw);

  if (threadIdx.x == 0) {
    for (int s = 0; s < Config::kStages; ++s) {
      mbarrier_init(&smem.full()[s], 1);
      mbarrier_init(&smem.empty()[s], Config::kReleasingWarps * kCluster);  // of every CTA of the cluster
    }
    mbarrier_init_fence();
    tma_prefetch_map(&p.a_map);
    tma_prefetch_map(&p.b_map);
  }
  // The peer's barriers must be initialised before anything of ours can reach them.
  if constexpr (kCluster > 1) cluster_sync();
  else __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    warpgroup_release_registers<Config::kProducerRegisters>();
    // With a cluster the other producer threads must stay for the final cluster_sync.
    if (threadIdx.x != 0) {
      if constexpr (kCluster > 1) cluster_sync();
      return;
    }
    RowTileProducer<Config>{p, smem, rank, {}}.run(worker, workers);
    if constexpr (kCluster > 1) cluster_sync();
  } else {
    warpgroup_claim_registers<Config::kConsumerRegisters>();
    consume_row_tiles<T>(p, smem, rank, worker, workers, warpgroup - 1);
    // The peer may still multicast into our stages or arrive on our barriers until it is done.
    if constexpr (kCluster > 1) cluster_sync();
  }
#endif
}

}  // namespace bsrmm::cuda::sm90
