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
// Cluster = 2: the kernel is bound by L2 -> SM traffic (ncu on the H100 grid: L2 throughput 88%
// at block 128, 82% at 64, with the SMs ~40-65% busy), and A is a third of it at block 128. Two
// CTAs of a cluster take the same block row and neighbouring N tiles (a work item is a pair of N
// tiles); each loads half of every A slice and multicasts it into both, so A crosses L2 once per
// pair. A stage is then free only when the consumers of both CTAs released it: each consumer
// warp arrives on its own and on its peer's empty barrier. Measured at block 128, d = 0.125: L2
// reads 805 -> 710 MB, time -3% (-7% at d = 0.25); L2 is not the whole limit (docs/perf-log.md).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "cluster.cuh"
#include "epilogue_dispatch.cuh"
#include "kernel_params.cuh"
#include "mbarrier.cuh"
#include "pack.cuh"
#include "pipeline.cuh"
#include "tma.cuh"
#include "warpgroup.cuh"
#include "wgmma.cuh"
#include "work_walk.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <int BlockH, int BlockW, int TileN, bool PingPong = false>
struct RowTileConfig {
  static_assert(BlockH == 64 || BlockH == 128, "row tiles take blocks 64 or 128 high");
  static_assert(!PingPong || BlockH == 64, "ping-pong consumers take blocks 64 high");
  static_assert(BlockW == 32 || BlockW == 64 || BlockW == 128, "row tiles take blocks 32, 64 or 128 wide");
  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
  // A stage is 64 deep in K (one 128-byte swizzle row of 16-bit A elements), 32 for N tiles 512
  // wide: their B slice alone would be 64 KB at depth 64, and only 2 such stages would fit.
  static constexpr int kStageK = TileN > 256 ? 32 : 64;
  // One block's A slice: its whole width up to a stage's depth, in the swizzle of that width.
  static constexpr int kSliceK = BlockW < kStageK ? BlockW : kStageK;
  static constexpr int kSliceRowBytes = kSliceK * 2;
  static constexpr int kBlocksPerStage = kStageK / kSliceK;  // 2 for 32-wide blocks
  static constexpr int kStagesPerBlock = BlockW / kSliceK;   // 2 for 128-wide blocks
  static constexpr int kStepsPerSlice = kSliceK / 16;        // wgmma k16 steps
  // Who owns what of a tile: block 128, a consumer each 64 of its rows; block 64, both the same
  // rows and half the N tile each, or (ping-pong) a consumer each whole tile in turn.
  static constexpr bool kSplitM = BlockH == 128;
  static constexpr bool kSplitN = BlockH == 64 && !PingPong;
  static constexpr int kConsumerN = kSplitN ? TileN / 2 : TileN;
  // Consumer warps that release a stage (lane 0 of each warp that reads it), per CTA.
  static constexpr int kReleasingWarps = PingPong ? 4 : 8;
  static_assert(kConsumerN == 64 || kConsumerN == 128 || kConsumerN == 256, "wgmma width per consumer");
  static constexpr int kASliceBytes = BlockH * kSliceRowBytes;
  static constexpr int kABytes = kBlocksPerStage * kASliceBytes;
  static constexpr int kBChunkBytes = kStageK * 64 * 2;  // kStageK rows x 64 columns
  static constexpr int kBBytes = (TileN / 64) * kBChunkBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // Epilogue staging per consumer: kStagingChunks 64 x 64 chunks (one 128B-swizzled TMA store
  // box each); a consumer's 64 x kConsumerN tile leaves in kConsumerN / kPassColumns passes
  // through it (one chunk when the consumer is only 64 wide).
  static constexpr int kStagingChunks = kConsumerN == 64 ? 1 : 2;
  static constexpr int kPassColumns = 64 * kStagingChunks;
  static constexpr int kStagingBytes = kStagingChunks * 64 * 128;
  static constexpr int kSmemLimit = 227 * 1024;
  static constexpr int kBarrierBytes = 256;
  static constexpr int kStages =
      (kSmemLimit - 1024 - kBarrierBytes - 2 * kStagingBytes) / kStageBytes;
  static_assert(kStages >= 2);
  static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + 2 * kStagingBytes + kBarrierBytes;
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;

  // Stages of a block row holding `blocks` blocks.
  __host__ __device__ static constexpr int stages_of(int blocks) {
    return kBlocksPerStage > 1 ? (blocks + kBlocksPerStage - 1) / kBlocksPerStage : blocks * kStagesPerBlock;
  }
};

