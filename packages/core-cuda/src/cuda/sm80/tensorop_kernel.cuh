// The sm80 tensor-op kernel. A CTA owns BM rows of one block row by BN columns of C and walks
// the block row's non-zero blocks in KC-wide steps: each step's A slice and B panel stream into
// a Stages-deep cp.async ring while the warps multiply an earlier step out of shared memory
// (mma.sync, fp32 or f64 accumulators in registers). No atomics: every element of C has one owner.
#pragma once

#include "../kernel_parts/tile_schedule.cuh"
#include "epilogue.cuh"
#include "operand_loader.cuh"
#include "tensorop_params.cuh"
#include "tile_config.cuh"
#include "warp_mma.cuh"

namespace bsrmm::cuda::sm80 {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) tensorop_matmul_kernel(const typename Cfg::Params p) {
  using T = typename Cfg::T;
  extern __shared__ __align__(128) unsigned char shared[];
  T* a_ring = reinterpret_cast<T*>(shared);
  T* b_ring = a_ring + Cfg::kStages * Cfg::kAStageElements;

  const Tile tile = p.schedule.at(blockIdx.x);
  const int64_t a_row0 = int64_t(tile.slice) * Cfg::kBM;
  const int64_t n0 = int64_t(tile.n_tile) * Cfg::kBN;
  const int32_t first = __ldg(p.row_ptr + tile.block_row);
  const int32_t last = __ldg(p.row_ptr + tile.block_row + 1);
  const int32_t steps = (last - first) * (p.block_width / Cfg::kKC);

  const OperandLoader<Cfg> loader(p, a_row0, n0);
  int32_t load_block = first;
  int32_t load_kc = 0;
  // The next block's column is fetched as soon as the current one is done with, so the copy
  // that needs it does not wait on a dependent global load.
  int32_t load_col = first < last ? __ldg(p.col_idx + first) : 0;
  auto load_next = [&](int stage) {
    const int64_t b_row = int64_t(load_col) * p.block_width + load_kc;
    loader.load(a_ring + stage * Cfg::kAStageElements, b_ring + stage * Cfg::kBStageElements,
                load_block, load_kc, b_row);
    load_kc += Cfg::kKC;
    if (load_kc == p.block_width) {
      load_kc = 0;
      ++load_block;
      if (load_block < last) load_col = __ldg(p.col_idx + load_block);
    }
  };

  // Every iteration commits one group (possibly empty), so wait_group<Stages-2> always means
  // "the step about to be used has landed".
#pragma unroll
  for (int stage = 0; stage < Cfg::kStages - 1; ++stage) {
    if (stage < steps) load_next(stage);
    cp_async_commit();
  }

  WarpMma<Cfg> mma(int(threadIdx.x) / 32, int(threadIdx.x) % 32);
  int read_stage = 0;
  int write_stage = Cfg::kStages - 1;
  for (int32_t step = 0; step < steps; ++step) {
    cp_async_wait<Cfg::kStages - 2>();
    // Also the barrier after which the stage read one iteration ago may be overwritten.
    __syncthreads();
    if (step + Cfg::kStages - 1 < steps) load_next(write_stage);
    cp_async_commit();
    mma.step(a_ring + read_stage * Cfg::kAStageElements, b_ring + read_stage * Cfg::kBStageElements);
    read_stage = read_stage + 1 == Cfg::kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == Cfg::kStages ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();
  __syncthreads();

  const Epilogue<Cfg> epilogue{p, int64_t(tile.block_row) * p.block_height + a_row0, n0};
  epilogue.store(mma, reinterpret_cast<typename Cfg::Acc*>(shared));
}

}  // namespace bsrmm::cuda::sm80
