// A CUDA kernel variant: a name that says what it is (CUTLASS-style: arch, dtype, block shape,
// pipeline), the arguments it accepts, and how to launch it. Arch families contribute their
// lists (generic, sm80, sm90); the registry in src/cuda concatenates them and the heuristic /
// tuner choose among the eligible ones.
#pragma once

#include "cuda_backend.hpp"

#include <string>
#include <vector>

namespace bsrmm::cuda {

struct DeviceTraits {
  int cc_major;
  int cc_minor;
  int sm_count;
  int max_smem_per_block_optin;  // bytes
};

// The list a variant comes from; the registry ranks and places variants by it.
enum class Family { narrow, sm90, sm80, generic, dense_fallback, fp8_widened, column_tail, aligned_staging };

struct Variant {
  std::string name;
  // True when the variant can compute these arguments correctly on this device.
  bool (*supports)(const MatmulArgs& args, const DeviceTraits& device);
  // Enqueues the multiply on args.stream; throws bsrmm::detail::Error on a launch failure.
  void (*launch)(const MatmulArgs& args, const DeviceTraits& device);
  // Larger is preferred by the untuned heuristic among supporting variants.
  int (*preference)(const MatmulArgs& args, const DeviceTraits& device);
  // Optional: why supports() refuses these arguments, for the UNSUPPORTED message of a forced
  // variant ("" when it does not refuse).
  std::string (*refusal)(const MatmulArgs& args, const DeviceTraits& device) = nullptr;
  // Set by the registry from the list the variant is in.
  Family family = Family::generic;
};

std::vector<Variant> generic_variants();  // src/cuda/generic/: any dtype, block shape, layout
std::vector<Variant> sm80_variants();     // src/cuda/sm80/: mma.sync + cp.async pipelines
std::vector<Variant> sm90_variants();     // src/cuda/sm90/: TMA + wgmma, sm_90a only
std::vector<Variant> narrow_variants();   // src/cuda/narrow/: memory-bound small N and tiny blocks, any dtype
std::vector<Variant> tiny_block_variants();  // src/cuda/sm80/tiny_block_variants.cu: tiny blocks on mma.sync, ranked with narrow
std::vector<Variant> dense_fallback_variants();  // src/cuda/dense_fallback/: cuBLASLt on a dense copy of A
std::vector<Variant> fp8_widened_variants();     // src/cuda/fp8_widened/: fp8 widened onto the bf16 / f32 kernels
std::vector<Variant> column_tail_variants();     // src/cuda/column_tail/: sm90 on N's multiple of 8, the rest apart
std::vector<Variant> aligned_staging_variants();  // src/cuda/aligned_staging/: unaligned B / C copied to aligned scratch

// The variant the untuned heuristic would run for these arguments (registry.cu), or null when
// none supports them; nothing is launched. For a variant that hands its problem on to another.
const Variant* heuristic_pick(const MatmulArgs& args, const DeviceTraits& device);

// Whether some variant of `family` supports these arguments (nothing is launched).
bool supported_by_family(Family family, const MatmulArgs& args, const DeviceTraits& device);

}  // namespace bsrmm::cuda
