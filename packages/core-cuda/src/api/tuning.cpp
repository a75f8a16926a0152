// Tuner cache entry points: the path in use, the entries, the last warning, clearing.
// (bsrmm_tune itself is a multiply: matmul.cpp.)
#include "../tune/cache_entry.hpp"
#include "../tune/tuning_cache.hpp"
#include "guard.hpp"

#include <bsrmm/bsrmm.h>

#include <cstring>
#include <string>

namespace {

using bsrmm::api::guarded;
using bsrmm::tuner::TuningCache;

// The (buf, len, needed) convention of bsrmm.h.
void write_text(const std::string& text, char* buf, size_t len, size_t* needed) {
  const size_t size = text.size() + 1;
  if (needed != nullptr) *needed = size;
  if (buf == nullptr) {
    if (len != 0) bsrmm::detail::invalid_argument("buf is NULL but len = ", len, " (use 0 to ask for the size)");
    return;
  }
  if (len < size) {
    bsrmm::detail::invalid_argument("len = ", len, " but the text needs ", size,
                                    " bytes with its NUL (*needed says how many)");
  }
  std::memcpy(buf, text.c_str(), size);
}

}  // namespace

extern "C" {

bsrmm_status bsrmm_tuner_cache_path(char* buf, size_t len, size_t* needed) {
  return guarded(__func__, [&] { write_text(TuningCache::instance().path(), buf, len, needed); });
}

bsrmm_status bsrmm_tuner_cache_entries(char* buf, size_t len, size_t* needed) {
  return guarded(__func__, [&] {
    const std::string text =
        bsrmm::tuner::to_json_text(bsrmm::tuner::entries_to_json(TuningCache::instance().entries()));
    write_text(text, buf, len, needed);
  });
}

bsrmm_status bsrmm_tuner_cache_warning(char* buf, size_t len, size_t* needed) {
  return guarded(__func__,
                 [&] { write_text(TuningCache::instance().last_warning(), buf, len, needed); });
}

bsrmm_status bsrmm_tuner_cache_clear(void) {
  return guarded(__func__, [&] { TuningCache::instance().clear(); });
}

}  // extern "C"
