// The one reader of the array protocols bsrmm accepts: numpy arrays, torch tensors, cupy
// arrays, then any object with __dlpack__ (the producer makes its data ready on the stream we
// name) or __cuda_array_interface__. Each becomes an ArrayView (address, shape, element
// strides, element type, device); the view becomes the core's bsrmm_dense descriptor by
// dense_layout. Both products read their operands here: the Python layer's general path
// (_core.read_array, through bsrmm/_arrays.py) and the direct path (direct_matmul.cpp).
// Nothing here judges operands against each other or against A: the core's check_operands does.
// torch and cupy are never imported here: a tensor of theirs can only exist if the caller
// already imported them, so sys.modules says whether to look.
#pragma once

#include "bindings.hpp"
#include "dlpack.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bsrmm_python {

enum class ArrayKind { numpy, torch, cupy, dlpack, cuda_array_interface };

const char* kind_name(ArrayKind kind);  // "numpy", "torch", ... as bsrmm/_arrays.py names them
std::optional<ArrayKind> array_kind(py::handle obj);

// A CUDA array whose producer does not say which device holds it (a bare
// __cuda_array_interface__): it matches any CUDA device, and descriptors take A's.
constexpr int32_t kAnyCudaOrdinal = -1;

// An array the core can read or write where it lies.
struct ArrayView {
  ArrayKind kind = ArrayKind::numpy;
  py::object source;  // the caller's object: keeps the memory alive while the view is in use
  Address address = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  std::string dtype;             // numpy-style name: "float32", "bfloat16", "int64", ...
  int64_t itemsize = 1;          // bytes per element
  bsrmm_device device{BSRMM_DEVICE_CPU, 0};
  bool read_only = false;
  std::shared_ptr<DLPackTensor> holder;  // a consumed DLPack capsule, released with the view
};

// The caller's array as a view, without copying; `argument` names it in errors, `stream` is
// the CUDA stream the call runs on (handed to DLPack producers). Raises bsrmm errors for an
// object no protocol reads, or one whose strides, byte order or device the core cannot use.
ArrayView read_array(py::handle obj, const std::string& argument, std::optional<uint64_t> stream);
// ... for a caller that asked array_kind already.
ArrayView read_array(py::handle obj, std::optional<ArrayKind> kind, const std::string& argument,
                     std::optional<uint64_t> stream);

// Where an array lives, read without exporting it (numpy and array-likes: the host).
bsrmm_device array_device(py::handle obj, const std::string& argument);

std::optional<bsrmm_dtype> value_dtype(const std::string& name);  // the four value types

// How the core reads a 1-D (one column) or 2-D view where it lies: row-major when the last
// dimension has unit stride, column-major when the first has; the other stride is the
// leading dimension. None for other ranks and strides.
struct Layout {
  int64_t rows = 0, cols = 0, ld = 0;
  bsrmm_layout order = BSRMM_LAYOUT_ROW_MAJOR;
};
std::optional<Layout> layout_of(const ArrayView& view);

bool is_aligned(const ArrayView& view);
bool is_contiguous(const ArrayView& view);  // compact row-major; extent-1 and empty dims aside
// [first, past-the-end) bytes the view can touch; empty for an empty array.
std::pair<Address, Address> byte_span(const ArrayView& view);
// Whether an input (B, x, y) is read as it lies: aligned, 1-D or 2-D, a layout of layout_of.
bool readable_layout(const ArrayView& view);

// The view as the core's dense descriptor, less its address and device. Raises, naming
// `argument`, for a rank, dtype or layout no descriptor expresses, and, when `written`, for
// memory the caller did not let us write.
struct DenseShape {
  Layout layout;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
};
DenseShape dense_shape(const ArrayView& view, const std::string& argument, bool written);
// ... and with them: `device` is A's (a bare __cuda_array_interface__ names no ordinal).
bsrmm_dense dense_operand(const ArrayView& view, const DenseShape& shape, bsrmm_device device);

void bind_array_view(py::module_& m);  // _core.ArrayView, read_array, dense_operand, ...

}  // namespace bsrmm_python
