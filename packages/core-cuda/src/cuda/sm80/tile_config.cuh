// One sm80 tensor-op variant's compile-time shape: the math (f16, bf16, tf32, 3xtf32, f64), the CTA
// tile (BM rows of one block row x BN columns of C), the k chunk KC staged per pipeline step,
// the warp grid, the pipeline depth and B's layout; plus the shared-memory layout they imply.
//
// A CTA covers BM rows of one block row, so a variant takes every block shape with
// block_height % BM == 0 and block_width % KC == 0: BM = KC = 16 takes every rectangular block
// whose sides are multiples of 16, larger tiles take the larger blocks with more reuse.
#pragma once

#include "../kernel_parts/element.cuh"
#include "mma.cuh"
#include "tensorop_params.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm80 {

enum class Math { f16, bf16, tf32, tf32x3, f64 };

template <Math math>
struct MathTraits;

template <>
struct MathTraits<Math::f16> {
  using T = __half;
  using Mma = MmaF16;
  static constexpr int kMmaK = 16;
  static constexpr const char* kDtype = "f16";
  static constexpr const char* kOp = "mma16816";
};

template <>
struct MathTraits<Math::bf16> {
  using T = __nv_bfloat16;
  using Mma = MmaBf16;
  static constexpr int kMmaK = 16;
  static constexpr const char* kDtype = "bf16";
  static constexpr const char* kOp = "mma16816";
};

// f32 operands on tf32 tensor cores, one product per pair: opt-in (BSRMM_F32_TF32), ~1e-3.
template <>
struct MathTraits<Math::tf32> {
  using T = float;
  using Mma = MmaTf32;
  static constexpr int kMmaK = 8;
  static constexpr const char* kDtype = "tf32";
  static constexpr const char* kOp = "mma1688tf32";
};

// Exact f32 (BSRMM_F32_EXACT) on tf32 tensor cores: x = big + small with both parts tf32, and
// a*b ~ a_big*b_big + a_big*b_small + a_small*b_big. The dropped small*small term and the
// rounding of the small parts are ~2^-21 relative, below f32 accumulation noise at 1e-5; each
// k step's three products are added to the running sum outside the tensor cores, which round
// their sums towards zero (warp_mma.cuh).
template <>
struct MathTraits<Math::tf32x3> {
  using T = float;
  using Mma = MmaTf32;
  static constexpr int kMmaK = 8;
  static constexpr const char* kDtype = "f32";
  static constexpr const char* kOp = "mma1688tf32x3";
};

// f64 on the DMMA tensor cores (sm_80+): exact IEEE double products, f64 accumulators.
template <>
struct MathTraits<Math::f64> {
  using T = double;
  using Mma = MmaF64;
  static constexpr int kMmaK = 4;
  static constexpr const char* kDtype = "f64";
  static constexpr const char* kOp = "dmma884";
};

template <Math math_, int BM, int BN, int KC, int WarpsM, int WarpsN, int Stages, bool BColMajor>
struct TileConfig {
  static constexpr Math kMath = math_;
  using Traits = MathTraits<math_>;
  using T = typename Traits::T;
  using Acc = typename Element<T>::Acc;  // accumulators and epilogue: float, or double for f64
  using Params = TensorOpParams<Acc>;

  static constexpr int kBM = BM;
  static constexpr int kBN = BN;
  static constexpr int kKC = KC;
  static constexpr int kWarpsM = WarpsM;
  static constexpr int kWarpsN = WarpsN;
  static constexpr int kStages = Stages;
  static constexpr bool kBColMajor = BColMajor;

  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kWarpM = BM / WarpsM;  // rows of C per warp
  static constexpr int kWarpN = BN / WarpsN;  // columns of C per warp
  static constexpr int kMmaRows = kWarpM / 16;
  static constexpr int kMmaCols = kWarpN / 8;
  static constexpr int kVector = 16 / int(sizeof(T));  // elements per 16-byte access

  // Shared-memory row strides in elements. +16 bytes on k-contiguous rows (A, column-major B)
  // puts the 8 rows one ldmatrix (or one tf32 fragment load) touches in distinct banks. B
  // row-major rows are n-contiguous: +8 elements (16 bytes for 16-bit types: ldmatrix.trans
  // rows; 32 bytes for f32: the scalar loads stride k by 8 banks). f64 fragments are one
  // 8-byte element per lane, served a half-warp (4 rows x 4 k) at a time: rows 4 doubles past a
  // multiple of 16 (8 banks apart) put its 16 loads in 32 distinct banks, on every operand.
  static constexpr bool kF64 = math_ == Math::f64;
  static constexpr int kKPad = kF64 ? 4 : kVector;
  static constexpr int kAStride = KC + kKPad;
  static constexpr int kBStride = BColMajor ? KC + kKPad : BN + (kF64 ? 4 : 8);
  static constexpr int kAStageElements = BM * kAStride;
  static constexpr int kBStageElements = BColMajor ? BN * kBStride : KC * kBStride;
  static constexpr int kPipelineBytes = Stages * (kAStageElements + kBStageElements) * int(sizeof(T));
  // The epilogue stages the accumulator tile through the same shared memory; +8 elements per
  // row keeps the float2 (double2) fragment stores of a half-warp (quarter-warp) in distinct
  // banks.
  static constexpr int kCStride = BN + 8;
  static constexpr int kEpilogueBytes = BM * kCStride * int(sizeof(Acc));
  static constexpr int kSmemBytes = kPipelineBytes > kEpilogueBytes ? kPipelineBytes : kEpilogueBytes;

  static_assert(BM % (16 * WarpsM) == 0, "warp rows must be whole m16 tiles");
  static_assert(kWarpN % 16 == 0, "warp columns come in ldmatrix.x4 pairs of n8 tiles");
  static_assert(KC % Traits::kMmaK == 0 && KC % kVector == 0, "k chunk: whole mma k steps");
  static_assert(BN % kVector == 0 && BM % kVector == 0, "epilogue moves whole vectors");
  static_assert(Stages >= 2, "a pipeline needs two stages");
};

}  // namespace bsrmm::cuda::sm80
