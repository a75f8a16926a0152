// Facts about the public enums that every layer needs: element sizes, names for messages, and
// range checks (enums arrive from C callers and bindings as plain integers).
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <string>

namespace bsrmm::detail {

// The dtypes every entry point takes. The fp8 ones are bsrmm_dtypes too, but only A's values
// (bsrmm_matrix_create_scaled) and B of a multiply may hold them: each of those accepts them
// explicitly (is_fp8), everything else rejects them through is_valid.
inline bool is_valid(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_F32 || dtype == BSRMM_DTYPE_F16 || dtype == BSRMM_DTYPE_BF16 ||
         dtype == BSRMM_DTYPE_F64;
}
inline bool is_fp8(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_FLOAT8_E4M3 || dtype == BSRMM_DTYPE_FLOAT8_E5M2;
}
inline bool is_valid(bsrmm_scale_kind kind) {
  return kind == BSRMM_SCALE_PER_TENSOR || kind == BSRMM_SCALE_PER_BLOCK ||
         kind == BSRMM_SCALE_PER_BLOCK_ROW || kind == BSRMM_SCALE_PER_COLUMN;
}
inline bool is_valid(bsrmm_layout layout) {
  return layout == BSRMM_LAYOUT_ROW_MAJOR || layout == BSRMM_LAYOUT_COL_MAJOR;
}
inline bool is_valid(bsrmm_index_type type) {
  return type == BSRMM_INDEX_I32 || type == BSRMM_INDEX_I64;
}
inline bool is_valid(bsrmm_op op) { return op == BSRMM_OP_NONE || op == BSRMM_OP_TRANSPOSE; }
inline bool is_valid(bsrmm_activation activation) {
  return activation == BSRMM_ACTIVATION_NONE || activation == BSRMM_ACTIVATION_RELU ||
         activation == BSRMM_ACTIVATION_GELU || activation == BSRMM_ACTIVATION_SILU;
}

// Only meaningful for valid dtypes; callers check is_valid first.
inline std::size_t element_size(bsrmm_dtype dtype) {
  switch (dtype) {
    case BSRMM_DTYPE_F64: return 8;
    case BSRMM_DTYPE_F32: return 4;
    case BSRMM_DTYPE_FLOAT8_E4M3:
    case BSRMM_DTYPE_FLOAT8_E5M2: return 1;
    default: return 2;
  }
}
inline std::size_t index_size(bsrmm_index_type type) { return type == BSRMM_INDEX_I64 ? 8 : 4; }

inline const char* name(bsrmm_dtype dtype) {
  switch (dtype) {
    case BSRMM_DTYPE_F32: return "f32";
    case BSRMM_DTYPE_F16: return "f16";
    case BSRMM_DTYPE_BF16: return "bf16";
    case BSRMM_DTYPE_F64: return "f64";
    case BSRMM_DTYPE_FLOAT8_E4M3: return "float8_e4m3";
    case BSRMM_DTYPE_FLOAT8_E5M2: return "float8_e5m2";
  }
  return "invalid dtype";
}
inline const char* name(bsrmm_scale_kind kind) {
  switch (kind) {
    case BSRMM_SCALE_PER_TENSOR: return "PER_TENSOR";
    case BSRMM_SCALE_PER_BLOCK: return "PER_BLOCK";
    case BSRMM_SCALE_PER_BLOCK_ROW: return "PER_BLOCK_ROW";
    case BSRMM_SCALE_PER_COLUMN: return "PER_COLUMN";
  }
  return "invalid scale kind";
}
// The message tail for a dtype field holding a value that is not valid there.
inline const char* dtype_rule(bsrmm_dtype dtype) {
  return is_fp8(dtype) ? " is fp8, which only A's values (bsrmm_matrix_create_scaled) and B of "
                         "bsrmm_matmul may be"
                       : " is not a bsrmm_dtype (0 = F32, 1 = F16, 2 = BF16, 3 = F64, "
                         "4 = FLOAT8_E4M3, 5 = FLOAT8_E5M2)";
}
inline const char* name(bsrmm_layout layout) {
  return layout == BSRMM_LAYOUT_ROW_MAJOR ? "row-major" : "column-major";
}

// "cpu" or "cuda:1": how devices appear in every message.
inline std::string describe(bsrmm_device device) {
  if (device.type == BSRMM_DEVICE_CPU) return "cpu";
  if (device.type == BSRMM_DEVICE_CUDA) return "cuda:" + std::to_string(device.ordinal);
  return "device type " + std::to_string(static_cast<int>(device.type));
}
inline bool same_device(bsrmm_device a, bsrmm_device b) {
  return a.type == b.type && a.ordinal == b.ordinal;
}

}  // namespace bsrmm::detail
