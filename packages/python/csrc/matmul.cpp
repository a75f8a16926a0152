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

void bind_matmul(py::module_& m) {
  m.def(
      "matmul",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& a, const bsrmm_dense& b, bsrmm_dense& c,
         bool transpose_a, double alpha, double beta, Address bias, int activation) {
        bsrmm::matmul(ctx, a, b, c, matmul_options_for(transpose_a, alpha, beta, bias, activation));
      },
      py::arg("ctx"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("transpose_a"),
      py::arg("alpha"), py::arg("beta"), py::arg("bias"), py::arg("activation"),
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "tune",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& a, const bsrmm_dense& b, bsrmm_dense& c,
         bool transpose_a, double alpha, double beta, Address bias, int activation) {
        return bsrmm::tune(ctx, a, b, c, matmul_options_for(transpose_a, alpha, beta, bias, activation));
      },
      py::arg("ctx"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("transpose_a"),
      py::arg("alpha"), py::arg("beta"), py::arg("bias"), py::arg("activation"),
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace bsrmm_python
