// Warpgroup-level controls: register reallocation between the producer and consumer roles,
// named barriers that synchronise one warpgroup without stopping the others, and stmatrix.
#pragma once

#include "smem.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

// setmaxnreg only takes effect when the kernel has a register cap at entry
// (__launch_bounds__(threads, 1)) and each role is one branch of a single if/else.
template <int Registers>
__device__ inline void warpgroup_release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

template <int Registers>
__device__ inline void warpgroup_claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

// Barrier `id` (1..15; 0 is __syncthreads) over `threads` threads.
__device__ inline void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Arrive on barrier `id` without waiting: lets the threads that bar.sync on it go on.
__device__ inline void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Four 8x8 16-bit tiles, each thread holding (row lane/4, columns 2*(lane%4), +1) of tile i in
// fragments[i] (the accumulator layout of mma / wgmma); thread t names the smem address of row
// t%8 of tile t/8 (16 bytes).
__device__ inline void stmatrix_x4(void* row_address, uint32_t f0, uint32_t f1, uint32_t f2,
                                   uint32_t f3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   smem_address(row_address)),
               "r"(f0), "r"(f1), "r"(f2), "r"(f3)
               : "memory");
}

// Four 8x8 16-bit tiles, each thread holding (row lane/4, columns 2*(lane%4), +1) of tile i in
// fragments[i]; stored transposed: thread t names the smem row that receives column t%8 of tile t/8.
__device__ inline void stmatrix_x4_trans(void* row_address, uint32_t f0, uint32_t f1, uint32_t f2,
                                         uint32_t f3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   smem_address(row_address)),
               "r"(f0), "r"(f1), "r"(f2), "r"(f3)
               : "memory");
}

}  // namespace bsrmm::cuda::sm90
