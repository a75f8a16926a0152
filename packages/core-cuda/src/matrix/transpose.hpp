// A^T of a BSR matrix: its structure (planned once per structure, shared by every matrix made
// with with_values) and its values (each of A's blocks transposed, in A^T's block order).
// Block (r, c) of A is block (c, r) of A^T. A validated structure is sorted and unique within
// each block row, so A^T's order is the one canonical order, whoever computes it.
#pragma once

#include "../device/buffer.hpp"
#include "bsr_matrix.hpp"
#include "bsr_structure.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace bsrmm::matrix {

struct TransposedStructure {
  // A^T's structure, its device mirrors and plan parts: every A^T built from this (one per
  // with_values copy of A, as a training step makes) shares them, so a step's A^T costs its
  // values' copy, not an upload, a schedule and work lists of its own.
  std::shared_ptr<SharedStructure> shared;
  std::vector<int32_t> source_block;  // block t of A^T is the transpose of A's block source_block[t]
  detail::Buffer device_source_block;  // source_block on a CUDA matrix's device

  const BsrStructure& structure() const { return shared->structure; }
};

// A counting sort of A's blocks by block column; on a CUDA `device` A^T's indices and
// source_block are uploaded too (ordered on `stream`, waited for: the plan caches it for any
// stream).
TransposedStructure transpose_structure(const BsrStructure& a, bsrmm_device device, void* stream);

// Writes A^T's values (value_bytes() of `a`, on a.device()) to `out`, ordered on `stream` with no
// wait and no allocation. `t` is transpose_structure of a's structure.
void write_transposed_values(const BsrMatrix& a, const TransposedStructure& t, void* out, void* stream);

// A^T as a matrix of its own on a.device() (fp8 scales follow their blocks).
std::unique_ptr<BsrMatrix> build_transposed(const BsrMatrix& a, const TransposedStructure& t,
                                            void* stream);

}  // namespace bsrmm::matrix
