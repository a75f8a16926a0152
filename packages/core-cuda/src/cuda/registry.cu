// The CUDA variant registry: every compiled variant (narrow with the tiny-block mma kernels,
// sm90, the column tail, sm80, fp8 widened, generic, dense fallback), and matmul(), which runs the forced variant or the heuristic's pick. The pick prefers
// the sparse family that supports the arguments by rank (narrow where it applies, then sm90 >
// sm80 > fp8 widened > generic), then each family's own preference; the dense fallback goes before them, after them or nowhere by A's density
// (dense_fallback/heuristic.hpp). supporting_variants() lists every eligible variant in that
// order, for the tuner.
#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "cuda_backend.hpp"
#include "column_tail/column_tail.hpp"
#include "dense_fallback/heuristic.hpp"
#include "narrow/heuristic.hpp"
#include "runtime/device_guard.hpp"
#include "runtime/device_traits.hpp"
#include "variant.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

namespace bsrmm::cuda {
namespace {

constexpr int kNarrowFirst = 8;

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> all = [] {
    const std::pair<Family, std::vector<Variant> (*)()> families[] = {
        {Family::narrow, &narrow_variants},   {Family::narrow, &tiny_block_variants},
        {Family::sm90, &sm90_variants},       {Family::column_tail, &column_tail_variants},
        {Family::sm80, &sm80_variants},       {Family::aligned_staging, &aligned_staging_variants},
        {Family::fp8_widened, &fp8_widened_variants},
        {Family::generic, &generic_variants}, {Family::dense_fallback, &dense_fallback_variants},
    };
    std::vector<Variant> list;
    for (const auto& [family, variants] : families) {
      for (Variant& variant : variants()) {
        variant.family = family;
        list.push_back(std::move(variant));
      }
    }
    return list;
  }();
  return all;
}

// Sparse families by rank: sm90 > sm80 > fp8 widened > generic. The narrow kernels rank first
// where they move the fewest bytes (small N) or where only the generic kernel would take the
// blocks, and just above generic otherwise (narrow/heuristic.hpp). fp8 widened onto the bf16 /
// f32 tensor-core kernels goes after the Hopper fp8 row tiles (fp8 wgmma reads half the bytes)
// and before the SIMT kernels.
int family_rank(const Variant& variant, const MatmulArgs& args) {
  switch (variant.family) {
    case Family::narrow:
      return narrow::preferred(narrow::facts_of(args)) ? kNarrowFirst : 1;
    case Family::sm90: return 6;
    // sm90 on all but N's last few columns, whose second read of A pays from ~1000 columns on
    // (column_tail.cu), or where torch's layout leaves one; elsewhere it ranks under sm80 and
    // the tuner still times it.
    case Family::column_tail:
      return args.c.cols >= column_tail::kFirstFrom ||
                     column_tail::first_for_one_column_of_torchs_layout(
                         args.c.cols, args.b.layout == BSRMM_LAYOUT_COL_MAJOR,
                         args.c.layout == BSRMM_LAYOUT_COL_MAJOR)
                 ? 6
                 : 3;
    // B / C copied for a tensor-core kernel (unaligned, or N padded to 8 for a row tile): above
    // the kernels that read them in place, under narrow where narrow applies. A column-major B
    // (torch's x^T) only below N = 256: there the staged call ran 1.1-1.4x faster than sm80's
    // column-major kernels on the H100 (perf-log 103; one cell of twelve 1.19x slower), from
    // 256 on it was level with them, ahead or behind by up to 1.2x depending on the shape.
    case Family::aligned_staging:
      return args.b.layout == BSRMM_LAYOUT_ROW_MAJOR || args.c.cols < 256 ? 5 : 3;
    case Family::sm80: return 4;
    case Family::fp8_widened: return 2;
    default: return 0;
  }
}

bool is_dense_fallback(const Variant& variant) { return variant.family == Family::dense_fallback; }

// Variants that allocate scratch as large as an operand: where the device has no memory left
// for it, the next choice runs instead.
bool needs_scratch(const Variant& variant) {
  return variant.family == Family::dense_fallback || variant.family == Family::aligned_staging;
}

dense_fallback::Placement dense_placement(const MatmulArgs& args, int best_sparse_rank) {
  const BsrView& a = args.a;
  const double blocks = double(a.block_row_count) * double(a.block_col_count);
  const double density = blocks > 0 ? double(a.nnzb) / blocks : 0.0;
  // At small N the narrow kernels read only the stored blocks at memory speed, where a dense
  // product reads all of A: the dense GEMM can win only when most blocks are stored, so the
  // tuner times it from there on (the fitted break-evens below are for N in the thousands).
  if (best_sparse_rank == kNarrowFirst && args.c.cols <= narrow::kMaxCols)
    return density >= 0.3 ? dense_fallback::Placement::last : dense_fallback::Placement::skip;
  // Past that, blocks under 16 a side still run on the narrow kernels, at a few TFLOPS: a dense
  // GEMM can win from ~1% (f16 / bf16) to ~10% (f32 exact), so the tuner times it from there;
  // on skewed rows and the smallest blocks it is the default from a multiple of that.
  if (a.block_height < 16 || a.block_width < 16)
    return dense_fallback::tiny_block_placement(density, a.dtype, args.f32_mode == BSRMM_F32_TF32,
                                                args.c.cols, narrow::facts_of(args).skewed,
                                                int64_t{a.block_height} * a.block_width);
  const auto family = best_sparse_rank == 6   ? dense_fallback::SparseFamily::sm90
                      : best_sparse_rank == 4 ? dense_fallback::SparseFamily::sm80
                                              : dense_fallback::SparseFamily::generic;
  return dense_fallback::placement(density, a.dtype, a.block_height, a.block_width, family);
}

// The facts a variant's supports() looks at, for an UNSUPPORTED message a user can act on.
std::string describe(const MatmulArgs& args, const DeviceTraits& device) {
  std::ostringstream text;
  text << "A " << detail::name(args.a.dtype) << " blocks " << args.a.block_height << "x"
       << args.a.block_width << ", B " << detail::name(args.b.dtype) << " "
       << detail::name(args.b.layout) << " ld " << args.b.ld << ", C " << detail::name(args.c.dtype)
       << " " << detail::name(args.c.layout) << " ld " << args.c.ld << ", N " << args.c.cols
       << ", f32 mode " << (args.f32_mode == BSRMM_F32_TF32 ? "tf32" : "exact")
       << ", device " << args.device << " (compute capability " << device.cc_major << "."
       << device.cc_minor << ")";
  return text.str();
}

// Every variant that supports the arguments, best first: newest family, then preference, then
// registry order, with the dense fallback first, last or left out by A's density (the
// heuristic's pick is the front; the tuner measures them all).
std::vector<const Variant*> ranked_supporting(const MatmulArgs& args, const DeviceTraits& device) {
  struct Ranked {
    const Variant* variant;
    int rank;
    int preference;
  };
  std::vector<Ranked> ranked;
  std::vector<const Variant*> dense;
  for (const Variant& candidate : all_variants()) {
    if (is_dense_fallback(candidate)) {
      dense.push_back(&candidate);
      continue;
    }
    if (!candidate.supports(args, device)) continue;
    ranked.push_back({&candidate, family_rank(candidate, args), candidate.preference(args, device)});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
    return x.rank != y.rank ? x.rank > y.rank : x.preference > y.preference;
  });
  std::vector<const Variant*> variants;
  for (const Ranked& entry : ranked) variants.push_back(entry.variant);
  const int best_sparse_rank = ranked.empty() ? 0 : ranked.front().rank;
  // Placed before asking supports(): a problem far too sparse for it never loads cuBLASLt.
  const dense_fallback::Placement placement = dense_placement(args, best_sparse_rank);
  for (const Variant* variant : dense) {
    if (placement == dense_fallback::Placement::skip || !variant->supports(args, device)) continue;
    if (placement == dense_fallback::Placement::first) {
      variants.insert(variants.begin(), variant);
    } else {
      variants.push_back(variant);
    }
  }
  return variants;
}

}  // namespace

