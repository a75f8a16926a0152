// The data-movement floor of the sm90 row tiles (blocks 64 and 128): a kernel that issues the
// very TMA traffic row_tile_kernel does on PERF.md's grid problem, and nothing else. Per tile (one
// block row x 256 columns, N-tile-major round robin over a persistent grid) the producer thread
// loads every 64-deep stage (the A slice of one block, BH x 64, and the four 64 x 64 chunks of B
// under it) into the same ring of full / empty mbarriers; a consumer thread only waits for each
// stage and frees it (no wgmma), and optionally stores the tile's C through TMA as the epilogue
// does (from a staging chunk it never writes: the bytes, not their values, are what costs).
// Pair / quad: the `_c2` / `_c4` flows, two or four CTAs of a cluster on neighbouring N tiles of
// one block row, each loading its share of every A slice and multicasting it into all of them
// (so A crosses L2 once per cluster).
//
// Its time is what L2 -> shared memory (and C's stores) alone take: row_tile_kernel at the same
// time is bound by data movement, and no scheduling of its math can make it faster without
// moving fewer bytes. The pattern is the grid's: uniform, the same block count per block row.
//
//   nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ipackages/core-cuda/include \
//        -Ipackages/core-cuda/src packages/bench/experiments/row_tile_roof.cu packages/core-cuda/src/cuda/sm90/tensor_map.cu \
//        -o roof && ./roof [held]
//
// "held": rings of 2, 3 and 4 stages at d 0.125 and 0.5, to tell latency from bandwidth (the row
// tiles keep two stages per consumer busy, so fewer are loading than the ring holds).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/sm90/cluster.cuh"
#include "cuda/sm90/mbarrier.cuh"
#include "cuda/sm90/smem.cuh"
#include "cuda/sm90/tensor_map.hpp"
#include "cuda/sm90/tma.cuh"
#include "../../core-cuda/tests/support/exit_on_failure.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace bsrmm::cuda::sm90;

