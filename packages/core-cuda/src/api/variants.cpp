#include "variants.hpp"

#include "../common/error.hpp"
#include "../cpu/cpu_backend.hpp"

#if BSRMM_WITH_CUDA
#include "../cuda/cuda_backend.hpp"
#include "../cuda/sddmm/sddmm_backend.hpp"
#endif

#include <utility>

namespace bsrmm::api {
namespace {

void append(std::vector<VariantEntry>& list, std::vector<std::string> names, bsrmm_variant_kind kind,
            bool cpu) {
  for (std::string& name : names) list.push_back(VariantEntry{std::move(name), kind, cpu});
}

}  // namespace

const std::vector<VariantEntry>& variants() {
  static const std::vector<VariantEntry> all = [] {
    std::vector<VariantEntry> list;
    append(list, cpu::variant_names(), BSRMM_VARIANT_MATMUL, true);
#if BSRMM_WITH_CUDA
    append(list, cuda::variant_names(), BSRMM_VARIANT_MATMUL, false);
#endif
    append(list, cpu::sddmm_variant_names(), BSRMM_VARIANT_SDDMM, true);
#if BSRMM_WITH_CUDA
    append(list, cuda::sddmm_variant_names(), BSRMM_VARIANT_SDDMM, false);
#endif
    return list;
  }();
  return all;
}

const VariantEntry* find_variant(const std::string& name) {
  for (const VariantEntry& entry : variants())
    if (entry.name == name) return &entry;
  return nullptr;
}

const char* kind_name(bsrmm_variant_kind kind) {
  return kind == BSRMM_VARIANT_SDDMM ? "SDDMM" : "matmul";
}

void check_forced_kind(const std::string& forced, bsrmm_variant_kind wanted, const char* call) {
  if (forced.empty()) return;
  const VariantEntry* entry = find_variant(forced);
  if (entry == nullptr || entry->kind == wanted) return;
  const char* article = entry->kind == BSRMM_VARIANT_SDDMM ? "an " : "a ";
  detail::invalid_argument("the context's forced variant \"", forced, "\" is ", article,
                           kind_name(entry->kind), " variant and ", call, " runs ", kind_name(wanted),
                           " variants: force one of those (bsrmm_variant_get_kind tells them "
                           "apart) or clear it with bsrmm_context_set_variant(ctx, NULL)");
}

}  // namespace bsrmm::api
