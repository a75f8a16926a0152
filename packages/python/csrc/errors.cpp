// bsrmm::Error -> the Python class of its status. The class hierarchy lives once, in
// bsrmm/_errors.py; at import it hands this module a factory (status, message) -> exception.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

#include <exception>

namespace bsrmm_python {

namespace {

// Deliberately leaked: translators may run during interpreter teardown, after static
// destructors would have dropped a py::object without the GIL.
py::object& error_factory() {
  static auto* factory = new py::object();
  return *factory;
}

void raise_translated(const bsrmm::Error& error) {
  if (!error_factory()) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return;
  }
  try {
    py::object exception =
        error_factory()(static_cast<int>(error.status()), error.what());
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  } catch (py::error_already_set& failure) {
    failure.restore();
  }
}

}  // namespace

void bind_errors(py::module_& m) {
  m.def(
      "_set_error_factory", [](py::object factory) { error_factory() = std::move(factory); },
      py::arg("factory"));
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const bsrmm::Error& error) {
      raise_translated(error);
    }
  });
}

}  // namespace bsrmm_python