// ColMajorC: C is column-major. The epilogue then stores each staged chunk transposed
// (stmatrix .trans: 64 columns of C as rows of 64 C elements), through a tensor map over C^T.
// ColMajorB: B is column-major. Its chunks arrive through a map over B^T as 64 columns of 64 K
// each (K contiguous, like A's slices), so wgmma reads B K-major; a 32-wide block's 32 K would
// fill only half of those 128-byte rows, so blocks that narrow take row-major B only.
// PingPong (blocks 64 high): the consumers take the walk's tiles in turn, each a whole
// 64 x TileN tile (m64nTileN, twice the accumulators of splitting N), and their main loops run
// one after the other, so one consumer's epilogue and pipeline drain overlap the other's wgmma
// instead of leaving the tensor cores idle at every tile's end. The order is also what keeps
// the ring's parity waits sound: a consumer starts waiting on its tile's stages only once the
// other has waited on all of its own, so no stage can be two laps ahead of it.
template <typename T, int BlockH, int BlockW, int TileN, int Cluster, bool ColMajorC = false,
          bool ColMajorB = false, bool PingPong = false>
__global__ void __launch_bounds__(384, 1) row_tile_kernel(const __grid_constant__ KernelParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(Cluster == 1 || Cluster == 2);
  static_assert(Cluster == 1 || !PingPong, "ping-pong consumers run without clusters");
  using Config = RowTileConfig<BlockH, BlockW, TileN, PingPong>;
  static_assert(!ColMajorB || (Config::kBlocksPerStage == 1 && Config::kStageK == 64),
                "column-major B needs blocks >= 64 wide and 64-deep stages");
  static_assert(Cluster == 1 || Config::kBlocksPerStage == 1, "A multicast takes one block per stage");
  // This CTA's N tile within its work item's Cluster tiles, and the peer that shares its A.
  const uint32_t rank = Cluster > 1 ? cluster_cta_rank() : 0;
  const int worker = int(blockIdx.x) / Cluster, workers = int(gridDim.x) / Cluster;
  constexpr int kStages = Config::kStages;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint8_t* staging = smem + kStages * Config::kStageBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(staging + 2 * Config::kStagingBytes);
  uint64_t* empty = full + kStages;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], Config::kReleasingWarps * Cluster);  // of every CTA of the cluster
    }
    mbarrier_init_fence();
    tma_prefetch_map(&p.a_map);
    tma_prefetch_map(&p.b_map);
  }
  // The peer's barriers must be initialised before anything of ours can reach them.
  if constexpr (Cluster > 1) cluster_sync();
  else __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    warpgroup_release_registers<Config::kProducerRegisters>();
    // With a cluster the other producer threads must stay for the final cluster_sync.
    if (threadIdx.x != 0) {
      if constexpr (Cluster > 1) cluster_sync();
      return;
    }
    RingPosition<kStages> ring;
    for (TileWalk walk(p, worker, workers); walk.more(); walk.advance()) {
      const int tile = walk.tile();
      const int item_n = tile / p.tile_slots;
      const int n_tile = item_n * Cluster + int(rank);
      const int row = TileWalk::row_of(p, tile - item_n * p.tile_slots);
      const int n0 = n_tile * TileN;
      const int end = __ldg(p.row_ptr + row + 1);
      for (int first = __ldg(p.row_ptr + row); first < end; first += Config::kBlocksPerStage) {
        const int blocks = min(Config::kBlocksPerStage, end - first);  // in this stage
#pragma unroll 1
        for (int s = 0; s < Config::kStagesPerBlock; ++s) {
          mbarrier_wait(&empty[ring.stage], ring.phase ^ 1);
          uint8_t* a_slices = smem + ring.stage * Config::kStageBytes;
          uint8_t* b_slice = a_slices + Config::kABytes;
          mbarrier_arrive_expect_tx(&full[ring.stage], Config::kStageBytes);
#pragma unroll
          for (int i = 0; i < Config::kBlocksPerStage; ++i) {
            const int q = first + i;
            // The half stage after a row's odd last block (never, for blocks 64 wide or more).
            const bool zeros = Config::kBlocksPerStage > 1 && i >= blocks;
            const int a_col = s * Config::kSliceK, a_row = zeros ? p.a_zero_row : q * BlockH;
            uint8_t* a_slice = a_slices + i * Config::kASliceBytes;
            if constexpr (Cluster > 1) {
              // Our half of the A slice's rows, into the same place in both CTAs.
              constexpr int kHalf = BlockH / 2;
              tma_load_2d_multicast(a_slice + rank * kHalf * Config::kSliceRowBytes, &p.a_map, a_col,
                                    a_row + int(rank) * kHalf, &full[ring.stage], 0b11);
            } else {
              tma_load_2d(a_slice, &p.a_map, a_col, a_row, &full[ring.stage]);
            }
            // Block i's K rows sit below block i - 1's in every 64 x 64 chunk of B.
            const int k = zeros ? p.b_zero_row : __ldg(p.col_idx + q) * BlockW + s * Config::kSliceK;
            uint8_t* b_rows = b_slice + i * Config::kSliceK * 128;
#pragma unroll
            for (int j = 0; j < TileN / 64; ++j) {
              const int n = n0 + 64 * j;
              if constexpr (ColMajorB)
                tma_load_2d(b_rows + j * Config::kBChunkBytes, &p.b_map, k, n, &full[ring.stage]);
              else
                tma_load_2d(b_rows + j * Config::kBChunkBytes, &p.b_map, n, k, &full[ring.stage]);
            }
          }
          ring.advance();
        }
      }
    }
    if constexpr (Cluster > 1) cluster_sync();
  } else {
    warpgroup_claim_registers<Config::kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    constexpr int kN = Config::kConsumerN;
    float acc[kN / 2];
    RingPosition<kStages> ring;
    // A consumer warp frees a stage in this CTA and, with a cluster, in the peer (whose A half
    // the stage also holds).
    auto release = [&](int stage) {
      if (lane != 0) return;
      mbarrier_arrive(&empty[stage]);
      if constexpr (Cluster > 1) mbarrier_arrive_cluster(&empty[stage], rank ^ 1u);
    };
    // Ping-pong order: consumer c waits on barrier kOrder + c, which the other arrives on once
    // it has issued its main loop (and only when this consumer has a turn after it).
    constexpr int kOrder = 3;
    int turn = 0;
    for (TileWalk walk(p, worker, workers); walk.more(); walk.advance(), ++turn) {
      const int tile = walk.tile();
      const int item_n = tile / p.tile_slots;
      const int n_tile = item_n * Cluster + int(rank);
      const int row = TileWalk::row_of(p, tile - item_n * p.tile_slots);
      const int steps = Config::stages_of(__ldg(p.row_ptr + row + 1) - __ldg(p.row_ptr + row));
      if constexpr (PingPong) {
        if (turn % 2 != consumer) {
          ring.skip(steps);
          continue;
        }
        if (turn > 0) named_barrier_sync(kOrder + consumer, 256);
      }
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) acc[i] = 0.0f;
      int previous = -1;
      for (int step = 0; step < steps; ++step) {
        mbarrier_wait(&full[ring.stage], ring.phase);
        const uint32_t a_start = smem_address(smem + ring.stage * Config::kStageBytes) +
                                 (Config::kSplitM ? consumer * 64 * Config::kSliceRowBytes : 0);
        const uint32_t b_start = smem_address(smem + ring.stage * Config::kStageBytes + Config::kABytes) +
                                 (Config::kSplitN ? consumer * (kN / 64) * Config::kBChunkBytes : 0);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < Config::kStageK / 16; ++k) {
          // Step k reads A slice k / kStepsPerSlice, 16 columns (32 bytes) at a time along its rows.
          const uint32_t a_at = a_start + (k / Config::kStepsPerSlice) * Config::kASliceBytes +
                                (k % Config::kStepsPerSlice) * 32;
          const uint64_t a = wgmma_descriptor(a_at, 16, 8 * Config::kSliceRowBytes,
                                              swizzle_for_row(Config::kSliceRowBytes));
          const uint64_t b =
              ColMajorB ? wgmma_descriptor(b_start + k * 32, 16, 1024, Swizzle::b128)
                        : wgmma_descriptor(b_start + k * 16 * 128, Config::kBChunkBytes, 1024,
                                           Swizzle::b128);
          wgmma_m64k16<T, kN, 0, ColMajorB ? 0 : 1>(acc, a, b);
        }
        wgmma_commit();
        wgmma_wait<1>();
        if (previous >= 0) release(previous);
        previous = ring.stage;
        ring.advance();
      }
      if constexpr (PingPong)
        if (!walk.last()) named_barrier_arrive(kOrder + (consumer ^ 1), 256);
      wgmma_wait<0>();
      wgmma_fence_operands(acc);
      if (previous >= 0) release(previous);

      // Epilogue: finish in registers (thread owns rows r and r + 8 of its warp's 16, columns
      // 8j + 2(lane % 4) and the next), stmatrix into a 128B-swizzled staging chunk, TMA-store
      // it. The store runs while this warpgroup starts its next tile; only the next pass's
      // write into the same staging waits for the store to have read it.
      const int row_base = row * BlockH + (Config::kSplitM ? consumer * 64 : 0);
      const int col_base = n_tile * TileN + (Config::kSplitN ? consumer * kN : 0);
      const int thread = threadIdx.x % 128;
      uint8_t* my_staging = staging + consumer * Config::kStagingBytes;
      with_epilogue_constants(p.activation, p.beta, [&](auto activation, auto accumulate) {
        const T* c = static_cast<const T*>(p.c);
        const T* bias = static_cast<const T*>(p.bias);
        const float beta = decltype(accumulate)::value ? p.beta : 0.0f;
        const int64_t r0 = row_base + warp * 16 + lane / 4;
        const float bias_value[2] = {bias ? Element<T>::to_acc(bias[r0]) : 0.0f,
                                     bias ? Element<T>::to_acc(bias[r0 + 8]) : 0.0f};
#pragma unroll
        for (int pass = 0; pass < kN / Config::kPassColumns; ++pass) {
          if (thread == 0) bulk_wait_read<0>();
          named_barrier_sync(1 + consumer, 128);  // staging is free again
          constexpr int kGroups = Config::kPassColumns / 8;  // 8-column groups per pass
#pragma unroll
          for (int jp = 0; jp < kGroups; jp += 2) {
            uint32_t fragments[4];
#pragma unroll
            for (int t = 0; t < 4; ++t) {  // tile t: rows +8 * (t % 2), column group j + t / 2
              const int j = pass * kGroups + jp + t / 2, mb = t % 2;
              const int col = col_base + 8 * j + 2 * (lane % 4);
              float old0 = 0.0f, old1 = 0.0f;
              if constexpr (decltype(accumulate)::value) {
                if (col < p.n) {
                  const int64_t row = r0 + 8 * mb;
                  const T* c_at = ColMajorC ? c + col * p.ldc + row : c + row * p.ldc + col;
                  old0 = Element<T>::to_acc(c_at[0]);
                  old1 = Element<T>::to_acc(ColMajorC ? c_at[p.ldc] : c_at[1]);
                }
              }
              fragments[t] = pack_pair<T>(
                  epilogue::finish(acc[4 * j + 2 * mb], p.alpha, beta, old0, bias_value[mb], activation.value),
                  epilogue::finish(acc[4 * j + 2 * mb + 1], p.alpha, beta, old1, bias_value[mb], activation.value));
            }
            const int t = lane / 8;
            const int group = jp + t / 2;  // 8-column group within this pass
            if constexpr (ColMajorC) {
              // Lane l addresses row l % 8 of matrix t transposed: C column 8 * group + l % 8,
              // whose 8 elements (rows warp * 16 + 8 * (t % 2) ..) are 16-byte unit 2 warp + t % 2.
              const int staging_row = 8 * (group % 8) + lane % 8;
              const int unit = warp * 2 + t % 2;
              stmatrix_x4_trans(my_staging + (group / 8) * 8192 + staging_row * 128 +
                                    ((unit ^ (staging_row & 7)) * 16),
                                fragments[0], fragments[1], fragments[2], fragments[3]);
            } else {
              const int staging_row = warp * 16 + 8 * (t % 2) + lane % 8;
              stmatrix_x4(my_staging + (group / 8) * 8192 + staging_row * 128 +
                              (((group % 8) ^ (staging_row & 7)) * 16),
                          fragments[0], fragments[1], fragments[2], fragments[3]);
            }
          }
          fence_proxy_async_shared();
          named_barrier_sync(1 + consumer, 128);
          if (thread == 0) {
#pragma unroll
            for (int chunk = 0; chunk < Config::kStagingChunks; ++chunk) {
              const int col = col_base + pass * Config::kPassColumns + 64 * chunk;
              if constexpr (ColMajorC) tma_store_2d(&p.c_map, my_staging + chunk * 8192, row_base, col);
              else tma_store_2d(&p.c_map, my_staging + chunk * 8192, col, row_base);
            }
            bulk_commit();
          }
        }
      });
    }
    if (threadIdx.x % 128 == 0) bulk_wait<0>();  // stores must finish reading before exit
    // The peer may still multicast into our stages or arrive on our barriers until it is done.
    if constexpr (Cluster > 1) cluster_sync();
  }
#endif
}

}  // namespace bsrmm::cuda::sm90
