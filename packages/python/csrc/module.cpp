// The bsrmm._core extension: a translation layer over the C ABI (bsrmm.hpp), nothing more.
#include "bindings.hpp"

// threadpoolctl recognises this extension (among the loaded libraries named `_core...`) by this
// exported symbol: bsrmm/_threadpool.py registers a controller for bsrmm's CPU worker pool.
extern "C" __attribute__((visibility("default"))) int bsrmm_python_threadpool(void) { return 1; }

PYBIND11_MODULE(_core, m) {
  m.doc() = "Private bindings of the bsrmm C ABI; use the bsrmm package instead.";
  bsrmm_python::bind_errors(m);
  bsrmm_python::bind_library(m);
  bsrmm_python::bind_context(m);
  bsrmm_python::bind_dense(m);
  bsrmm_python::bind_matrix(m);
  bsrmm_python::bind_matmul(m);
  bsrmm_python::bind_sddmm(m);
  bsrmm_python::bind_direct_matmul(m);
  bsrmm_python::bind_tuner(m);
  bsrmm_python::bind_array_view(m);
}
