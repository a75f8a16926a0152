// bsrmm::Context as _core.Context. Enum arguments arrive as the ABI's integers (the Python
// layer maps names to them); the core validates their range.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

#include <pybind11/stl.h>

#include <string>
#include <utility>

namespace bsrmm_python {

void bind_context(py::module_& m) {
  using bsrmm::Context;
  using release_gil = py::call_guard<py::gil_scoped_release>;

  py::class_<Context>(m, "Context")
      .def(py::init([](int device_type, int ordinal) {
             return Context(bsrmm_device{static_cast<bsrmm_device_type>(device_type), ordinal});
           }),
           py::arg("device_type"), py::arg("ordinal"))
      .def("device",
           [](const Context& ctx) {
             const bsrmm_device device = ctx.device();
             return std::make_pair(static_cast<int>(device.type), device.ordinal);
           })
      .def("set_stream", [](Context& ctx, Address stream) { ctx.set_stream(to_pointer(stream)); },
           py::arg("stream"))
      .def("stream", [](const Context& ctx) { return reinterpret_cast<Address>(ctx.stream()); })
      .def("set_num_threads", &Context::set_num_threads, py::arg("threads"))
      .def("num_threads", &Context::num_threads)
      .def("set_f32_mode",
           [](Context& ctx, int mode) { ctx.set_f32_mode(static_cast<bsrmm_f32_mode>(mode)); },
           py::arg("mode"))
      .def("set_tuning_mode",
           [](Context& ctx, int mode) {
             ctx.set_tuning_mode(static_cast<bsrmm_tuning_mode>(mode));
           },
           py::arg("mode"))
      .def("set_variant", &Context::set_variant, py::arg("name"))
      .def("set_sm_budget", &Context::set_sm_budget, py::arg("count"))
      .def("sm_budget", &Context::sm_budget)
      .def("last_variant", &Context::last_variant)
      .def("synchronize", &Context::synchronize, release_gil());
}

}  // namespace bsrmm_python
