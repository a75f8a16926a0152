// bsrmm_matmul and bsrmm_tune as _core.matmul / _core.tune: one argument list, one options
// builder. The GIL is released for the call: a CPU product (or a tuning run) is long, and other
// Python threads (with their own contexts) keep running meanwhile.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

#include <string>

namespace bsrmm_python {

bsrmm_matmul_options matmul_options_for(bool transpose_a, double alpha, double beta,
                                        Address bias, int activation) {
  bsrmm_matmul_options options = bsrmm::matmul_options();
  options.op_a = transpose_a ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
  options.alpha = alpha;
  options.beta = beta;
  options.bias = to_pointer(bias);
  options.activation = static_cast<bsrmm_activation>(activation);
  return options;
}

namespace {

// B's scales for an fp8 B: `count` float32 values of `kind` at address `scales` (0: none) in
// the memory of device (device_type, device_ordinal): the host's, or B's GPU for per-column
// scales a kernel reads in place.
bsrmm_scales b_scales_at(Address scales, int kind, int64_t count, int device_type, int device_ordinal) {
  bsrmm_scales given = bsrmm_scales_default();
  given.kind = static_cast<bsrmm_scale_kind>(kind);
  given.data = static_cast<const float*>(to_pointer(scales));
  given.count = count;
  given.device = bsrmm_device{static_cast<bsrmm_device_type>(device_type), device_ordinal};
  return given;
}

}  // namespace

void bind_matmul(py::module_& m) {
  m.def(
      "matmul",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& a, const bsrmm_dense& b, bsrmm_dense& c,
         bool transpose_a, double alpha, double beta, Address bias, int activation,
         Address b_scales, int b_scale_kind, int64_t b_scale_count, int b_scale_device_type,
         int b_scale_device_ordinal) {
        bsrmm_matmul_options options = matmul_options_for(transpose_a, alpha, beta, bias, activation);
        const bsrmm_scales scales =
            b_scales_at(b_scales, b_scale_kind, b_scale_count, b_scale_device_type, b_scale_device_ordinal);
        if (b_scales != 0) options.b_scales = &scales;
        bsrmm::matmul(ctx, a, b, c, options);
      },
      py::arg("ctx"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("transpose_a"),
      py::arg("alpha"), py::arg("beta"), py::arg("bias"), py::arg("activation"),
      py::arg("b_scales") = Address{0}, py::arg("b_scale_kind") = 0, py::arg("b_scale_count") = 0,
      py::arg("b_scale_device_type") = int(BSRMM_DEVICE_CPU), py::arg("b_scale_device_ordinal") = 0,
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "tune",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& a, const bsrmm_dense& b, bsrmm_dense& c,
         bool transpose_a, double alpha, double beta, Address bias, int activation,
         Address b_scales, int b_scale_kind, int64_t b_scale_count, int b_scale_device_type,
         int b_scale_device_ordinal) {
        bsrmm_matmul_options options = matmul_options_for(transpose_a, alpha, beta, bias, activation);
        const bsrmm_scales scales =
            b_scales_at(b_scales, b_scale_kind, b_scale_count, b_scale_device_type, b_scale_device_ordinal);
        if (b_scales != 0) options.b_scales = &scales;
        return bsrmm::tune(ctx, a, b, c, options);
      },
      py::arg("ctx"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("transpose_a"),
      py::arg("alpha"), py::arg("beta"), py::arg("bias"), py::arg("activation"),
      py::arg("b_scales") = Address{0}, py::arg("b_scale_kind") = 0, py::arg("b_scale_count") = 0,
      py::arg("b_scale_device_type") = int(BSRMM_DEVICE_CPU), py::arg("b_scale_device_ordinal") = 0,
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace bsrmm_python
