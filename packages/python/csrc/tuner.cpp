// The tuner's persistent cache (shared by every binding and process) as _core.tuner_cache_*.
// Entries arrive as the core's JSON text; the Python layer parses it.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

namespace bsrmm_python {

void bind_tuner(py::module_& m) {
  using release_gil = py::call_guard<py::gil_scoped_release>;
  // Reading and clearing take the cache file's lock, which another process may hold.
  m.def("tuner_cache_path", &bsrmm::tuner_cache_path, release_gil());
  m.def("tuner_cache_entries", &bsrmm::tuner_cache_entries, release_gil());
  m.def("tuner_cache_warning", &bsrmm::tuner_cache_warning, release_gil());
  m.def("tuner_cache_clear", &bsrmm::tuner_cache_clear, release_gil());
}

}  // namespace bsrmm_python
