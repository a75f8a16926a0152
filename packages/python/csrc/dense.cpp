// The bsrmm_dense descriptor as _core.Dense: an address plus the shape, leading dimension,
// layout, dtype and device the Python layer derived from the caller's array.
#include "bindings.hpp"

#include <bsrmm/bsrmm.h>

namespace bsrmm_python {

void bind_dense(py::module_& m) {
  py::class_<bsrmm_dense>(m, "Dense")
      .def(py::init([](Address data, int64_t rows, int64_t cols, int64_t ld, int layout,
                       int dtype, int device_type, int device_ordinal) {
             return bsrmm_dense{to_pointer(data),
                                rows,
                                cols,
                                ld,
                                static_cast<bsrmm_layout>(layout),
                                static_cast<bsrmm_dtype>(dtype),
                                bsrmm_device{static_cast<bsrmm_device_type>(device_type),
                                             device_ordinal}};
           }),
           py::arg("data"), py::arg("rows"), py::arg("cols"), py::arg("ld"), py::arg("layout"),
           py::arg("dtype"), py::arg("device_type"), py::arg("device_ordinal"))
      .def_property_readonly("data",
                             [](const bsrmm_dense& d) { return reinterpret_cast<Address>(d.data); })
      .def_readonly("rows", &bsrmm_dense::rows)
      .def_readonly("cols", &bsrmm_dense::cols)
      .def_readonly("ld", &bsrmm_dense::ld)
      .def_property_readonly("layout", [](const bsrmm_dense& d) { return static_cast<int>(d.layout); })
      .def_property_readonly("dtype", [](const bsrmm_dense& d) { return static_cast<int>(d.dtype); })
      .def_property_readonly("device_type",
                             [](const bsrmm_dense& d) { return static_cast<int>(d.device.type); })
      .def_property_readonly("device_ordinal",
                             [](const bsrmm_dense& d) { return d.device.ordinal; });
}

}  // namespace bsrmm_python
