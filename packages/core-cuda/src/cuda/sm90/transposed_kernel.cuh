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
// Wide (a template parameter): blocks wider than high (32 x 64, 16 x 64: width a multiple of
// Block, p.block_parts of it) take a stage per Block-wide part of each column: the part's Block
// rows of B and the Block x Block part of each block, so the consumers see the square kernel's
// stages. Square blocks compile without the parts' bookkeeping: at N = 16, where these kernels
// are bound by the producer's work per column, it cost them 3-5% (perf-log entry 31).
// The consumers issue the wgmma in one of two ways (ByRow, a template parameter):
//  - by unit (64 C rows: 4 blocks of 16, 2 of 32, 1 of 64): per 64-column chunk, one m64n64
//    wgmma per k16 step for each unit with a block in this column, the unit's slots read as one
//    64-row operand. Rows of an active unit without a block in this column must read as zero,
//    so the producer clears the slots that still hold an older column's block (dirty[stage])
//    with a TMA box outside A;
//  - by row: one m64nBlock wgmma per k16 step for each block, into the block row's own
//    accumulators, nothing zero-filled. At low density most units hold a single block, so this
//    does 1/2 to 1/4 of the tensor work, which bounds these kernels on uniform patterns; where
//    columns hold several rows of a unit (skewed patterns, whose long rows the plan groups
//    together) the unit's single wgmma is cheaper (perf-log entry 29).
// Up to 4 producer warps share the columns (the per-column barrier and TMA work of one warp was
// the bottleneck).
// Rows x Chunks is 256 (accumulators: units x chunks x 32 floats = 128 per thread). Fewer rows
// and more chunks give each column (each barrier round trip, which is what bounds these kernels
// at low density) more work, for fewer rows sharing each B slice. Performance notes:
// docs/perf-log.md. The epilogue transposes through shared memory (stmatrix.trans), up to 128
// rows x 64 columns at a time, so C rows are stored 16 bytes at a time.
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
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

template <int Block, int Rows = 256, int Chunks = 1, bool ByRow = false>
struct TransposedConfig {
  static_assert(Block == 16 || Block == 32 || Block == 64);
  static_assert(Rows * Chunks == 256 && Rows >= 64 && Rows >= 2 * Block);
  static constexpr int kThreads = 384;
  static constexpr int kRows = Rows;             // C rows per tile
  static constexpr int kGroup = kRows / Block;   // block rows per tile (one producer lane each)
  static constexpr int kChunks = Chunks;         // 64-column chunks of B per consumer warpgroup
  static constexpr int kTileN = 128 * Chunks;
  static constexpr int kBChunkBytes = Block * 128;  // Block K rows x 64 columns
  static constexpr int kBBytes = 2 * Chunks * kBChunkBytes;
  static constexpr int kBLoadLanes = 2 * Chunks;    // the producer lanes after the A lanes
  static_assert(kGroup + kBLoadLanes <= 32);
  static constexpr int kABytes = Block * Block * 2;
  static constexpr int kStageBytes = kBBytes + kGroup * kABytes;
  // The epilogue stages at most 128 rows x 64 columns per consumer at a time, which leaves
  // room for more ring stages: the producer's lead over the consumers is what these
  // kernels are short of (at block 32, one stage less of it cost 10%).
  static constexpr int kStagingRows = kRows < 128 ? kRows : 128;
  static constexpr int kStagingBytes = 2 * kStagingRows * 128;
  static constexpr int kSmemLimit = 227 * 1024;
  static constexpr int kStagesFit = (kSmemLimit - 1024 - kStagingBytes - 512) / kStageBytes;
  // Producer warps fill the stages round robin, each stage always by the same warp (so the
  // empty barrier's parity wait can never be two phases behind): stages % warps == 0. Four
  // warps where 8 or more stages fit: at 32 KB of B per stage (block 16, 512 wide) 2 warps and
  // 10 stages ran 1.2x slower than 4 and 8, 1 warp and 11 1.3x. With fewer, every stage counts
  // more than the producer's issue rate: block 32, 512 wide, ran 3-7% faster with 1 warp and 5
  // stages than with 2 and 4 (docs/perf-log.md entry 27).
  static constexpr int kStagesCapped = kStagesFit > 16 ? 16 : kStagesFit;
  static constexpr int kProducerWarps = kStagesFit >= 8 ? 4 : kStagesFit % 2 == 0 ? 2 : 1;
  static constexpr int kStages = kStagesCapped - kStagesCapped % kProducerWarps;
  static_assert(kStages >= 2);
  static constexpr int kSmemBytes = 1024 + kStagingBytes + kStages * kStageBytes + kStages * 24;
  static constexpr int kUnits = kRows / 64;
  static constexpr int kRowsPerUnit = 64 / Block;  // block rows in one 64-row unit
  static constexpr uint32_t kUnitMask = (1u << kRowsPerUnit) - 1;
  static constexpr bool kByRow = ByRow;
  // Accumulators: per unit (32 floats per chunk and thread: an m64n64) or per block row (Block / 2:
  // an m64nBlock, whose elements are the unit's n = Block * its place ..).
  static constexpr int kAccPerEntry = ByRow ? Block / 2 : 32;
  static constexpr int kAccEntries = ByRow ? kGroup : kUnits;
  // The A block's rows (Block * 2 bytes) set the swizzle its K-major operand uses.
  static constexpr Swizzle kASwizzle = swizzle_for_row(Block * 2);
  static constexpr uint32_t kAGroupBytes = 8 * Block * 2;  // 8 rows: the descriptor's SBO
  // wgmma groups (one per stage) left running before a stage is released: small blocks give
  // each stage only a few short wgmma, so waiting for the previous one alone left the tensor
  // cores idle for most of each wgmma's latency.
  static constexpr int kInFlight = kStages >= 12 ? 4 : kStages >= 6 ? 2 : 1;
  static_assert(kStages % kProducerWarps == 0 && kStages > kInFlight + 1);
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;
};

