// _core.matmul_direct: the common call, read without leaving C++ (and _core.matmul_step, torch's
// per-call product, below). B and out both numpy arrays
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

// `view` is a compact (C-contiguous), aligned array of `dtype` on `device`.
bool compact_on(const ArrayView& view, bsrmm_dtype dtype, bsrmm_device device) {
  return value_dtype(view.dtype) == dtype && is_contiguous(view) && is_aligned(view) &&
         same_device(view.device, device);
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

  // torch's per-call product (bsrmm/torch/_ops.py) in one call: `like` with the step's values
  // (a torch tensor of A's dtype on A's device, compact (nnzb, bh, bw), read in place), then
  // matmul_direct's product, with a bias (1-D, compact, C's dtype and
  // device) or none. Through BsrMatrix.with_values and bsrmm.matmul's general path (which the
  // bias always took) the Python layers cost ~60 of a 66 us call on a tiny layer, 12x
  // nn.Linear's whole call (perf-log 62). Anything else returns False for that general path,
  // which words every refusal.
  m.def(
      "matmul_step",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& like, py::handle values_obj, py::handle b_obj,
         py::handle c_obj, py::handle bias_obj, int activation) {
        const auto kind = array_kind(values_obj);
        if (kind != ArrayKind::torch || array_kind(b_obj) != kind || array_kind(c_obj) != kind) return false;
        const bsrmm_matrix_info info = like.info();
        const ArrayView values = read_array(values_obj, kind, "values", std::nullopt);
        const std::vector<int64_t> blocks{info.nnzb, info.block_height, info.block_width};
        if (values.shape != blocks || !compact_on(values, info.dtype, ctx.device())) return false;
        const auto b = direct_input(read_array(b_obj, kind, "B", std::nullopt), info.dtype, ctx.device());
        if (!b) return false;
        const ArrayView c = read_array(c_obj, kind, "out", std::nullopt);
        if (c.shape.size() != 2) return false;
        Address bias = 0;
        std::optional<ArrayView> bias_view;  // keeps the bias readable through the call
        if (!bias_obj.is_none()) {
          if (array_kind(bias_obj) != kind) return false;
          bias_view = read_array(bias_obj, kind, "bias", std::nullopt);
          if (bias_view->shape.size() != 1 || !compact_on(*bias_view, info.dtype, ctx.device())) return false;
          bias = bias_view->address;
        }
        bsrmm_dense c_dense = dense_operand(c, dense_shape(c, "out", true), c.device);
        py::gil_scoped_release release;
        const bsrmm::Matrix step =
            like.with_values(ctx, to_pointer(values.address), values.device, BSRMM_CREATE_BORROW_VALUES);
        bsrmm::matmul(ctx, step, *b, c_dense, matmul_options_for(false, 1.0, 0.0, bias, activation));
        return true;
      },
      py::arg("ctx"), py::arg("like"), py::arg("values"), py::arg("b"), py::arg("c"),
      py::arg("bias"), py::arg("activation"));
}

}  // namespace bsrmm_python
