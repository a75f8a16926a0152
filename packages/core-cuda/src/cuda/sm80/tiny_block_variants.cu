// The tiny-block tensor-core variants (tiny_block_kernel.cuh), one per 16-bit dtype:
// `sm80_{f16,bf16}_tinyblock_mma16816`, for blocks at most 16 high and 64 wide with a side under
// 16 (the tile kernels take sides that are multiples of 16), B row-major in 16-byte aligned rows
// (cp.async copies 16 bytes), any layout of C. The tokens a warp covers follow N. The registry
// lists them in the narrow family (tiny blocks), where their preference places them.
#include "../kernel_parts/simt_operands.cuh"
#include "../narrow/heuristic.hpp"
#include "../runtime/cuda_check.hpp"
#include "tiny_block_kernel.cuh"
#include "variant_lists.hpp"

#include <climits>
#include <cstdint>
#include <string>

namespace bsrmm::cuda::sm80 {
namespace {

int width_shift(int32_t block_width) {
  int shift = 0;
  while ((1 << shift) < block_width) ++shift;
  return shift;
}

// Why the kernel refuses these arguments ("" where it takes them).
template <typename T>
std::string tiny_block_refusal(const MatmulArgs& args, const DeviceTraits& device) {
  if (!simt_supports<T>(args, device)) return "operands of another dtype or misaligned";
  const BsrView& a = args.a;
  if (a.block_height % 16 == 0 && a.block_width % 16 == 0)
    return "blocks whose sides are multiples of 16 (the tile kernels' shapes)";
  if (a.block_height > kTinyMaxHeight || a.block_width > kTinyMaxWidth)
    return "blocks over " + std::to_string(kTinyMaxHeight) + " high or " + std::to_string(kTinyMaxWidth) + " wide";
  if (args.b.layout != BSRMM_LAYOUT_ROW_MAJOR || !aligned_to(args.b.data, 16) ||
      (std::size_t(args.b.ld) * sizeof(T)) % 16 != 0)
    return "B not row-major in 16-byte aligned rows";
  return "";
}

template <typename T>
bool tiny_block_supports(const MatmulArgs& args, const DeviceTraits& device) {
  return tiny_block_refusal<T>(args, device).empty();
}

template <typename T, typename Mma, int MTiles, int NTiles>
void tiny_block_launch_with(const TinyBlockParams<T>& p, int64_t ctas, cudaStream_t stream) {
  tiny_block_kernel<T, Mma, MTiles, NTiles><<<unsigned(ctas), kTinyWarps * 32, 0, stream>>>(p);
  check_launch("tiny_block_kernel");
}

template <typename T, typename Mma, int NTiles>
void tiny_block_launch_tokens(TinyBlockParams<T>& p, int64_t n, int64_t block_rows, cudaStream_t stream) {
  // Tokens per warp: 64 where N fills them, fewer below so no warp multiplies mostly padding.
  const int m_tiles = n > 32 ? 4 : n > 16 ? 2 : 1;
  p.token_tiles = int32_t((n + 16 * m_tiles - 1) / (16 * m_tiles));
  const int64_t ctas = (block_rows * p.token_tiles + kTinyWarps - 1) / kTinyWarps;
  if (ctas > INT32_MAX)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "tiny-block CUDA kernel: ", ctas, " CTAs exceed the 2^31-1 grid limit");
  switch (m_tiles) {
    case 1: return tiny_block_launch_with<T, Mma, 1, NTiles>(p, ctas, stream);
    case 2: return tiny_block_launch_with<T, Mma, 2, NTiles>(p, ctas, stream);
    default: return tiny_block_launch_with<T, Mma, 4, NTiles>(p, ctas, stream);
  }
}

template <typename T, typename Mma>
void tiny_block_launch(const MatmulArgs& args, const DeviceTraits&) {
  if (args.c.rows == 0 || args.c.cols == 0 || args.a.block_row_count == 0) return;
  TinyBlockParams<T> p{};
  fill_operands<T>(p, args);
  p.width_shift = width_shift(args.a.block_width);
  const auto stream = static_cast<cudaStream_t>(args.stream);
  if (args.a.block_height <= 8) return tiny_block_launch_tokens<T, Mma, 1>(p, args.c.cols, args.a.block_row_count, stream);
  return tiny_block_launch_tokens<T, Mma, 2>(p, args.c.cols, args.a.block_row_count, stream);
}

// The registry ranks these variants with the narrow family (blocks under 16 a side go there).
// Measured on the H100 (docs/perf-log.md entry 74): from N = 16 with blocks at least 4 high the
// mma kernel beats every narrow kernel (8x8 bf16 N = 256 22.9 against 45.5 us, 4x4 N = 16 67
// against 143, 6x6 N = 128 92 against 228); with 1-3 rows most of the mma's 8 rows are padding
// and lanes along N win (1x1 N = 1024 340 against 214 us; 3x3 N = 256 203 against 179), and
// below 16 columns most of its 16 tokens are. There it stays a candidate the tuner times.
int tiny_block_preference(const MatmulArgs& args, const DeviceTraits&) {
  return narrow::tiny_block_mma_preferred(args.a.block_height, args.c.cols, narrow::facts_of(args).skewed) ? 102 : 2;
}

template <typename T, typename Mma>
Variant tiny_block_variant(const char* name) {
  Variant v{name, &tiny_block_supports<T>, &tiny_block_launch<T, Mma>, &tiny_block_preference};
  v.refusal = &tiny_block_refusal<T>;
  return v;
}

}  // namespace
}  // namespace bsrmm::cuda::sm80

namespace bsrmm::cuda {

std::vector<Variant> tiny_block_variants() {
  using sm80::tiny_block_variant;
  return {tiny_block_variant<__half, sm80::MmaF16>("sm80_f16_tinyblock_mma16816"),
          tiny_block_variant<__nv_bfloat16, sm80::MmaBf16>("sm80_bf16_tinyblock_mma16816")};
}

}  // namespace bsrmm::cuda
