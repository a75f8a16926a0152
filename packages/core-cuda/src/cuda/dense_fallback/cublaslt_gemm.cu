#include "cublaslt_gemm.hpp"

#include "../../common/error.hpp"
#include "cublaslt_library.hpp"
#include "stream_scratch.hpp"

#include <map>
#include <mutex>
#include <tuple>

namespace bsrmm::cuda::dense_fallback {
namespace {

// As much workspace as cuBLASLt may ask for: 32 MiB is what NVIDIA recommends for Hopper.
constexpr uint64_t kMaxWorkspace = uint64_t(32) << 20;

void check(const lt::Api& api, lt::Status status, const char* what) {
  if (status != lt::kSuccess)
    detail::fail(BSRMM_STATUS_CUDA_ERROR, "dense fallback: ", what, " failed: ",
                 lt::status_text(api, status));
}

// The largest power of two (up to 256) dividing the address: cuBLASLt's heuristic assumes 256
// unless told, and a kernel chosen for more alignment than the data has would fault.
uint32_t alignment_of(const void* pointer) {
  uint32_t alignment = 256;
  while (alignment > 1 && reinterpret_cast<uintptr_t>(pointer) % alignment != 0) alignment /= 2;
  return alignment;
}

// Descriptors live for one call (creating them is cheap host work; the heuristic is not).
// Each one is owned by its own member, so a failure halfway releases those already made.
struct OpDesc {
  const lt::Api& api;
  lt::MatmulDesc handle = nullptr;
  ~OpDesc() {
    if (handle) api.matmul_desc_destroy(handle);
  }
};

struct Layout {
  const lt::Api& api;
  lt::MatrixLayout handle = nullptr;
  ~Layout() {
    if (handle) api.matrix_layout_destroy(handle);
  }
};

struct Descriptors {
  OpDesc op;
  Layout x, y, d;

