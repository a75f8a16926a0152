// Context entry points: creation on a device and the per-context settings.
#include "../device/device_runtime.hpp"
#include "../common/dtype.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "variants.hpp"

#include <bsrmm/bsrmm.h>

#include <mutex>
#include <string>
#include <utility>

namespace {

using bsrmm::api::guarded;
using bsrmm::api::require;
using bsrmm::detail::describe;
using bsrmm::detail::invalid_argument;

thread_local std::string last_variant_result;

// One setting written or read under settings_mutex (a call on another thread may be taking the
// context's snapshot meanwhile).
template <typename T>
void store_setting(bsrmm_context_s& context, T bsrmm_context_s::*setting, T value) {
  std::lock_guard<std::mutex> lock(context.settings_mutex);
  context.*setting = std::move(value);
}

template <typename T>
T load_setting(bsrmm_context_s& context, T bsrmm_context_s::*setting) {
  std::lock_guard<std::mutex> lock(context.settings_mutex);
  return context.*setting;
}

}  // namespace

extern "C" {

bsrmm_status bsrmm_context_create(bsrmm_device device, bsrmm_context_t* out) {
  return guarded(__func__, [&] {
    bsrmm_context_t& result = require(out, "out");
    result = nullptr;
    if (device.type == BSRMM_DEVICE_CPU) {
      if (device.ordinal != 0) {
        invalid_argument("device.ordinal = ", device.ordinal, " for a CPU device, must be 0");
      }
    } else if (device.type == BSRMM_DEVICE_CUDA) {
      if (device.ordinal < 0) invalid_argument("device.ordinal = ", device.ordinal, " is negative");
      bsrmm::detail::check_device_exists(device);
    } else {
      invalid_argument("device.type = ", static_cast<int>(device.type),
                       " is not a bsrmm_device_type (0 = CPU, 1 = CUDA)");
    }
    result = new bsrmm_context_s(device);
  });
}

void bsrmm_context_destroy(bsrmm_context_t ctx) { delete ctx; }

bsrmm_status bsrmm_context_get_device(bsrmm_context_t ctx, bsrmm_device* out) {
  return guarded(__func__, [&] { require(out, "out") = require(ctx, "ctx").device; });
}

bsrmm_status bsrmm_context_set_stream(bsrmm_context_t ctx, void* stream) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    if (context.device.type != BSRMM_DEVICE_CUDA && stream != nullptr) {
      invalid_argument("stream: streams exist only on CUDA contexts; this context is on ",
                       describe(context.device));
    }
    store_setting(context, &bsrmm_context_s::stream, stream);
  });
}

bsrmm_status bsrmm_context_get_stream(bsrmm_context_t ctx, void** stream) {
  return guarded(__func__, [&] {
    void*& out = require(stream, "stream");
    out = bsrmm::api::stream_of(require(ctx, "ctx"));
  });
}

bsrmm_status bsrmm_context_set_num_threads(bsrmm_context_t ctx, int32_t threads) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    if (threads < 0 || threads > bsrmm::detail::max_threads) {
      invalid_argument("threads = ", threads, " is outside 0..", bsrmm::detail::max_threads,
                       " (0 means the default: BSRMM_NUM_THREADS, OMP_NUM_THREADS or one per "
                       "CPU this process may run on)");
    }
    store_setting(context, &bsrmm_context_s::num_threads, threads);
  });
}

bsrmm_status bsrmm_context_get_num_threads(bsrmm_context_t ctx, int32_t* out) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    int32_t& result = require(out, "out");
    const int32_t threads = load_setting(context, &bsrmm_context_s::num_threads);
    result = threads != 0 ? threads : context.cpu.default_threads;  // const: no lock needed
  });
}

bsrmm_status bsrmm_context_set_f32_mode(bsrmm_context_t ctx, bsrmm_f32_mode mode) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    if (mode != BSRMM_F32_EXACT && mode != BSRMM_F32_TF32) {
      invalid_argument("mode = ", static_cast<int>(mode),
                       " is not a bsrmm_f32_mode (0 = EXACT, 1 = TF32)");
    }
    store_setting(context, &bsrmm_context_s::f32_mode, mode);
  });
}

bsrmm_status bsrmm_context_set_tuning_mode(bsrmm_context_t ctx, bsrmm_tuning_mode mode) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    if (mode != BSRMM_TUNING_OFF && mode != BSRMM_TUNING_AUTO && mode != BSRMM_TUNING_FORCE) {
      invalid_argument("mode = ", static_cast<int>(mode),
                       " is not a bsrmm_tuning_mode (0 = OFF, 1 = AUTO, 2 = FORCE)");
    }
    store_setting(context, &bsrmm_context_s::tuning_mode, mode);
  });
}

bsrmm_status bsrmm_context_set_variant(bsrmm_context_t ctx, const char* name) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    const std::string variant = name ? name : "";
    if (!variant.empty()) {
      const bsrmm::api::VariantEntry* entry = bsrmm::api::find_variant(variant);
      if (entry == nullptr) {
        invalid_argument("name = \"", variant,
                         "\" is not a variant of this build (list them with bsrmm_variant_name)");
      }
      const bool cpu_variant = entry->cpu;
      if (cpu_variant != (context.device.type == BSRMM_DEVICE_CPU)) {
        invalid_argument("name = \"", variant, "\" is a ", cpu_variant ? "CPU" : "CUDA",
                         " variant; this context is on ", describe(context.device));
      }
    }
    store_setting(context, &bsrmm_context_s::forced_variant, variant);
  });
}

bsrmm_status bsrmm_context_set_sm_budget(bsrmm_context_t ctx, int32_t count) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    if (count < 0) {
      invalid_argument("count = ", count, " is negative (0 means every SM; a count above the "
                       "device's SMs also means every SM)");
    }
    store_setting(context, &bsrmm_context_s::sm_budget, count);
  });
}

bsrmm_status bsrmm_context_get_sm_budget(bsrmm_context_t ctx, int32_t* out) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    int32_t& result = require(out, "out");
    result = load_setting(context, &bsrmm_context_s::sm_budget);
  });
}

bsrmm_status bsrmm_context_synchronize(bsrmm_context_t ctx) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    bsrmm::detail::synchronize(context.device, bsrmm::api::stream_of(context));
  });
}

const char* bsrmm_context_last_variant(bsrmm_context_t ctx) {
  const char* result = "";
  guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    last_variant_result = load_setting(context, &bsrmm_context_s::last_variant);
    result = last_variant_result.c_str();
  });
  return result;
}

}  // extern "C"
