// bsrmm_sddmm as _core.sddmm: the Python layer (bsrmm/_sddmm.py) reads the arrays and passes
// descriptors. The GIL is released for the call: a CPU SDDMM is long, and other Python threads
// (with their own contexts) keep running meanwhile.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

namespace bsrmm_python {

void bind_sddmm(py::module_& m) {
  m.def(
      "sddmm",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& pattern, const bsrmm_dense& x,
         const bsrmm_dense& y, bsrmm_dense& values, double alpha, double beta) {
        bsrmm::sddmm(ctx, pattern, x, y, values, alpha, beta);
      },
      py::arg("ctx"), py::arg("pattern"), py::arg("x"), py::arg("y"), py::arg("values"),
      py::arg("alpha"), py::arg("beta"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace bsrmm_python
