// The CPU SDDMM: for every stored block b of a BSR pattern,
//   values[b] = alpha * (X Y)[rows and columns of block b] + beta * values[b]
// with X (M x T) and Y (T x K) dense host operands of the pattern's dtype. Operands arrive
// validated (src/api/sddmm.cpp). Two implementations:
//   sddmm_blocked    the fast path: X's rows and Y's columns as T-contiguous panels of the
//                    compute type (read in place where the operand already is one), each block
//                    a bh x bw tile of dot products over T in register tiles, the blocks split
//                    evenly over the pool. f32 accumulation for f32/f16/bf16, f64 for f64.
//   sddmm_reference  plain loops accumulating in f64 for every dtype: the oracle tests trust.
#pragma once

#include "../backend/operands.hpp"
#include "../common/thread_pool.hpp"
#include "../device/buffer.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>

namespace bsrmm::cpu {

// The operands as every backend sees them (src/backend/operands.hpp): the pattern's host
// structure, X, Y and values in host memory.
using SddmmArgs = backend::SddmmArgs;

constexpr const char* sddmm_blocked_variant = "cpu_sddmm_blocked";
constexpr const char* sddmm_reference_variant = "cpu_sddmm_reference_f64acc";

// `workspace` (host memory) holds the packed panels; grown as needed and kept.
void sddmm_blocked(const SddmmArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace);
void sddmm_reference(const SddmmArgs& args, detail::ThreadPool& pool);

}  // namespace bsrmm::cpu
