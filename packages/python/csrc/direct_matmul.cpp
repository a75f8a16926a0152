// _core.matmul_direct: the common call, read without leaving C++ (and _core.matmul_step, torch's
// per-call product, below). B and out both numpy arrays
// or both torch tensors, 2-D, B of A's dtype on A's device in a layout the core reads as it
// lies: the one reader (array_view.hpp) makes both descriptors, exactly as the general path
// does, and the core's check_operands judges them as it judges every call (shapes, out's dtype
// and device, alignment, overlap); the Python layer words its verdict (_matmul._judged). A bias
// is taken where the general path would read it in place (1-D, one value per row of C, A's
// dtype, compact, on A's device). An fp8 A takes fp8_direct's operands (below).
// Anything else returns False before the core is called, and the Python layer takes its
// general path (src/bsrmm/_matmul.py), which copies or converts inputs, allocates results,
// and handles vectors. Why a second path: through the general path the Python layer
// cost ~30 of a 36 us call (array views, checks, descriptors; docs/perf-log.md entry 22), more
// than a small product's kernel.
#include "array_view.hpp"
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

#include <cfloat>
#include <cmath>
#include <optional>
#include <utility>

namespace bsrmm_python {

namespace {

bool same_device(const bsrmm_device& x, const bsrmm_device& y) {
  return x.type == y.type && (x.type == BSRMM_DEVICE_CPU || x.ordinal == y.ordinal);
}

bool direct_kind(const std::optional<ArrayKind>& kind) {
  return kind == ArrayKind::numpy || kind == ArrayKind::torch;
}

bool is_fp8(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_FLOAT8_E4M3 || dtype == BSRMM_DTYPE_FLOAT8_E5M2;
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

// op(A)'s rows and columns.
std::pair<int64_t, int64_t> op_shape(const bsrmm_matrix_info& info, bool transpose_a) {
  return transpose_a ? std::make_pair(info.cols, info.rows) : std::make_pair(info.rows, info.cols);
}

// Runs `read` (which reads the caller's objects); a refusal by the reader or by Python on the
// way (an exception, not an interrupt) becomes a decline: none, for the general path to word.
template <typename Read>
auto or_declined(Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const bsrmm::Error&) {
  } catch (const py::cast_error&) {
  } catch (py::error_already_set& error) {
    if (!error.matches(PyExc_Exception)) throw;  // KeyboardInterrupt, SystemExit
  }
  return std::nullopt;
}

// A bias the general path reads as it lies (_matmul._bias_view, _fp8.multiply): a numpy array
// or torch tensor, 1-D with one value per row of C (`rows`), of `dtype`, compact and aligned, on
// `device`. None for anything that path copies, converts or refuses.
std::optional<ArrayView> direct_bias(py::handle obj, bsrmm_dtype dtype, bsrmm_device device,
                                     int64_t rows) {
  const auto kind = array_kind(obj);
  if (!direct_kind(kind)) return std::nullopt;
  return or_declined([&]() -> std::optional<ArrayView> {
    ArrayView view = read_array(obj, kind, "bias", std::nullopt);
    if (view.shape != std::vector<int64_t>{rows} || !compact_on(view, dtype, device))
      return std::nullopt;
    return view;
  });
}

// A torch tensor's obj.name (an attribute) or obj.name() (a method), `name` interned.
bool torch_flag(py::handle obj, PyObject* name, bool call) {
  PyObject* value = call ? PyObject_CallMethodNoArgs(obj.ptr(), name) : PyObject_GetAttr(obj.ptr(), name);
  if (!value) throw py::error_already_set();
  const int truth = PyObject_IsTrue(value);
  Py_DECREF(value);
  if (truth < 0) throw py::error_already_set();
  return truth != 0;
}

// Whether a host torch array is read here as it lies: not one with its negative bit set (its
// memory holds the values un-negated). A bfloat16 one, and scales that require grad (unless
// `detached`, as a bias is), are left to the general path, which reads them too (_fp8's
// _scale_values reads scales detached, _bias_view converts a bias with torch) at a copy's
// cost; the direct path takes only what needs none.
bool numpy_readable(const ArrayView& view, bool detached) {
  if (view.kind != ArrayKind::torch) return true;
  static PyObject* const requires_grad = PyUnicode_InternFromString("requires_grad");  // kept
  static PyObject* const is_neg = PyUnicode_InternFromString("is_neg");
  return view.dtype != "bfloat16" && (detached || !torch_flag(view.source, requires_grad, false)) &&
         !torch_flag(view.source, is_neg, true);
}

// B's scales of an fp8 product as the general path takes them without a copy, a conversion or
// a wait: a Python float, one scale for B in host memory (_fp8.b_scale_array), finite in
// float32; or one float32 per column of B (`columns`), 1-D, compact and aligned: on the host
// for a host product (numpy, or a torch tensor numpy reads; every value finite, as
// b_scale_array requires), in the GPU's memory as a torch tensor for a product there
// (_fp8._device_b_scales; read in place by the kernels, like B, and not checked for NaN / Inf). None for any other form: a number of
// another type, one scale in an array, a copy (another dtype or layout), a wait (one scale on
// the GPU) or a refusal, all the general path's. `one` holds the float's value through the call,
// `held` the array.
std::optional<bsrmm_scales> direct_scales(py::handle obj, int64_t columns, bsrmm_device device,
                                          float& one, std::optional<ArrayView>& held) {
  bsrmm_scales scales = bsrmm_scales_default();
  if (PyFloat_CheckExact(obj.ptr())) {
    const double value = PyFloat_AS_DOUBLE(obj.ptr());
    if (!std::isfinite(value) || std::fabs(value) > FLT_MAX) return std::nullopt;
    one = static_cast<float>(value);  // round to nearest, as numpy's astype(float32)
    scales.kind = BSRMM_SCALE_PER_TENSOR;
    scales.data = &one;
    scales.count = 1;
    scales.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
    return scales;
  }
  const auto kind = array_kind(obj);
  const bool cuda = device.type == BSRMM_DEVICE_CUDA;
  if (!(kind == ArrayKind::torch || (kind == ArrayKind::numpy && !cuda))) return std::nullopt;
  held = or_declined([&]() -> std::optional<ArrayView> {
    ArrayView view = read_array(obj, kind, "b_scales", std::nullopt);
    if (view.shape != std::vector<int64_t>{columns} || !compact_on(view, BSRMM_DTYPE_F32, device) ||
        (!cuda && !numpy_readable(view, false)))
      return std::nullopt;
    return view;
  });
  if (!held) return std::nullopt;
  const auto* values = static_cast<const float*>(to_pointer(held->address));
  if (!cuda) {
    for (int64_t i = 0; i < columns; ++i)
      if (!std::isfinite(values[i])) return std::nullopt;
  }
  scales.kind = BSRMM_SCALE_PER_COLUMN;
  scales.data = values;
  scales.count = columns;
  scales.device = held->device;
  return scales;
}

// matmul_direct for an fp8 A (_fp8.multiply's general path, its CPU and GPU branches): B an
// fp8 numpy array or torch tensor (float8_e4m3fn or float8_e5m2) on A's device, 2-D, row- or
// column-major (the host branch copies a torch B into row-major first: the core widens B into
// row-major float32 either way, so the product is the same); out of B's array kind on A's
// device, 2-D, float32, float16 or bfloat16, writable, row- or column-major, of the product's
// shape and clear of B's memory; b_scales as direct_scales takes them; a bias as direct_bias
// takes it in out's dtype (on the host not a bfloat16 torch tensor: numpy_readable). The general path lets the core's own errors through unworded, and so does this
// one; everything that path checks or words itself (rank, dtype, device, shape, scales) is
// declined here instead, never raised.
bool fp8_direct(bsrmm::Context& ctx, const bsrmm::Matrix& a, const bsrmm_matrix_info& info,
                ArrayKind kind, py::handle b_obj, py::handle c_obj, bool transpose_a, double alpha,
                double beta, int activation, py::handle scales_obj, py::handle bias_obj) {
  const bsrmm_device device = ctx.device();
  // Plain variables, not a structured binding: the lambda below captures them (C++17 forbids
  // capturing bindings; clang enforces it).
  const std::pair<int64_t, int64_t> op_a_shape = op_shape(info, transpose_a);
  const int64_t rows = op_a_shape.first;
  const int64_t inner = op_a_shape.second;
  struct Operands {
    ArrayView b, c;
    bsrmm_dense b_dense, c_dense;
  };
  const auto operands = or_declined([&]() -> std::optional<Operands> {
    ArrayView b = read_array(b_obj, kind, "B", std::nullopt);
    const auto b_dtype = value_dtype(b.dtype);
    if (!b_dtype || !is_fp8(*b_dtype)) return std::nullopt;
    const auto b_dense = direct_input(b, *b_dtype, device);
    if (!b_dense || b_dense->rows != inner) return std::nullopt;
    ArrayView c = read_array(c_obj, kind, "out", std::nullopt);
    const auto c_dtype = value_dtype(c.dtype);
    if (!c_dtype || !(*c_dtype == BSRMM_DTYPE_F32 || *c_dtype == BSRMM_DTYPE_F16 ||
                      *c_dtype == BSRMM_DTYPE_BF16))
      return std::nullopt;
    if (c.read_only || c.shape != std::vector<int64_t>{rows, b_dense->cols}) return std::nullopt;
    const auto c_dense = direct_input(c, *c_dtype, device);
    if (!c_dense) return std::nullopt;
    const auto [b_first, b_past] = byte_span(b);
    const auto [c_first, c_past] = byte_span(c);
    if (b_first < c_past && c_first < b_past) return std::nullopt;  // the host branch copies B
    return Operands{std::move(b), std::move(c), *b_dense, *c_dense};
  });
  if (!operands) return false;
  float one = 0.0f;
  std::optional<ArrayView> scales_view;
  const auto scales = direct_scales(scales_obj, operands->b_dense.cols, device, one, scales_view);
  if (!scales) return false;
  Address bias = 0;
  std::optional<ArrayView> bias_view;  // keeps the bias readable through the call
  if (!bias_obj.is_none()) {
    bias_view = direct_bias(bias_obj, operands->c_dense.dtype, device, rows);
    if (!bias_view) return false;
    if (device.type == BSRMM_DEVICE_CPU) {
      const auto readable = or_declined([&]() -> std::optional<bool> { return numpy_readable(*bias_view, true); });
      if (!readable || !*readable) return false;
    }
    bias = bias_view->address;
  }
  bsrmm_dense c_dense = operands->c_dense;
  py::gil_scoped_release release;
  bsrmm_matmul_options options = matmul_options_for(transpose_a, alpha, beta, bias, activation);
  options.b_scales = &*scales;
  bsrmm::matmul(ctx, a, operands->b_dense, c_dense, options);
  return true;
}

}  // namespace

void bind_direct_matmul(py::module_& m) {
  m.def(
      "matmul_direct",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& a, py::handle b_obj, py::handle c_obj,
         bool transpose_a, double alpha, double beta, int activation, py::handle scales_obj,
         py::handle bias_obj) {
        const auto kind = array_kind(b_obj);
        if (!direct_kind(kind) || array_kind(c_obj) != kind) return false;
        const bsrmm_matrix_info info = a.info();
        if (is_fp8(info.dtype))
          return fp8_direct(ctx, a, info, *kind, b_obj, c_obj, transpose_a, alpha, beta,
                            activation, scales_obj, bias_obj);
        if (!scales_obj.is_none()) return false;  // scales of a non-fp8 B: the general path's words
        const auto b = direct_input(read_array(b_obj, kind, "B", std::nullopt), info.dtype,
                                    ctx.device());
        if (!b) return false;
        const ArrayView c = read_array(c_obj, kind, "out", std::nullopt);
        if (c.shape.size() != 2) return false;  // a vector result: the general path's shapes
        Address bias = 0;
        std::optional<ArrayView> bias_view;  // keeps the bias readable through the call
        if (!bias_obj.is_none()) {
          bias_view = direct_bias(bias_obj, info.dtype, ctx.device(), op_shape(info, transpose_a).first);
          if (!bias_view) return false;
          bias = bias_view->address;
        }
        bsrmm_dense c_dense = dense_operand(c, dense_shape(c, "out", true), c.device);
        py::gil_scoped_release release;
        bsrmm::matmul(ctx, a, *b, c_dense,
                      matmul_options_for(transpose_a, alpha, beta, bias, activation));
        return true;
      },
      py::arg("ctx"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("transpose_a"),
      py::arg("alpha"), py::arg("beta"), py::arg("activation"), py::arg("b_scales") = py::none(),
      py::arg("bias") = py::none());
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
  // W^T's values for torch's transposed step (dX = dY W): `like` with the step's values (as in
  // matmul_step, read in place), transposed into `out` (a torch tensor of A's dtype on A's
  // device, compact (nnzb, bw, bh)) by the core on the context's stream. A torch gather from the
  // transposed view took 82 us for 896 blocks of 128 x 128 bf16 on an H100 (perf-log 57, 85).
  // False when a tensor is not exactly that, for bsrmm/torch/_ops.py to make it so.
  m.def(
      "transpose_step_values",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& like, py::handle values_obj, py::handle out_obj) {
        const auto kind = array_kind(values_obj);
        if (kind != ArrayKind::torch || array_kind(out_obj) != kind) return false;
        const bsrmm_matrix_info info = like.info();
        const ArrayView values = read_array(values_obj, kind, "values", std::nullopt);
        const ArrayView out = read_array(out_obj, kind, "out", std::nullopt);
        const std::vector<int64_t> blocks{info.nnzb, info.block_height, info.block_width};
        const std::vector<int64_t> transposed{info.nnzb, info.block_width, info.block_height};
        if (values.shape != blocks || !compact_on(values, info.dtype, ctx.device())) return false;
        if (out.shape != transposed || !compact_on(out, info.dtype, ctx.device())) return false;
        py::gil_scoped_release release;
        const bsrmm::Matrix step =
            like.with_values(ctx, to_pointer(values.address), values.device, BSRMM_CREATE_BORROW_VALUES);
        step.transpose_values(ctx, to_pointer(out.address));
        return true;
      },
      py::arg("ctx"), py::arg("like"), py::arg("values"), py::arg("out"));
}

}  // namespace bsrmm_python