namespace {

constexpr int kM = 8192, kK = 8192, kN = 4096, kTileN = 256;

struct RoofParams {
  CUtensorMap a_map, b_map, c_map;
  const int* row_ptr;
  const int* col_idx;
  int block_rows, tiles, stages;
  int band;  // work items (N tiles or clusters of them) a block row runs before the next row
  bool store_c;
};

template <int BlockH, int Cluster>
__global__ void __launch_bounds__(64, 1) roof_kernel(const __grid_constant__ RoofParams p) {
  constexpr int kABytes = BlockH * 128, kChunk = 64 * 128, kStageBytes = kABytes + (kTileN / 64) * kChunk;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint8_t* staging = smem + p.stages * kStageBytes;  // one 64 x 64 chunk, read by every store
  uint64_t* full = reinterpret_cast<uint64_t*>(staging + kChunk);
  uint64_t* empty = full + p.stages;
  const uint32_t rank = Cluster > 1 ? cluster_cta_rank() : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < p.stages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], Cluster);  // each consumer of the cluster frees every CTA's stage
    }
    mbarrier_init_fence();
  }
  if constexpr (Cluster > 1) cluster_sync();
  else __syncthreads();
  const bool producer = threadIdx.x == 0;
  if (threadIdx.x % 32 == 0) {
    int stage = 0;
    uint32_t phase = 0;
    // With a cluster, a work item is (block row, Cluster N tiles), walked by all its CTAs.
    const int items = p.tiles / Cluster, worker = blockIdx.x / Cluster, workers = gridDim.x / Cluster;
    for (int item = worker; item < items; item += workers) {
      // Bands of p.band items: every row runs the band's items before the next row starts
      // (1: N-tile-major, the row tiles' own order).
      const int band = item / (p.band * p.block_rows), in_band = item % (p.band * p.block_rows);
      const int row = in_band / p.band, n_item = band * p.band + in_band % p.band;
      const int n_tile = n_item * Cluster + int(rank);
      for (int q = p.row_ptr[row]; q < p.row_ptr[row + 1]; ++q) {
        for (int s = 0; s < BlockH / 64; ++s) {
          if (producer) {
            mbarrier_wait(&empty[stage], phase ^ 1);
            uint8_t* at = smem + stage * kStageBytes;
            mbarrier_arrive_expect_tx(&full[stage], kStageBytes);
            if constexpr (Cluster > 1) {
              constexpr int kShare = BlockH / Cluster;
              tma_load_2d_multicast(at + rank * kShare * 128, &p.a_map, s * 64, q * BlockH + int(rank) * kShare,
                                    &full[stage], uint16_t((1u << Cluster) - 1));
            } else {
              tma_load_2d(at, &p.a_map, s * 64, q * BlockH, &full[stage]);
            }
            const int k = p.col_idx[q] * BlockH + s * 64;
            for (int j = 0; j < kTileN / 64; ++j)
              tma_load_2d(at + kABytes + j * kChunk, &p.b_map, n_tile * kTileN + 64 * j, k, &full[stage]);
          } else {
            mbarrier_wait(&full[stage], phase);
            mbarrier_arrive(&empty[stage]);
            for (uint32_t peer = 1; peer < Cluster; ++peer) mbarrier_arrive_cluster(&empty[stage], rank ^ peer);
          }
          if (++stage == p.stages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
      if (!producer && p.store_c) {
        for (int r = 0; r < BlockH; r += 64)
          for (int j = 0; j < kTileN / 64; ++j)
            tma_store_2d(&p.c_map, staging, n_tile * kTileN + 64 * j, row * BlockH + r);
        bulk_commit();
        bulk_wait_read<2>();  // at most a few tiles' stores in flight, as the epilogue's staging allows
      }
    }
    if (!producer) bulk_wait<0>();
  }
  __syncwarp();
  // The peer may still multicast into our stages or arrive on our barriers until it is done.
  if constexpr (Cluster > 1) cluster_sync();
}

template <int BlockH, int Cluster = 1>
void measure(double density, int stages, bool store_c, int sm_count, int band = 1) {
  const int block_rows = kM / BlockH, block_cols = kK / BlockH;
  const int per_row = std::max(1, int(density * block_cols + 0.5));
  std::mt19937 random(1);
  std::vector<int> row_ptr(block_rows + 1, 0), col_idx, columns(block_cols);
  for (int r = 0; r < block_rows; ++r) {
    std::iota(columns.begin(), columns.end(), 0);
    std::shuffle(columns.begin(), columns.end(), random);
    std::sort(columns.begin(), columns.begin() + per_row);
    col_idx.insert(col_idx.end(), columns.begin(), columns.begin() + per_row);
    row_ptr[r + 1] = int(col_idx.size());
  }
  const int nnzb = int(col_idx.size());
  std::vector<__half> host(std::max<size_t>(size_t(nnzb) * BlockH * BlockH, size_t(kK) * kN));
  for (size_t i = 0; i < host.size(); ++i) host[i] = __float2half(float(int(random() % 17) - 8) / 8.0f);
  __half *a, *b, *c;
  int *d_row_ptr, *d_col_idx;
  CHECK_CUDA(cudaMalloc(&a, size_t(nnzb) * BlockH * BlockH * 2));
  CHECK_CUDA(cudaMalloc(&b, size_t(kK) * kN * 2));
  CHECK_CUDA(cudaMalloc(&c, size_t(kM) * kN * 2));
  CHECK_CUDA(cudaMalloc(&d_row_ptr, row_ptr.size() * 4));
  CHECK_CUDA(cudaMalloc(&d_col_idx, col_idx.size() * 4));
  CHECK_CUDA(cudaMemcpy(a, host.data(), size_t(nnzb) * BlockH * BlockH * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, host.data(), size_t(kK) * kN * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_row_ptr, row_ptr.data(), row_ptr.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_col_idx, col_idx.data(), col_idx.size() * 4, cudaMemcpyHostToDevice));

  RoofParams p{};
  p.a_map = make_tensor_map_2d({a, uint64_t(BlockH), uint64_t(nnzb) * BlockH, uint64_t(BlockH) * 2, 2}, 64,
                               BlockH / Cluster, TmaSwizzle::b128);
  p.b_map = make_tensor_map_2d({b, uint64_t(kN), uint64_t(kK), uint64_t(kN) * 2, 2}, 64, 64, TmaSwizzle::b128);
  p.c_map = make_tensor_map_2d({c, uint64_t(kN), uint64_t(kM), uint64_t(kN) * 2, 2}, 64, 64, TmaSwizzle::b128);
  p.row_ptr = d_row_ptr;
  p.col_idx = d_col_idx;
  p.block_rows = block_rows;
  p.tiles = block_rows * (kN / kTileN);
  p.stages = stages;
  p.band = band;
  p.store_c = store_c;
  const int stage_bytes = BlockH * 128 + (kTileN / 64) * 64 * 128;
  const int smem = 1024 + stages * stage_bytes + 64 * 128 + 16 * stages;
  const auto kernel = roof_kernel<BlockH, Cluster>;
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  config.blockDim = dim3(64);
  config.dynamicSmemBytes = size_t(smem);
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim = {unsigned(Cluster), 1, 1};
  config.attrs = &attribute;
  config.numAttrs = 1;
  // As many clusters as fit at once (a GPC's SMs need not divide by 4), as row_tile_kernel launches.
  config.gridDim = dim3(unsigned(Cluster));
  int clusters = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
  const int grid = std::min(std::min(sm_count, p.tiles) / Cluster, clusters) * Cluster;
  config.gridDim = dim3(unsigned(grid));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int run = 0; run < 12; ++run) {
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_CUDA(cudaLaunchKernelEx(&config, kernel, p));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (run >= 2) times.push_back(ms);
  }
  CHECK_CUDA(cudaGetLastError());
  std::sort(times.begin(), times.end());
  const double ms = times[times.size() / 2];
  // A's bytes cross L2 once per cluster of N tiles.
  const double read_bytes =
      double(nnzb) * (BlockH / 64) * (kN / kTileN) * (stage_bytes - BlockH * 128 * (Cluster - 1) / Cluster);
  const double flops = 2.0 * nnzb * BlockH * BlockH * kN;
  std::printf("b%-3d%s d%-5.3f stages %d  C stores %-3s  band %d  %.4f ms  L2 reads %5.2f TB/s  as TFLOPS %6.1f"
              "  (%d CTAs)\n",
              BlockH, Cluster == 4 ? " quad" : Cluster == 2 ? " pair" : "     ", density, stages,
              store_c ? "yes" : "no", band, ms, read_bytes / ms / 1e9, flops / ms / 1e9, grid);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
  CHECK_CUDA(cudaFree(d_row_ptr));
  CHECK_CUDA(cudaFree(d_col_idx));
}

}  // namespace