const Variant* heuristic_pick(const MatmulArgs& args, const DeviceTraits& device) {
  const std::vector<const Variant*> ranked = ranked_supporting(args, device);
  return ranked.empty() ? nullptr : ranked.front();
}

bool supported_by_family(Family family, const MatmulArgs& args, const DeviceTraits& device) {
  for (const Variant& candidate : all_variants())
    if (candidate.family == family && candidate.supports(args, device)) return true;
  return false;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const Variant& variant : all_variants()) names.push_back(variant.name);
  return names;
}

std::string matmul(const MatmulArgs& args, const std::string& variant) {
  DeviceGuard guard(args.device);
  const DeviceTraits device = within_sm_budget(device_traits(args.device), args.sm_budget);

  if (!variant.empty()) {
    for (const Variant& candidate : all_variants()) {
      if (candidate.name != variant) continue;
      if (!candidate.supports(args, device)) {
        const std::string why = candidate.refusal ? candidate.refusal(args, device) : "";
        detail::fail(BSRMM_STATUS_UNSUPPORTED, "variant '", variant,
                     "' does not support these arguments: ", describe(args, device),
                     why.empty() ? "" : ": ", why);
      }
      candidate.launch(args, device);
      return candidate.name;
    }
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "variant '", variant,
                 "' is not a CUDA variant of this build (bsrmm_variant_name lists them)");
  }

  const std::vector<const Variant*> ranked = ranked_supporting(args, device);
  if (ranked.empty())
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "no CUDA kernel supports these arguments: ",
                 describe(args, device),
                 device.cc_major < 8 ? "; bsrmm's CUDA kernels need compute capability 8.0+" : "");
  // The dense fallback needs memory for its copy of A and its scratch, the aligned staging for
  // copies of B and C; where the device has none left, the next choice runs instead. Both fail
  // before writing C.
  for (std::size_t i = 0;; ++i) {
    try {
      ranked[i]->launch(args, device);
      return ranked[i]->name;
    } catch (const detail::Error& error) {
      if (error.status() != BSRMM_STATUS_OUT_OF_MEMORY || !needs_scratch(*ranked[i]) || i + 1 == ranked.size())
        throw;
    }
  }
}

std::vector<std::string> supporting_variants(const MatmulArgs& args) {
  DeviceGuard guard(args.device);
  std::vector<std::string> names;
  const DeviceTraits device = within_sm_budget(device_traits(args.device), args.sm_budget);
  for (const Variant* variant : ranked_supporting(args, device)) names.push_back(variant->name);
  return names;
}

}  // namespace bsrmm::cuda
