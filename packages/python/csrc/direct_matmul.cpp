// _core.matmul_direct: the common call, read without leaving C++. B and out both numpy arrays
// or both torch tensors, 2-D, B of A's dtype on A's device in a layout the core reads as it
// lies: the one reader (array_view.hpp) makes both descriptors, exactly as the general path
// does, and the core's check_operands judges them as it judges every call (shapes, out's dtype
// and device, alignment, overlap); the Python layer words its verdict (_matmul._judged).
// Anything else returns False before the core is called, and the Python layer takes its
// general path (src/bsrmm/_matmul.py), which copies or converts inputs, allocates results,
// and handles vectors and bias. Why a second path: through the general path the Python layer
// cost ~30 of a 36 us call (array views, checks, descriptors; docs/perf-log.md entry 22), more
// than a small product's kernel.
#include "array_view.hpp"
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

#include <optional>

namespace bsrmm_python {

namespace {

bool same_device(const bsrmm_device& x, const bsrmm_device& y) {
  return x.type == y.type && (x.type == BSRMM_DEVICE_CPU || x.ordinal == y.ordinal);
}

bool direct_kind(const std::optional<ArrayKind>& kind) {
  return kind == ArrayKind::numpy || kind == ArrayKind::torch;
}

// B as the core reads it where it lies, or none when the general path must copy or convert it
// (another dtype, layout, alignment or rank) or refuse it in its own words (another device).
std::optional<bsrmm_dense> direct_input(const ArrayView& b, bsrmm_dtype dtype,
                                        bsrmm_device device) {
  if (b.shape.size() != 2 || value_dtype(b.dtype) != dtype || !is_aligned(b) ||
      !same_device(b.device, device))
    return std::nullopt;
  const auto layout = layout_of(b);
  if (!layout) return std::nullopt;
  return dense_operand(b, DenseShape{*layout, dtype}, b.device);
}

}  // namespace

void bind_direct_matmul(py::module_& m) {
  m.def(
      "matmul_direct",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& a, py::handle b_obj, py::handle c_obj,
         bool transpose_a, double alpha, double beta, int activation) {
        const auto kind = array_kind(b_obj);
        if (!direct_kind(kind) || array_kind(c_obj) != kind) return false;
        const auto b = direct_input(read_array(b_obj, kind, "B", std::nullopt), a.info().dtype,
                                    ctx.device());
        if (!b) return false;
        const ArrayView c = read_array(c_obj, kind, "out", std::nullopt);
        if (c.shape.size() != 2) return false;  // a vector result: the general path's shapes
        bsrmm_dense c_dense = dense_operand(c, dense_shape(c, "out", true), c.device);
        py::gil_scoped_release release;
        bsrmm::matmul(ctx, a, *b, c_dense,
                      matmul_options_for(transpose_a, alpha, beta, 0, activation));
        return true;
      },
      py::arg("ctx"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("transpose_a"),
      py::arg("alpha"), py::arg("beta"), py::arg("activation"));
}

}  // namespace bsrmm_python
