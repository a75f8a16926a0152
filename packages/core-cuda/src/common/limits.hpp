// Limits of the whole core, checked at the C ABI and relied on below it.
#pragma once

#include <cstdint>

namespace bsrmm::detail {

// Largest block side. GPU kernels keep a block row's tile in shared memory and registers, and
// blocks past 256 gain nothing there; a larger block is better expressed as several blocks.
// The CPU kernel sizes its per-block-row accumulator panel by it.
constexpr int32_t max_block_side = 256;

}  // namespace bsrmm::detail
