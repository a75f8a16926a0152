// The dense fallback variants, one per dtype (and f32 mode): op(A) * B as one cuBLASLt GEMM on
// the plan's dense copy of op(A). Two paths:
//  - direct (beta 0, no bias, no activation, alpha != 0): cuBLASLt writes C itself;
//  - staged (anything else): cuBLASLt writes the bare products into stream-ordered scratch in
//    the accumulator type and bsrmm's own epilogue writes C (staged_epilogue.hpp).
// Where A has structural zeros, the columns whose product is non-finite in its first row (those
// of B that hold NaN or Inf among them) are found after the GEMM and recomputed over the stored
// blocks (nonfinite_columns.hpp), so results follow the sparse semantics exactly as every other
// variant's do.
#include "../../common/dtype.hpp"
#include "../runtime/cuda_check.hpp"
#include "../variant.hpp"
#include "cublaslt_gemm.hpp"
#include "cublaslt_library.hpp"
#include "nonfinite_columns.hpp"
#include "staged_epilogue.hpp"
#include "stream_scratch.hpp"

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

namespace bsrmm::cuda {
namespace dense_fallback {
namespace {

struct Kind {
  const char* name;
  bsrmm_dtype dtype;
  bool tf32;                // f32 only: runs in the context's TF32 mode (else EXACT)
  cudaDataType_t data;      // A, B and C
  cudaDataType_t acc;       // the staging buffer, alpha and beta
  std::size_t acc_bytes;
  lt::ComputeType compute;
};

// Names say what runs: family, library, dtype (CUTLASS-style, like the other families).
constexpr Kind kKinds[] = {
    {"dense_cublaslt_f16", BSRMM_DTYPE_F16, false, CUDA_R_16F, CUDA_R_32F, 4, lt::kCompute32F},
    {"dense_cublaslt_bf16", BSRMM_DTYPE_BF16, false, CUDA_R_16BF, CUDA_R_32F, 4, lt::kCompute32F},
    {"dense_cublaslt_tf32", BSRMM_DTYPE_F32, true, CUDA_R_32F, CUDA_R_32F, 4, lt::kCompute32FFastTF32},
    {"dense_cublaslt_f32", BSRMM_DTYPE_F32, false, CUDA_R_32F, CUDA_R_32F, 4, lt::kCompute32F},
    {"dense_cublaslt_f64", BSRMM_DTYPE_F64, false, CUDA_R_64F, CUDA_R_64F, 8, lt::kCompute64F},
};

bool aligned(const void* pointer, std::size_t bytes) {
  return reinterpret_cast<uintptr_t>(pointer) % bytes == 0;
}

std::size_t device_memory_bytes(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::size_t> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = known.find(ordinal);
  if (found != known.end()) return found->second;
  std::size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return known.emplace(ordinal, total_bytes).first->second;
}

// Why this kind cannot take the arguments ("" when it can). Cheap checks first: loading
// cuBLASLt is the last, and happens once per process.
std::string refusal(const Kind& kind, const MatmulArgs& args, const DeviceTraits& device) {
  std::ostringstream why;
  const int64_t m = args.c.rows, n = args.c.cols, k = args.b.rows;
  const std::size_t element = detail::element_size(kind.dtype);
  if (device.cc_major < 8) {
    why << "needs compute capability 8.0+ (bsrmm's kernels are built for sm_80 and newer)";
  } else if (args.a.dtype != kind.dtype || args.b.dtype != kind.dtype || args.c.dtype != kind.dtype) {
    why << "takes " << detail::name(kind.dtype) << " A, B and C only";
  } else if (kind.dtype == BSRMM_DTYPE_F32 && (args.f32_mode == BSRMM_F32_TF32) != kind.tf32) {
    why << "runs f32 in " << (kind.tf32 ? "TF32" : "EXACT") << " mode only";
  } else if (args.a_dense == nullptr) {
    why << "has no dense copy of A for this call";
  } else if (m < 1 || n < 1 || k < 1 || m > INT_MAX || n > INT_MAX || k > INT_MAX ||
             args.b.ld > INT_MAX || args.c.ld > INT_MAX) {
    why << "needs M, N, K and the leading dimensions in 1..2^31-1 (cuBLASLt's int32 sizes)";
  } else if (!aligned(args.b.data, element) || !aligned(args.c.data, element) ||
             !aligned(args.bias, element)) {
    why << "needs B, C and the bias aligned to their element size";
  } else {
    // The copy lives as long as the matrix: a quarter of the device's memory at most, so a
    // huge sparse matrix is never densified on the way to an out-of-memory error.
    const std::size_t copy = std::size_t(m) * std::size_t(k) * element;
    const std::size_t memory = device_memory_bytes(args.device);
    std::string reason;
    if (copy > memory / 4) {
      why << "a dense copy of A needs " << copy << " bytes, over a quarter of the device's "
          << memory;
    } else if (!(reason = stream_memory_refusal(args.device)).empty()) {
      why << reason;
    } else if (lt::api(&reason) == nullptr) {
      why << reason;
    }
  }
  return why.str();
}

// alpha and beta as cuBLASLt reads them: float, or double for f64.
struct Scalars {
  float f[2];
  double d[2];
  const void* alpha(const Kind& kind) const { return kind.acc == CUDA_R_64F ? (const void*)&d[0] : &f[0]; }
  const void* beta(const Kind& kind) const { return kind.acc == CUDA_R_64F ? (const void*)&d[1] : &f[1]; }
};

Scalars scalars(double alpha, double beta) {
  return {{float(alpha), float(beta)}, {alpha, beta}};
}

// bsrmm's layouts as cuBLASLt's column-major operands. The dense copy of op(A) (m x k
// row-major) is the column-major k x m matrix A^T; a row-major B is the column-major B^T; a
// row-major C is the column-major C^T, computed as C^T = B^T * A^T. `d` has C's layout.
GemmCall gemm_call(const Kind& kind, const MatmulArgs& args, const DeviceTraits& device,
                   const void* a_dense, void* d, cudaDataType_t d_type, int64_t ldd,
                   const Scalars& s, bool scaled) {
  const uint64_t m = uint64_t(args.c.rows), n = uint64_t(args.c.cols), k = uint64_t(args.b.rows);
  const bool b_row_major = args.b.layout == BSRMM_LAYOUT_ROW_MAJOR;
  const GemmOperand a_t{a_dense, kind.data, k, m, int64_t(k), lt::kOpN};
  GemmOperand b = b_row_major ? GemmOperand{args.b.data, kind.data, n, k, args.b.ld, lt::kOpN}
                              : GemmOperand{args.b.data, kind.data, k, n, args.b.ld, lt::kOpN};
  GemmCall call{};
  if (args.c.layout == BSRMM_LAYOUT_COL_MAJOR) {
    call.x = a_t;
    call.x.op = lt::kOpT;
    call.y = b;
    call.y.op = b_row_major ? lt::kOpT : lt::kOpN;
    call.m = m;
    call.n = n;
  } else {
    call.x = b;
    call.x.op = b_row_major ? lt::kOpN : lt::kOpT;
    call.y = a_t;
    call.m = n;
    call.n = m;
  }
  call.d = d;
  call.d_type = d_type;
  call.ldd = ldd;
  call.compute = kind.compute;
  call.scale_type = kind.acc;
  static const Scalars unscaled = scalars(1.0, 0.0);
  call.alpha = scaled ? s.alpha(kind) : unscaled.alpha(kind);
  call.beta = scaled ? s.beta(kind) : unscaled.beta(kind);
  // `device` is already within the budget (registry.cu): its SM count is the target.
  call.sm_count_target = args.sm_budget > 0 ? device.sm_count : 0;
  return call;
}

void launch(const Kind& kind, const MatmulArgs& args, const DeviceTraits& device) {
  const lt::Api* api = lt::api(nullptr);
  if (api == nullptr || args.a_dense == nullptr)
    detail::fail(BSRMM_STATUS_INTERNAL, kind.name, " launched without its support checked");
  const auto stream = static_cast<cudaStream_t>(args.stream);
  std::optional<StreamScratch> step_copy;  // op(A) for this call only (DenseCopy::kept says when)
  const void* a_dense = nullptr;
  if (args.a_dense->kept()) {
    a_dense = args.a_dense->get(args.stream);
  } else {
    const BsrView& a = args.a;
    step_copy.emplace(std::size_t(a.block_row_count) * a.block_height * std::size_t(a.block_col_count) *
                          a.block_width * detail::element_size(a.dtype), args.device, stream);
    densify_blocks(a.row_ptr, a.col_idx, a.values, a.block_row_count, a.block_col_count, a.block_height,
                   a.block_width, a.nnzb, a.dtype, step_copy->data(), args.device, args.stream);
    a_dense = step_copy->data();
  }
  const int64_t m = args.c.rows, n = args.c.cols;

  // Structural zeros meet B in the dense product; without any (a full pattern) nothing differs.
  const bool structural_zeros = double(args.a.nnzb) < double(args.a.block_row_count) * double(args.a.block_col_count);
  std::optional<StreamScratch> flag_memory;
  ColumnFlags flags{};
  if (structural_zeros) {
    flag_memory.emplace(column_flags_bytes(n), args.device, stream);
    flags = column_flags_at(flag_memory->data(), n);
  }
  // The product's row 0 in a buffer of C's layout: element j is `stride` elements after j - 1.
  const auto flag_from_first_row = [&](const void* product, bsrmm_dtype dtype, int64_t ld) {
    const int64_t stride = args.c.layout == BSRMM_LAYOUT_COL_MAJOR ? ld : 1;
    find_nonfinite_columns(product, dtype, n, stride, flags, stream);
  };

  // alpha == 0 goes staged too: a BLAS may skip the product then, but 0 * NaN must stay NaN.
  const bool direct = args.beta == 0 && args.bias == nullptr &&
                      args.activation == BSRMM_ACTIVATION_NONE && args.alpha != 0;
  const Scalars s = scalars(args.alpha, args.beta);
  if (direct) {
    gemm(*api, args.device, gemm_call(kind, args, device, a_dense, args.c.data, kind.data, args.c.ld, s, true), stream);
    if (structural_zeros) {
      flag_from_first_row(args.c.data, args.c.dtype, args.c.ld);
      repair_columns(args, flags, device.sm_count, stream);
    }
    return;
  }
  StreamScratch staging(std::size_t(m) * std::size_t(n) * kind.acc_bytes, args.device, stream);
  const int64_t ld = args.c.layout == BSRMM_LAYOUT_COL_MAJOR ? m : n;
  gemm(*api, args.device, gemm_call(kind, args, device, a_dense, staging.data(), kind.acc, ld, s, false), stream);
  if (structural_zeros)
    flag_from_first_row(staging.data(), kind.acc == CUDA_R_64F ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32, ld);
  staged_epilogue(args, staging.data(), structural_zeros ? flags.flags : nullptr, stream);
}

template <int I>
struct Entry {
  static bool supports(const MatmulArgs& args, const DeviceTraits& device) {
    return why_not(args, device).empty();
  }
  static void launch(const MatmulArgs& args, const DeviceTraits& device) {
    dense_fallback::launch(kKinds[I], args, device);
  }
  // Unused: the registry places the dense fallback by density, not by preference.
  static int preference(const MatmulArgs&, const DeviceTraits&) { return 0; }
  static std::string why_not(const MatmulArgs& args, const DeviceTraits& device) {
    return refusal(kKinds[I], args, device);
  }
  static Variant variant() {
    return Variant{kKinds[I].name, &supports, &launch, &preference, &why_not};
  }
};

}  // namespace
}  // namespace dense_fallback

std::vector<Variant> dense_fallback_variants() {
  using namespace dense_fallback;
  return {Entry<0>::variant(), Entry<1>::variant(), Entry<2>::variant(), Entry<3>::variant(),
          Entry<4>::variant()};
}

}  // namespace bsrmm::cuda
