// The tiles one CTA of a persistent kernel runs, in order. With the plan's balanced work list
// (kernel_params.cuh: work_items / work_begin) the CTA runs its own part of the list, each item
// n_tile * tile_slots + slot with the slot itself (block row or row group); without one, the
// tiles blockIdx.x, + gridDim.x, ... of the N-tile-major order, slots in row_order. Producer
// and consumers each walk the same sequence (and with clusters, every CTA of a cluster).
#pragma once

#include "kernel_params.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

struct TileWalk {
  const int32_t* items;
  int32_t next, end, step;

  __device__ explicit TileWalk(const KernelParams& p) : TileWalk(p, blockIdx.x, gridDim.x) {}
  // Worker `worker` of `workers`: a CTA, or a cluster whose CTAs walk the same tiles together.
  __device__ TileWalk(const KernelParams& p, int32_t worker, int32_t workers)
      : items(p.work_items),
        next(p.work_items ? __ldg(p.work_begin + worker) : worker),
        end(p.work_items ? __ldg(p.work_begin + worker + 1) : p.tile_count),
        step(p.work_items ? 1 : workers) {}

  __device__ bool more() const { return next < end; }
  __device__ void advance() { next += step; }
  // Whether the current tile is this worker's last.
  __device__ bool last() const { return next + step >= end; }
  // The current tile as (N tile, slot).
  __device__ int32_t tile() const { return items ? __ldg(items + next) : next; }
  // The block row of a row tile's slot: the list names rows directly; the round robin takes the
  // slots in row_order (longest first) when there is one.
  __device__ static int32_t row_of(const KernelParams& p, int32_t slot) {
    return !p.work_items && p.row_order ? __ldg(p.row_order + slot) : slot;
  }
};

}  // namespace bsrmm::cuda::sm90