int main(int argc, char** argv) {
  int sm_count = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  if (argc > 1 && std::string(argv[1]) == "band") {  // walk orders: bands of 1, 2, 4, 8 items
    for (double density : {0.125, 0.25, 0.5})
      for (int band : {1, 2, 4, 8}) {
        measure<128, 2>(density, 4, true, sm_count, band);
        measure<64>(density, 4, true, sm_count, band);
      }
    return 0;
  }
  if (argc > 1) {  // "held": fewer stages in flight, as when consumers hold two stages each
    for (double density : {0.125, 0.5})
      for (int stages : {2, 3, 4}) {
        measure<64>(density, stages, true, sm_count);
        measure<128>(density, stages, true, sm_count);
      }
    return 0;
  }
  for (double density : {0.05, 0.125, 0.25, 0.5}) {
    // The row tiles' own rings: 4 stages (their epilogue staging takes the rest of shared
    // memory); block 64 also with a fifth, which its stages would fit without staging.
    for (bool store_c : {false, true}) measure<64>(density, 4, store_c, sm_count);
    measure<64>(density, 5, true, sm_count);
    for (bool store_c : {false, true}) measure<128>(density, 4, store_c, sm_count);
    measure<128, 2>(density, 4, true, sm_count);  // the _c2 flow: A shared by multicast
    measure<128, 4>(density, 4, true, sm_count);  // the _c4 flow
  }
  return 0;
}