// The rows of every 64-row unit that has at least one of `rows`.
template <typename Config>
__device__ inline uint32_t active_units_of(uint32_t rows) {
  uint32_t units = 0;
#pragma unroll
  for (int u = 0; u < Config::kUnits; ++u)
    if ((rows >> (u * Config::kRowsPerUnit)) & Config::kUnitMask)
      units |= Config::kUnitMask << (u * Config::kRowsPerUnit);
  return units;
}

// Rows of A (a unit of 64, or one block of Block) against this consumer's 64 columns of the B
// slice: Block / 16 k-steps of m64nRowsk16. k-steps advance the B slice by 16 rows (2048 bytes)
// and the A rows by 32 bytes (16 elements of their K-major rows); descriptors count 16-byte
// units in their low bits.
template <typename T, int Block, int Rows>
__device__ __forceinline__ void issue_rows(float (&acc)[Rows / 2], uint64_t b_chunk, uint64_t a_rows) {
#pragma unroll
  for (int k = 0; k < Block / 16; ++k)
    wgmma_m64k16<T, Rows, 1, 0>(acc, b_chunk + uint64_t(k * (2048 >> 4)), a_rows + uint64_t(k * 2));
}

template <typename T, int Block, int Rows, int Chunks, bool ByRow, bool Wide = false>
__global__ void __launch_bounds__(384, 1) transposed_kernel(const __grid_constant__ KernelParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Config = TransposedConfig<Block, Rows, Chunks, ByRow>;
  constexpr int kStages = Config::kStages;
  constexpr int kGroup = Config::kGroup;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint8_t* staging = smem;
  uint8_t* stages = smem + Config::kStagingBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(stages + kStages * Config::kStageBytes);
  uint64_t* empty = full + kStages;
  uint32_t* meta = reinterpret_cast<uint32_t*>(empty + kStages);
  uint32_t* dirty = meta + kStages;  // slots holding a block from an earlier column (producer only)

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], 8);  // lane 0 of each of the 8 consumer warps
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
    // The producer warps all walk the tile's merged columns, which the plan computed once per
    // matrix (redoing the merge per tile in every warp was two thirds of the producer's time on
    // an H100), 32 entries per load; lane g < kGroup counts block row g's blocks (q: its next
    // one). Warp w fills stages w, w + kProducerWarps, ... of the walk (a stage per column, or
    // per part of a column for wide blocks): one warp doing the barrier and TMA work of every
    // column left the consumers waiting ~45% of their time.
    const int producer_warp = threadIdx.x / 32;
    if (threadIdx.x < kStages) dirty[threadIdx.x] = (1u << kGroup) - 1;  // smem starts undefined
    named_barrier_sync(3, 128);
    if (producer_warp >= Config::kProducerWarps) return;
    RingPosition<kStages> ring;
    uint32_t stage_count = 0;
    const int parts = Wide ? p.block_parts : 1;  // stages per column
    // One column's stage: its B slice (two 64-column halves) and the A blocks of the rows that
    // have it; rows == 0 ends the tile (no bytes: the consumers only read meta).
    auto fill_stage = [&](int column, int part, uint32_t rows, int q, int n_tile) {
      mbarrier_wait(&empty[ring.stage], ring.phase ^ 1);
      uint8_t* stage = stages + ring.stage * Config::kStageBytes;
      // By unit, rows of an active unit without a block here are read by its wgmma: the slots
      // that still hold an older column's block get a box entirely outside A, which TMA fills
      // with zeros (and counts like any other box). By row reads only present rows: no
      // bookkeeping.
      const uint32_t active = Config::kByRow ? 0u : active_units_of<Config>(rows);
      const uint32_t stale = Config::kByRow ? 0u : dirty[ring.stage] & ~rows & active;
      __syncwarp();
      if (lane == 0) {
        if (!Config::kByRow && rows) dirty[ring.stage] = (dirty[ring.stage] & ~active) | rows;
        meta[ring.stage] = rows;
        mbarrier_arrive_expect_tx(
            &full[ring.stage], rows ? Config::kBBytes + __popc(rows | stale) * Config::kABytes : 0);
      }
      __syncwarp();
      uint8_t* slot = stage + Config::kBBytes + lane * Config::kABytes;
      if (rows & (1u << lane))
        tma_load_2d(slot, &p.a_map, part * Block, q * Block, &full[ring.stage]);
      else if (stale & (1u << lane))
        tma_load_2d(slot, &p.a_map, 0, p.a_zero_row, &full[ring.stage]);
      // The B slice: one box of all its 64-column chunks when B is mapped as chunks (one
      // request instead of 2 x Chunks: the requests of a warp's lanes issue one after another,
      // and at 8 per column they held a lone producer warp back), else a box per chunk.
      const int k = (column * parts + part) * Block;  // the B slice's first row
      if (rows && p.b_column_chunks && lane == 31) {
        tma_load_3d(stage, &p.b_map, 0, k, n_tile * (Config::kTileN / 64), &full[ring.stage]);
      } else if (rows && !p.b_column_chunks && lane >= 32 - Config::kBLoadLanes) {
        const int chunk = lane - (32 - Config::kBLoadLanes);
        tma_load_2d(stage + chunk * Config::kBChunkBytes, &p.b_map, n_tile * Config::kTileN + 64 * chunk, k,
                    &full[ring.stage]);
      }
    };
    for (TileWalk walk(p); walk.more(); walk.advance()) {
      const int tile = walk.tile();
      const int n_tile = tile / p.tile_slots;
      const int group = tile - n_tile * p.tile_slots;
      const int first_slot = group * kGroup;  // the group's row i is group_rows[first_slot + i]
      int q = lane < kGroup && first_slot + lane < p.block_rows
                  ? __ldg(p.row_ptr + __ldg(p.group_rows + first_slot + lane))
                  : 0;
      const int end = __ldg(p.group_column_begin + group + 1);
      // Lane i holds entry base + i; past the end (0, 0): the empty column that ends the tile.
      auto entries_at = [&](int base) {
        return base + lane < end ? __ldg(p.group_columns + base + lane) : make_uint2(0, 0);
      };
      int base = __ldg(p.group_column_begin + group);
      uint2 held = entries_at(base);
      for (;;) {
        const uint2 coming = entries_at(base + 32);  // lands while these 32 are issued
        const int count = min(32, end - base + 1);   // + 1: the ending column, once
        // One stage per pass; entry j moves on after its last part (at once for square blocks
        // and for the ending column). (A nested loop over the parts cost square blocks ~30% at
        // N = 16, this one 3-5%, hence Wide.)
        int part = 0;
#pragma unroll 1
        for (int j = 0; j < count;) {
          const int column = int(__shfl_sync(0xffffffffu, held.x, j));
          const uint32_t rows = __shfl_sync(0xffffffffu, held.y, j);
          if (stage_count++ % Config::kProducerWarps == uint32_t(producer_warp))
            fill_stage(column, Wide ? part : 0, rows, q, n_tile);
          ring.advance();
          if (Wide && rows && ++part < parts) continue;
          part = 0;
          q += (rows >> lane) & 1;
          ++j;
        }
        if (base + 32 > end) break;
        base += 32;
        held = coming;
      }
    }
  } else {
    warpgroup_claim_registers<Config::kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const int thread = threadIdx.x % 128;
    const int warp = thread / 32;
    constexpr int kUnits = Config::kUnits;
    constexpr int kChunks = Config::kChunks;
    float acc[Config::kAccEntries][kChunks][Config::kAccPerEntry];
    // Element i (0..31) of unit u's m64n64 accumulator layout.
    auto unit_acc = [&](int u, int chunk, int i) -> float& {
      constexpr int kEntriesPerUnit = 32 / Config::kAccPerEntry;
      return acc[u * kEntriesPerUnit + i / Config::kAccPerEntry][chunk][i % Config::kAccPerEntry];
    };
    RingPosition<kStages> ring;     // next stage to consume
    RingPosition<kStages> release;  // oldest stage not yet handed back to the producer
    uint8_t* my_staging = staging + consumer * (Config::kStagingRows * 128);
    T* c = static_cast<T*>(p.c);
    const T* bias = static_cast<const T*>(p.bias);

    for (TileWalk walk(p); walk.more(); walk.advance()) {
      const int tile = walk.tile();
      const int n_tile = tile / p.tile_slots;
      const int first_slot = (tile - n_tile * p.tile_slots) * kGroup;
      // The C row of the tile's row `r` (0 .. Rows - 1): the group's row r / Block is block row
      // group_rows[first_slot + r / Block], which is only there while that index is below
      // block_rows (the last group may be short).
      auto has_row = [&](int r) { return first_slot + r / Block < p.block_rows; };
      auto c_row = [&](int r) {
        return int64_t(__ldg(p.group_rows + first_slot + r / Block)) * Block + r % Block;
      };
#pragma unroll
      for (int e = 0; e < Config::kAccEntries; ++e)
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
          for (int i = 0; i < Config::kAccPerEntry; ++i) acc[e][c][i] = 0.0f;

      int in_flight = 0;  // stages whose wgmma may still read them, oldest at `release`
      for (;;) {
        mbarrier_wait(&full[ring.stage], ring.phase);
        // Broadcast from lane 0 so ptxas sees a warp-uniform value: a branch it must treat as
        // divergent around wgmma makes it serialise every wgmma.
        const uint32_t rows = __shfl_sync(0xffffffffu, meta[ring.stage], 0);
        if (rows == 0) {
          wgmma_wait<0>();
          if (lane == 0) {
            for (int i = 0; i < in_flight; ++i, release.advance()) mbarrier_arrive(&empty[release.stage]);
            mbarrier_arrive(&empty[ring.stage]);
          }
          ring.advance();
          release = ring;
          break;
        }
        const uint32_t stage = smem_address(stages + ring.stage * Config::kStageBytes);
        const uint64_t b_chunks = wgmma_descriptor(stage + consumer * kChunks * Config::kBChunkBytes,
                                                   Config::kBChunkBytes, 1024, Swizzle::b128);
        const uint64_t a_slots = wgmma_descriptor(stage + Config::kBBytes, 16,
                                                  Config::kAGroupBytes, Config::kASwizzle);
        auto b_chunk = [&](int c) { return b_chunks + uint64_t(c * (Config::kBChunkBytes >> 4)); };
        auto a_slot = [&](int slot) { return a_slots + uint64_t(slot * (Config::kABytes >> 4)); };
        if constexpr (Config::kByRow) {
#pragma unroll
          for (int r = 0; r < kGroup; ++r) {
            if ((rows >> r) & 1u) {
              wgmma_fence();
#pragma unroll
              for (int c = 0; c < kChunks; ++c) issue_rows<T, Block, Block>(acc[r][c], b_chunk(c), a_slot(r));
            }
          }
        } else {
#pragma unroll
          for (int u = 0; u < kUnits; ++u) {
            if ((rows >> (u * Config::kRowsPerUnit)) & Config::kUnitMask) {
              wgmma_fence();
#pragma unroll
              for (int c = 0; c < kChunks; ++c)
                issue_rows<T, Block, 64>(acc[u][c], b_chunk(c), a_slot(u * Config::kRowsPerUnit));
            }
          }
        }
        wgmma_commit();
        ring.advance();
        if (++in_flight > Config::kInFlight) {
          wgmma_wait<Config::kInFlight>();
          if (lane == 0) mbarrier_arrive(&empty[release.stage]);
          release.advance();
          --in_flight;
        }
      }
#pragma unroll
      for (int e = 0; e < Config::kAccEntries; ++e)
#pragma unroll
        for (int c = 0; c < kChunks; ++c) wgmma_fence_operands(acc[e][c]);

      // Epilogue, by 64-row units. Thread holds D[m][n] of a unit as unit_acc(u, chunk,
      // 4j + 2mb (+1)) for m = 16 warp + lane/4 + 8mb, n = 8j + 2(lane%4) (+1),
      // D[m][n] = C[row n][column m]. Finish in registers, stmatrix.trans into a staging tile of
      // up to 128 rows x 64 columns (16-byte chunks XOR-swizzled by row so the 8 rows of one
      // stmatrix land in different banks), then store whole 128-byte row segments; one pass per
      // 64-column chunk and staging tile's worth of rows.
      constexpr int kUnitsPerPass = Config::kStagingRows / 64;
      with_epilogue_constants(p.activation, p.beta, [&](auto activation, auto accumulate) {
        const float beta = decltype(accumulate)::value ? p.beta : 0.0f;
#pragma unroll
        for (int pass = 0; pass < kChunks * (kUnits / kUnitsPerPass); ++pass) {
          const int chunk_of_b = pass / (kUnits / kUnitsPerPass);  // this pass's 64 columns
          const int row_part = pass % (kUnits / kUnitsPerPass);   // and its staged rows
          const int column_base = n_tile * Config::kTileN + (consumer * kChunks + chunk_of_b) * 64;
          named_barrier_sync(1 + consumer, 128);  // the previous stores have read staging
#pragma unroll
          for (int uu = 0; uu < kUnitsPerPass; ++uu) {
            const int u = row_part * kUnitsPerPass + uu;
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {  // 16 C rows of the unit per stmatrix.x4
              // The 16 rows are in one block row (Block >= 16): all there or none.
              if (!has_row(u * 64 + 16 * jj)) continue;
              const int64_t rows_base = c_row(u * 64 + 16 * jj);
              uint32_t fragments[2][2];
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int j = 2 * jj + h;  // 8-row group of the unit
                const int64_t row = rows_base + 8 * h + 2 * (lane % 4);
                const float bias0 = bias ? Element<T>::to_acc(bias[row]) : 0.0f;
                const float bias1 = bias ? Element<T>::to_acc(bias[row + 1]) : 0.0f;
#pragma unroll
                for (int mb = 0; mb < 2; ++mb) {
                  const int column = column_base + warp * 16 + 8 * mb + lane / 4;
                  float old0 = 0.0f, old1 = 0.0f;
                  if (decltype(accumulate)::value && column < p.n) {
                    old0 = Element<T>::to_acc(c[row * p.ldc + column]);
                    old1 = Element<T>::to_acc(c[(row + 1) * p.ldc + column]);
                  }
                  const float low = unit_acc(u, chunk_of_b, 4 * j + 2 * mb);
                  const float high = unit_acc(u, chunk_of_b, 4 * j + 2 * mb + 1);
                  fragments[h][mb] = pack_pair<T>(
                      epilogue::finish(low, p.alpha, beta, old0, bias0, activation.value),
                      epilogue::finish(high, p.alpha, beta, old1, bias1, activation.value));
                }
              }
              const int tile_index = lane / 8;  // which of the 4 tiles this lane addresses
              const int staging_row = uu * 64 + 16 * jj + 8 * (tile_index / 2) + lane % 8;
              const int chunk = 2 * warp + tile_index % 2;
              stmatrix_x4_trans(my_staging + staging_row * 128 + ((chunk ^ (staging_row & 7)) * 16),
                                fragments[0][0], fragments[0][1], fragments[1][0], fragments[1][1]);
            }
          }
          named_barrier_sync(1 + consumer, 128);
#pragma unroll 4
          for (int store = 0; store < Config::kStagingRows / 16; ++store) {
            const int staging_row = store * 16 + thread / 8;
            const int chunk = thread % 8;
            const int tile_row = row_part * Config::kStagingRows + staging_row;
            const int column = column_base + 8 * chunk;
            if (has_row(tile_row) && column < p.n)
              *reinterpret_cast<uint4*>(c + c_row(tile_row) * p.ldc + column) = *reinterpret_cast<const uint4*>(
                  my_staging + staging_row * 128 + ((chunk ^ (staging_row & 7)) * 16));
          }
        }
      });
    }
  }
#endif
}

}  // namespace bsrmm::cuda::sm90