  Descriptors(const lt::Api& api, const GemmCall& call) : op{api}, x{api}, y{api}, d{api} {
    check(api, api.matmul_desc_create(&op.handle, call.compute, call.scale_type),
          "cublasLtMatmulDescCreate");
    const int32_t op_x = call.x.op, op_y = call.y.op;
    check(api, api.matmul_desc_set_attribute(op.handle, lt::kDescTransA, &op_x, sizeof(op_x)),
          "set TRANSA");
    check(api, api.matmul_desc_set_attribute(op.handle, lt::kDescTransB, &op_y, sizeof(op_y)),
          "set TRANSB");
    if (call.sm_count_target > 0) {
      check(api, api.matmul_desc_set_attribute(op.handle, lt::kDescSmCountTarget, &call.sm_count_target,
                                               sizeof(call.sm_count_target)),
            "set SM_COUNT_TARGET");
    }
    check(api, api.matrix_layout_create(&x.handle, call.x.type, call.x.rows, call.x.cols, call.x.ld),
          "cublasLtMatrixLayoutCreate(A)");
    check(api, api.matrix_layout_create(&y.handle, call.y.type, call.y.rows, call.y.cols, call.y.ld),
          "cublasLtMatrixLayoutCreate(B)");
    check(api, api.matrix_layout_create(&d.handle, call.d_type, call.m, call.n, call.ldd),
          "cublasLtMatrixLayoutCreate(C)");
  }
};

struct Choice {
  lt::MatmulAlgo algo;
  std::size_t workspace;
};

// Everything the heuristic's answer depends on.
using ProblemKey = std::tuple<int, int, int, int, int, uint64_t, uint64_t, int64_t, int, int,
                              uint64_t, uint64_t, int64_t, int, uint64_t, uint64_t, int64_t,
                              uint32_t, uint32_t, uint32_t, int32_t>;

ProblemKey key_of(int ordinal, const GemmCall& call) {
  return {ordinal, int(call.compute), int(call.scale_type),
          int(call.x.type), int(call.x.op), call.x.rows, call.x.cols, call.x.ld,
          int(call.y.type), int(call.y.op), call.y.rows, call.y.cols, call.y.ld,
          int(call.d_type), call.m, call.n, call.ldd,
          alignment_of(call.x.data), alignment_of(call.y.data), alignment_of(call.d),
          call.sm_count_target};
}

Choice ask_heuristic(const lt::Api& api, lt::Handle handle, const Descriptors& desc,
                     const GemmCall& call) {
  lt::Preference preference = nullptr;
  check(api, api.preference_create(&preference), "cublasLtMatmulPreferenceCreate");
  struct Release {
    const lt::Api& api;
    lt::Preference preference;
    ~Release() { api.preference_destroy(preference); }
  } release{api, preference};
  const uint64_t workspace = kMaxWorkspace;
  check(api, api.preference_set_attribute(preference, lt::kPrefMaxWorkspaceBytes, &workspace, sizeof(workspace)),
        "set MAX_WORKSPACE_BYTES");
  const uint32_t align_x = alignment_of(call.x.data), align_y = alignment_of(call.y.data),
                 align_d = alignment_of(call.d);
  check(api, api.preference_set_attribute(preference, lt::kPrefMinAlignmentA, &align_x, sizeof(align_x)),
        "set MIN_ALIGNMENT_A_BYTES");
  check(api, api.preference_set_attribute(preference, lt::kPrefMinAlignmentB, &align_y, sizeof(align_y)),
        "set MIN_ALIGNMENT_B_BYTES");
  check(api, api.preference_set_attribute(preference, lt::kPrefMinAlignmentC, &align_d, sizeof(align_d)),
        "set MIN_ALIGNMENT_C_BYTES");
  check(api, api.preference_set_attribute(preference, lt::kPrefMinAlignmentD, &align_d, sizeof(align_d)),
        "set MIN_ALIGNMENT_D_BYTES");
  lt::HeuristicResult result{};
  int returned = 0;
  check(api, api.algo_get_heuristic(handle, desc.op.handle, desc.x.handle, desc.y.handle, desc.d.handle,
                                    desc.d.handle, preference, 1, &result, &returned),
        "cublasLtMatmulAlgoGetHeuristic");
  if (returned < 1 || result.state != lt::kSuccess)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "dense fallback: cuBLASLt has no algorithm for this ",
                 call.m, " x ", call.n, " product (status ", lt::status_text(api, result.state), ")");
  return {result.algo, result.workspace_size};
}

Choice choose(const lt::Api& api, lt::Handle handle, int ordinal, const Descriptors& desc,
              const GemmCall& call) {
  static std::mutex mutex;
  static std::map<ProblemKey, Choice> known;
  const ProblemKey key = key_of(ordinal, call);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = known.find(key);
    if (found != known.end()) return found->second;
  }
  const Choice choice = ask_heuristic(api, handle, desc, call);
  std::lock_guard<std::mutex> lock(mutex);
  // Bounded: a process that runs ever new shapes asks again rather than growing without end.
  if (known.size() >= 1024) known.clear();
  known.emplace(key, choice);
  return choice;
}

}  // namespace

void gemm(const lt::Api& api, int ordinal, const GemmCall& call, cudaStream_t stream) {
  const lt::Handle handle = lt::handle(api, ordinal);
  const Descriptors desc(api, call);
  const Choice choice = choose(api, handle, ordinal, desc, call);
  StreamScratch workspace(choice.workspace, ordinal, stream);
  check(api,
        api.matmul(handle, desc.op.handle, call.alpha, call.x.data, desc.x.handle, call.y.data,
                   desc.y.handle, call.beta, call.d, desc.d.handle, call.d, desc.d.handle,
                   &choice.algo, workspace.data(), choice.workspace, stream),
        "cublasLtMatmul");
}

}  // namespace bsrmm::cuda::dense_fallback
