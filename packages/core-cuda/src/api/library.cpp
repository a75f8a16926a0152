// Library-wide entry points: version, status names, the thread-local last error, CUDA
// availability and the variant list.
#include "../device/device_runtime.hpp"
#include "guard.hpp"
#include "variants.hpp"

#include <bsrmm/bsrmm.h>

#include <string>

namespace bsrmm::api {

namespace {
thread_local std::string last_error;
}  // namespace

void set_last_error(const char* function, const char* message) noexcept {
  try {
    last_error.assign(function);
    last_error.append(": ");
    last_error.append(message);
  } catch (...) {
    // Out of memory while reporting an error: keep whatever fits rather than throwing.
    last_error.clear();
  }
}

}  // namespace bsrmm::api

using bsrmm::api::guarded;

namespace {

const bsrmm::api::VariantEntry& variant_at(int32_t index) {
  const std::vector<bsrmm::api::VariantEntry>& list = bsrmm::api::variants();
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    bsrmm::detail::invalid_argument("index = ", index, " is outside 0..", list.size() - 1);
  }
  return list[static_cast<size_t>(index)];
}

}  // namespace

#define BSRMM_STRINGIFY2(x) #x
#define BSRMM_STRINGIFY(x) BSRMM_STRINGIFY2(x)

extern "C" {

const char* bsrmm_version(void) {
  return BSRMM_STRINGIFY(BSRMM_VERSION_MAJOR) "." BSRMM_STRINGIFY(
      BSRMM_VERSION_MINOR) "." BSRMM_STRINGIFY(BSRMM_VERSION_PATCH);
}

const char* bsrmm_status_name(bsrmm_status status) {
  switch (status) {
    case BSRMM_STATUS_SUCCESS: return "BSRMM_STATUS_SUCCESS";
    case BSRMM_STATUS_INVALID_ARGUMENT: return "BSRMM_STATUS_INVALID_ARGUMENT";
    case BSRMM_STATUS_UNSUPPORTED: return "BSRMM_STATUS_UNSUPPORTED";
    case BSRMM_STATUS_OUT_OF_MEMORY: return "BSRMM_STATUS_OUT_OF_MEMORY";
    case BSRMM_STATUS_NO_DEVICE: return "BSRMM_STATUS_NO_DEVICE";
    case BSRMM_STATUS_CUDA_ERROR: return "BSRMM_STATUS_CUDA_ERROR";
    case BSRMM_STATUS_INTERNAL: return "BSRMM_STATUS_INTERNAL";
    case BSRMM_STATUS_IO_ERROR: return "BSRMM_STATUS_IO_ERROR";
  }
  return "BSRMM_STATUS_UNKNOWN";
}

const char* bsrmm_last_error(void) { return bsrmm::api::last_error.c_str(); }

int bsrmm_cuda_compiled(void) { return bsrmm::detail::cuda_compiled() ? 1 : 0; }

bsrmm_status bsrmm_cuda_device_count(int32_t* count) {
  return guarded(__func__, [&] {
    int32_t& out = bsrmm::api::require(count, "count");
    out = 0;
    std::string why;
    const int devices = bsrmm::detail::cuda_device_count(&why);
    if (devices <= 0) bsrmm::detail::fail(BSRMM_STATUS_NO_DEVICE, why);
    out = devices;
  });
}

int32_t bsrmm_variant_count(void) {
  int32_t count = 0;
  guarded(__func__, [&] { count = static_cast<int32_t>(bsrmm::api::variants().size()); });
  return count;
}

const char* bsrmm_variant_name(int32_t index) {
  const char* name = nullptr;
  guarded(__func__, [&] { name = variant_at(index).name.c_str(); });
  return name;
}

bsrmm_status bsrmm_variant_get_kind(int32_t index, bsrmm_variant_kind* out) {
  return guarded(__func__, [&] {
    bsrmm_variant_kind& kind = bsrmm::api::require(out, "out");
    kind = variant_at(index).kind;
  });
}

}  // extern "C"
