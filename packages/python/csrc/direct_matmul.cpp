// _core.matmul_direct: the common call read in C++. B and out both numpy arrays, or both torch
// tensors, 2-D and non-empty, row- or column-major, of A's dtype, on A's device, shaped for the
// product, out writable and apart from B: the descriptors are made here and the multiply runs.
// Anything else returns False before the core is called, and the Python layer takes its general
// path (src/bsrmm/_matmul.py), which reads every array protocol, copies inputs it must convert
// and words every error; so this path accepts a subset of what that one accepts, by the same
// rules (dense_operand's layouts, byte_span's overlap). Why: through the general path the
// Python layer cost ~30 of a 36 us call (array views, checks, descriptors; docs/perf-log.md
// entry 22), more than a small product's kernel.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

#include <pybind11/numpy.h>

#include <cstdint>
#include <optional>

namespace bsrmm_python {

namespace {

// A 2-D array as the core will read it, before the layout is decided.
struct Operand {
  Address address = 0;
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 0;  // in elements
  int64_t itemsize = 0;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  bsrmm_device device{BSRMM_DEVICE_CPU, 0};
  bool writable = false;
};

std::optional<bsrmm_dtype> dtype_of_size(int64_t itemsize) {
  switch (itemsize) {
    case 2: return BSRMM_DTYPE_F16;
    case 4: return BSRMM_DTYPE_F32;
    case 8: return BSRMM_DTYPE_F64;
    default: return std::nullopt;
  }
}

// numpy: float16/32/64 in native byte order (bfloat16 from ml_dtypes is kind 'V': general path).
std::optional<Operand> numpy_operand(py::handle obj) {
  if (!py::isinstance<py::array>(obj)) return std::nullopt;
  const auto array = py::reinterpret_borrow<py::array>(obj);
  if (array.ndim() != 2) return std::nullopt;
  const py::dtype dtype = array.dtype();
  static const char native = [] {
    const uint16_t one = 1;
    return *reinterpret_cast<const uint8_t*>(&one) == 1 ? '<' : '>';
  }();
  if (dtype.kind() != 'f' || !(dtype.byteorder() == '=' || dtype.byteorder() == native))
    return std::nullopt;
  Operand op;
  op.itemsize = dtype.itemsize();
  const auto code = dtype_of_size(op.itemsize);
  if (!code || array.strides(0) % op.itemsize != 0 || array.strides(1) % op.itemsize != 0)
    return std::nullopt;
  op.dtype = *code;
  op.address = reinterpret_cast<Address>(array.data());
  op.rows = array.shape(0);
  op.cols = array.shape(1);
  op.row_stride = array.strides(0) / op.itemsize;
  op.col_stride = array.strides(1) / op.itemsize;
  op.writable = array.writeable();
  return op;
}

// torch's classes, registered from Python once torch is imported (this module never imports it).
struct TorchTypes {
  py::object tensor, strided, float16, bfloat16, float32, float64;
};
std::optional<TorchTypes>& torch_types() {
  static std::optional<TorchTypes> types;
  return types;
}

std::optional<bsrmm_dtype> torch_dtype(const TorchTypes& t, py::handle dtype) {
  if (dtype.is(t.float16)) return BSRMM_DTYPE_F16;
  if (dtype.is(t.bfloat16)) return BSRMM_DTYPE_BF16;
  if (dtype.is(t.float32)) return BSRMM_DTYPE_F32;
  if (dtype.is(t.float64)) return BSRMM_DTYPE_F64;
  return std::nullopt;
}

// torch: strided tensors on the CPU or a CUDA device, of the four value dtypes.
std::optional<Operand> torch_operand(py::handle obj) {
  const auto& types = torch_types();
  if (!types || !py::isinstance(obj, types->tensor)) return std::nullopt;
  const py::object layout = obj.attr("layout"), dtype = obj.attr("dtype");
  if (!layout.is(types->strided)) return std::nullopt;
  const auto code = torch_dtype(*types, dtype);
  if (!code) return std::nullopt;
  Operand op;
  if (obj.attr("is_cuda").cast<bool>()) {
    op.device = {BSRMM_DEVICE_CUDA, obj.attr("get_device")().cast<int32_t>()};
  } else if (!obj.attr("is_cpu").cast<bool>()) {
    return std::nullopt;  // meta, mps, ...: the general path says why not
  }
  const auto shape = obj.attr("shape").cast<py::tuple>();
  if (shape.size() != 2) return std::nullopt;
  const auto strides = obj.attr("stride")().cast<py::tuple>();
  op.dtype = *code;
  op.itemsize = op.dtype == BSRMM_DTYPE_F32 ? 4 : op.dtype == BSRMM_DTYPE_F64 ? 8 : 2;
  op.address = obj.attr("data_ptr")().cast<Address>();
  op.rows = shape[0].cast<int64_t>();
  op.cols = shape[1].cast<int64_t>();
  op.row_stride = strides[0].cast<int64_t>();
  op.col_stride = strides[1].cast<int64_t>();
  op.writable = true;
  return op;
}

// dense_operand's rule: unit stride along one dimension, the other at least that extent.
std::optional<bsrmm_dense> descriptor(const Operand& op) {
  bsrmm_dense d{to_pointer(op.address), op.rows, op.cols, 0, BSRMM_LAYOUT_ROW_MAJOR, op.dtype,
                op.device};
  if ((op.cols == 1 || op.col_stride == 1) && (op.rows == 1 || op.row_stride >= op.cols)) {
    d.ld = op.rows > 1 ? op.row_stride : op.cols;
  } else if ((op.rows == 1 || op.row_stride == 1) && (op.cols == 1 || op.col_stride >= op.rows)) {
    d.ld = op.cols > 1 ? op.col_stride : op.rows;
    d.layout = BSRMM_LAYOUT_COL_MAJOR;
  } else {
    return std::nullopt;
  }
  return d;
}

// byte_span's [first, past-the-end) bytes of a non-empty operand.
std::pair<Address, Address> byte_span(const Operand& op) {
  int64_t low = 0, high = 0;
  for (const auto& [extent, stride] : {std::pair{op.rows, op.row_stride}, {op.cols, op.col_stride}})
    (stride < 0 ? low : high) += (extent - 1) * stride;
  return {op.address + low * op.itemsize, op.address + (high + 1) * op.itemsize};
}

bool same_device(const bsrmm_device& x, const bsrmm_device& y) {
  return x.type == y.type && (x.type == BSRMM_DEVICE_CPU || x.ordinal == y.ordinal);
}

}  // namespace

void bind_direct_matmul(py::module_& m) {
  m.def(
      "register_torch_types",
      [](py::object tensor, py::object strided, py::object float16, py::object bfloat16,
         py::object float32, py::object float64) {
        torch_types() = TorchTypes{tensor, strided, float16, bfloat16, float32, float64};
      },
      py::arg("tensor"), py::arg("strided"), py::arg("float16"), py::arg("bfloat16"),
      py::arg("float32"), py::arg("float64"));
  m.def(
      "matmul_direct",
      [](bsrmm::Context& ctx, const bsrmm::Matrix& a, py::handle b_obj, py::handle c_obj,
         bool transpose_a, int64_t rows, int64_t inner, double alpha, double beta,
         int activation) {
        const bool numpy = py::isinstance<py::array>(b_obj);
        const auto b = numpy ? numpy_operand(b_obj) : torch_operand(b_obj);
        const auto c = numpy ? numpy_operand(c_obj) : torch_operand(c_obj);
        if (!b || !c || !c->writable) return false;
        if (b->address % b->itemsize != 0 || c->address % c->itemsize != 0) return false;
        // B of another dtype is converted on a copy, and out of another is an error: both the
        // general path's.
        const bsrmm_dtype a_dtype = a.info().dtype;
        if (b->dtype != a_dtype || c->dtype != a_dtype) return false;
        const bsrmm_device device = ctx.device();
        if (!same_device(b->device, device) || !same_device(c->device, device)) return false;
        if (b->rows != inner || b->cols == 0 || c->rows != rows || c->cols != b->cols || rows == 0)
          return false;
        const auto b_dense = descriptor(*b);
        auto c_dense = descriptor(*c);
        if (!b_dense || !c_dense) return false;
        const auto [b_low, b_high] = byte_span(*b);
        const auto [c_low, c_high] = byte_span(*c);
        if (c_low < b_high && b_low < c_high) return false;
        py::gil_scoped_release release;
        bsrmm::matmul(ctx, a, *b_dense, *c_dense,
                      matmul_options_for(transpose_a, alpha, beta, 0, activation));
        return true;
      },
      py::arg("ctx"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("transpose_a"),
      py::arg("rows"), py::arg("inner"), py::arg("alpha"), py::arg("beta"), py::arg("activation"));
}

}  // namespace bsrmm_python
