// Library-wide queries and the ABI's enum values, exported as module constants so the Python
// layer never restates a number from bsrmm.h.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#ifndef BSRMM_PYTHON_VERSION
#error "BSRMM_PYTHON_VERSION must come from the build (pyproject.toml's version)"
#endif

namespace bsrmm_python {

void bind_library(py::module_& m) {
  m.attr("package_version") = BSRMM_PYTHON_VERSION;
  m.def("core_version", [] { return std::string(bsrmm_version()); });
  m.def("status_name",
        [](int status) { return std::string(bsrmm_status_name(static_cast<bsrmm_status>(status))); });
  m.def("cuda_compiled", [] { return bsrmm_cuda_compiled() != 0; });
  m.def("cuda_device_count", [] {
    int32_t count = 0;
    bsrmm::check(bsrmm_cuda_device_count(&count));
    return count;
  });
  // (name, "matmul" | "sddmm") for every variant, in the core's order.
  m.def("variants", [] {
    std::vector<std::pair<std::string, std::string>> listed;
    const int32_t count = bsrmm_variant_count();
    for (int32_t i = 0; i < count; ++i) {
      bsrmm_variant_kind kind = BSRMM_VARIANT_MATMUL;
      bsrmm::check(bsrmm_variant_get_kind(i, &kind));
      listed.emplace_back(bsrmm_variant_name(i), kind == BSRMM_VARIANT_SDDMM ? "sddmm" : "matmul");
    }
    return listed;
  });

  m.attr("STATUS_SUCCESS") = static_cast<int>(BSRMM_STATUS_SUCCESS);
  m.attr("STATUS_INVALID_ARGUMENT") = static_cast<int>(BSRMM_STATUS_INVALID_ARGUMENT);
  m.attr("STATUS_UNSUPPORTED") = static_cast<int>(BSRMM_STATUS_UNSUPPORTED);
  m.attr("STATUS_OUT_OF_MEMORY") = static_cast<int>(BSRMM_STATUS_OUT_OF_MEMORY);
  m.attr("STATUS_NO_DEVICE") = static_cast<int>(BSRMM_STATUS_NO_DEVICE);
  m.attr("STATUS_CUDA_ERROR") = static_cast<int>(BSRMM_STATUS_CUDA_ERROR);
  m.attr("STATUS_INTERNAL") = static_cast<int>(BSRMM_STATUS_INTERNAL);
  m.attr("STATUS_IO_ERROR") = static_cast<int>(BSRMM_STATUS_IO_ERROR);

  m.attr("DTYPE_F32") = static_cast<int>(BSRMM_DTYPE_F32);
  m.attr("DTYPE_F16") = static_cast<int>(BSRMM_DTYPE_F16);
  m.attr("DTYPE_BF16") = static_cast<int>(BSRMM_DTYPE_BF16);
  m.attr("DTYPE_F64") = static_cast<int>(BSRMM_DTYPE_F64);
  m.attr("DTYPE_FLOAT8_E4M3") = static_cast<int>(BSRMM_DTYPE_FLOAT8_E4M3);
  m.attr("DTYPE_FLOAT8_E5M2") = static_cast<int>(BSRMM_DTYPE_FLOAT8_E5M2);

  m.attr("SCALE_PER_TENSOR") = static_cast<int>(BSRMM_SCALE_PER_TENSOR);
  m.attr("SCALE_PER_BLOCK") = static_cast<int>(BSRMM_SCALE_PER_BLOCK);
  m.attr("SCALE_PER_BLOCK_ROW") = static_cast<int>(BSRMM_SCALE_PER_BLOCK_ROW);
  m.attr("SCALE_PER_COLUMN") = static_cast<int>(BSRMM_SCALE_PER_COLUMN);

  m.attr("INDEX_I32") = static_cast<int>(BSRMM_INDEX_I32);
  m.attr("INDEX_I64") = static_cast<int>(BSRMM_INDEX_I64);

  m.attr("LAYOUT_ROW_MAJOR") = static_cast<int>(BSRMM_LAYOUT_ROW_MAJOR);
  m.attr("LAYOUT_COL_MAJOR") = static_cast<int>(BSRMM_LAYOUT_COL_MAJOR);

  m.attr("DEVICE_CPU") = static_cast<int>(BSRMM_DEVICE_CPU);
  m.attr("DEVICE_CUDA") = static_cast<int>(BSRMM_DEVICE_CUDA);

  m.attr("F32_EXACT") = static_cast<int>(BSRMM_F32_EXACT);
  m.attr("F32_TF32") = static_cast<int>(BSRMM_F32_TF32);

  m.attr("TUNING_OFF") = static_cast<int>(BSRMM_TUNING_OFF);
  m.attr("TUNING_AUTO") = static_cast<int>(BSRMM_TUNING_AUTO);
  m.attr("TUNING_FORCE") = static_cast<int>(BSRMM_TUNING_FORCE);

  m.attr("ACTIVATION_NONE") = static_cast<int>(BSRMM_ACTIVATION_NONE);
  m.attr("ACTIVATION_RELU") = static_cast<int>(BSRMM_ACTIVATION_RELU);
  m.attr("ACTIVATION_GELU") = static_cast<int>(BSRMM_ACTIVATION_GELU);
  m.attr("ACTIVATION_SILU") = static_cast<int>(BSRMM_ACTIVATION_SILU);

  m.attr("CREATE_DEFAULT") = static_cast<unsigned>(BSRMM_CREATE_DEFAULT);
  m.attr("CREATE_SORT_INDICES") = static_cast<unsigned>(BSRMM_CREATE_SORT_INDICES);
  m.attr("CREATE_BORROW_VALUES") = static_cast<unsigned>(BSRMM_CREATE_BORROW_VALUES);
}

}  // namespace bsrmm_python
