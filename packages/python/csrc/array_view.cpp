// The one reader of array protocols (array_view.hpp) and its bindings.
#include "array_view.hpp"

#include <bsrmm/bsrmm.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstddef>
#include <unordered_map>

namespace bsrmm_python {

namespace {

// Raised as the bsrmm error of `status` (errors.cpp), like the core's own.
[[noreturn]] void unsupported(const std::string& message) {
  throw bsrmm::Error(BSRMM_STATUS_UNSUPPORTED, message);
}
[[noreturn]] void invalid(const std::string& message) {
  throw bsrmm::Error(BSRMM_STATUS_INVALID_ARGUMENT, message);
}

std::string tuple_text(const std::vector<int64_t>& values) {  // as Python prints a tuple
  std::string text = "(";
  for (std::size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + (values.size() == 1 ? ",)" : ")");
}

std::string type_name(py::handle obj) { return py::str(py::type::of(obj).attr("__name__")); }

py::object get(const py::dict& dict, const char* key) {
  return dict.contains(key) ? py::reinterpret_borrow<py::object>(dict[key]) : py::none();
}

constexpr bsrmm_device kCpu{BSRMM_DEVICE_CPU, 0};

// obj.attr("name") builds the name's Python string on every call, ~0.2 us each, and a torch
// tensor is read with eight of them: these names are interned once.
class Name {
 public:
  explicit Name(const char* text) : text_(PyUnicode_InternFromString(text)) {}
  py::object of(py::handle obj) const {
    PyObject* value = PyObject_GetAttr(obj.ptr(), text_);
    if (!value) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(value);
  }
  py::object call(py::handle obj) const {  // obj.name()
    PyObject* value = PyObject_CallMethodNoArgs(obj.ptr(), text_);
    if (!value) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(value);
  }

 private:
  PyObject* text_;  // never released: the names live as long as the module
};

// ---- which protocol ----

// An attribute of a module the caller already imported, looked up until it appears (then
// kept: a module is never unloaded). Leaked, like errors.cpp's factory, for teardown's sake.
const py::object* imported(const char* module, const char* attribute, const py::object*& kept) {
  if (kept) return kept;
  PyObject* found = PyDict_GetItemString(PyImport_GetModuleDict(), module);  // borrowed
  if (!found || !PyObject_HasAttrString(found, attribute)) return nullptr;  // absent or importing
  kept = new py::object(py::reinterpret_borrow<py::object>(found).attr(attribute));
  return kept;
}
const py::object* torch_tensor() {
  static const py::object* kept = nullptr;
  return imported("torch", "Tensor", kept);
}
const py::object* torch_strided() {
  static const py::object* kept = nullptr;
  return imported("torch", "strided", kept);
}
const py::object* cupy_ndarray() {
  static const py::object* kept = nullptr;
  return imported("cupy", "ndarray", kept);
}

// ---- element types, by their numpy-style names ----

// numpy computes dtype.name in Python, slowly: the common kinds are named here (literals: no
// allocation on the per-call path), the rest (ml_dtypes' bfloat16, strings, objects, complex)
// once per dtype.
const char* common_numpy_name(char kind, int64_t itemsize) {
  static const char* const floats[] = {nullptr, nullptr, "float16", nullptr, "float32",
                                       nullptr, nullptr, nullptr,   "float64"};
  static const char* const ints[] = {nullptr, "int8", "int16", nullptr, "int32",
                                     nullptr, nullptr, nullptr, "int64"};
  static const char* const uints[] = {nullptr, "uint8", "uint16", nullptr, "uint32",
                                      nullptr, nullptr, nullptr, "uint64"};
  if (kind == 'b') return "bool";
  if (itemsize < 1 || itemsize > 8) return nullptr;
  if (kind == 'f') return floats[itemsize];
  if (kind == 'i') return ints[itemsize];
  if (kind == 'u') return uints[itemsize];
  return nullptr;
}

std::string numpy_name(const py::dtype& dtype) {
  if (const char* name = common_numpy_name(dtype.kind(), dtype.itemsize())) return name;
  static auto* names = new py::dict();
  if (!names->contains(dtype)) (*names)[dtype] = dtype.attr("name");
  return py::str((*names)[dtype]);
}

void require_native(const py::dtype& dtype, const std::string& argument) {
  static const char native = [] {
    const uint16_t one = 1;
    return *reinterpret_cast<const uint8_t*>(&one) == 1 ? '<' : '>';
  }();
  const char order = dtype.byteorder();
  if (order == '=' || order == '|' || order == native) return;
  unsupported(argument + " has non-native byte order (" + std::string(py::str(dtype.attr("str"))) +
              ")");
}

struct ElementType {
  std::string name;
  int64_t itemsize = 1;
};

// torch.float32 -> {"float32", 4}, once per dtype: torch's dtypes are immortal singletons, so
// their addresses are keys (a reference is kept all the same).
const ElementType& torch_element(py::handle dtype, py::handle tensor) {
  static auto* known = new std::unordered_map<PyObject*, ElementType>();
  const auto found = known->find(dtype.ptr());
  if (found != known->end()) return found->second;
  const std::string text = py::str(dtype);
  ElementType element{text.substr(text.rfind('.') + 1),
                      tensor.attr("element_size")().cast<int64_t>()};
  dtype.inc_ref();
  return known->emplace(dtype.ptr(), std::move(element)).first->second;
}

std::string dlpack_name(const DLDataType& dtype, const std::string& argument) {
  if (dtype.lanes != 1)
    unsupported(argument + " has vector elements (" + std::to_string(dtype.lanes) +
                " lanes); bsrmm reads scalars");
  static const char* const kinds[] = {"int", "uint", "float", nullptr, "bfloat", "complex", "bool"};
  const char* kind = dtype.code < 7 ? kinds[dtype.code] : nullptr;
  const std::string prefix = kind ? kind : "dlpack_code" + std::to_string(dtype.code) + "_";
  return prefix + std::to_string(dtype.bits);  // "bool8": DLPack's bool
}

// ---- shapes and strides ----

std::vector<int64_t> element_strides(const std::vector<int64_t>& bytes, int64_t itemsize,
                                     const std::string& argument) {
  std::vector<int64_t> strides;
  strides.reserve(bytes.size());
  for (const int64_t stride : bytes) {
    if (stride % itemsize != 0)
      invalid(argument + " has byte strides " + tuple_text(bytes) +
              " that are not multiples of its element size " + std::to_string(itemsize));
    strides.push_back(stride / itemsize);
  }
  return strides;
}

std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

std::vector<int64_t> int_list(py::handle sequence) {
  std::vector<int64_t> values;
  if (PyTuple_Check(sequence.ptr())) {  // torch.Size and stride(): no iterator needed
    const Py_ssize_t size = PyTuple_GET_SIZE(sequence.ptr());
    values.reserve(static_cast<std::size_t>(size));
    for (Py_ssize_t i = 0; i < size; ++i)
      values.push_back(py::handle(PyTuple_GET_ITEM(sequence.ptr(), i)).cast<int64_t>());
    return values;
  }
  for (py::handle item : sequence) values.push_back(item.cast<int64_t>());
  return values;
}

// ---- one reader per protocol ----

ArrayView numpy_view(py::handle obj, const std::string& argument) {
  const auto array = py::reinterpret_borrow<py::array>(obj);
  const py::dtype dtype = array.dtype();
  require_native(dtype, argument);
  ArrayView view;
  view.kind = ArrayKind::numpy;
  view.source = py::reinterpret_borrow<py::object>(obj);
  view.address = reinterpret_cast<Address>(array.data());
  view.shape.assign(array.shape(), array.shape() + array.ndim());
  view.itemsize = std::max<int64_t>(dtype.itemsize(), 1);
  view.strides = element_strides({array.strides(), array.strides() + array.ndim()},
                                 view.itemsize, argument);
  view.dtype = numpy_name(dtype);
  view.read_only = !array.writeable();
  return view;
}

bsrmm_device torch_device(py::handle tensor, const std::string& argument) {
  static const Name is_cuda("is_cuda"), is_cpu("is_cpu"), get_device("get_device");
  if (is_cuda.of(tensor).cast<bool>())
    return {BSRMM_DEVICE_CUDA, get_device.call(tensor).cast<int32_t>()};
  if (is_cpu.of(tensor).cast<bool>()) return kCpu;
  unsupported(argument + " is on torch device '" + std::string(py::str(tensor.attr("device"))) +
              "'; bsrmm reads cpu and cuda memory");
}

ArrayView torch_view(py::handle tensor, const std::string& argument) {
  static const Name layout_name("layout"), data_ptr("data_ptr"), shape("shape"), stride("stride"),
      dtype("dtype");
  const py::object layout = layout_name.of(tensor);
  if (!layout.is(*torch_strided()))
    unsupported(argument + " is a torch tensor with layout " + std::string(py::str(layout)) +
                "; a dense (strided) tensor is needed here");
  ArrayView view;
  view.kind = ArrayKind::torch;
  view.source = py::reinterpret_borrow<py::object>(tensor);
  view.address = data_ptr.call(tensor).cast<Address>();  // includes the storage offset
  view.shape = int_list(shape.of(tensor));
  view.strides = int_list(stride.call(tensor));
  const ElementType& element = torch_element(dtype.of(tensor), tensor);
  view.dtype = element.name;
  view.itemsize = element.itemsize;
  view.device = torch_device(tensor, argument);
  return view;
}

ArrayView interface_view(py::handle obj, const std::string& argument, ArrayKind kind,
                         bsrmm_device device) {
  const py::dict interface = obj.attr("__cuda_array_interface__");
  if (!get(interface, "mask").is_none())
    unsupported(argument + " is a masked array; bsrmm reads plain arrays");
  const py::dtype dtype{std::string(py::str(interface["typestr"]))};
  require_native(dtype, argument);
  ArrayView view;
  view.kind = kind;
  view.source = py::reinterpret_borrow<py::object>(obj);
  view.shape = int_list(interface["shape"]);
  view.itemsize = std::max<int64_t>(dtype.itemsize(), 1);
  const py::object byte_strides = get(interface, "strides");
  view.strides = byte_strides.is_none()
                     ? compact_strides(view.shape)
                     : element_strides(int_list(byte_strides), view.itemsize, argument);
  const py::tuple data = interface["data"];
  view.address = data[0].cast<Address>();
  view.read_only = py::bool_(data[1]);
  view.dtype = numpy_name(dtype);
  view.device = device;
  return view;
}

bsrmm_device dlpack_device(py::handle obj, const std::string& argument) {
  const py::tuple where = obj.attr("__dlpack_device__")();
  const auto type = where[0].cast<int32_t>();
  if (type == kDLCPU || type == kDLCUDAHost) return kCpu;
  if (type == kDLCUDA || type == kDLCUDAManaged)
    return {BSRMM_DEVICE_CUDA, where[1].cast<int32_t>()};
  unsupported(argument + " lives on DLPack device type " + std::to_string(type) +
              "; bsrmm reads CPU and CUDA memory");
}

// The producer's capsule, asked for in place (DLPack 1.0's keywords, else the older call).
py::object dlpack_capsule(py::handle obj, const std::string& argument, py::object stream) {
  const auto refused = [&](py::error_already_set& error) {
    if (error.matches(PyExc_BufferError))
      unsupported(argument + " cannot be exported in place through DLPack: " +
                  std::string(py::str(error.value())));
  };
  try {
    return obj.attr("__dlpack__")(py::arg("stream") = stream,
                                  py::arg("max_version") = py::make_tuple(1, 0),
                                  py::arg("copy") = false);
  } catch (py::error_already_set& error) {
    refused(error);
    if (!error.matches(PyExc_TypeError)) throw;  // a producer that predates DLPack 1.0
  }
  try {
    return obj.attr("__dlpack__")(py::arg("stream") = stream);
  } catch (py::error_already_set& error) {
    refused(error);
    throw;
  }
}

ArrayView dlpack_view(py::handle obj, const std::string& argument, std::optional<uint64_t> stream) {
  ArrayView view;
  view.kind = ArrayKind::dlpack;
  view.source = py::reinterpret_borrow<py::object>(obj);
  view.device = dlpack_device(obj, argument);
  // DLPack names CUDA's legacy default stream 1 (0 is reserved); CPU exports take no stream.
  const py::object export_stream = view.device.type == BSRMM_DEVICE_CUDA
                                       ? py::object(py::int_(stream && *stream ? *stream : 1))
                                       : py::object(py::none());
  view.holder = std::make_shared<DLPackTensor>(dlpack_capsule(obj, argument, export_stream));
  const DLTensor& tensor = view.holder->tensor();
  view.address = view.holder->data();
  view.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  view.strides = tensor.strides ? std::vector<int64_t>(tensor.strides, tensor.strides + tensor.ndim)
                                : compact_strides(view.shape);
  view.dtype = dlpack_name(tensor.dtype, argument);
  view.itemsize = std::max<int64_t>(tensor.dtype.bits / 8, 1);
  // A pre-1.0 capsule cannot say whether writing is allowed (JAX arrays are immutable): treat
  // it as read-only so it is never written.
  view.read_only = view.holder->read_only() || !view.holder->versioned();
  return view;
}

}  // namespace

const char* kind_name(ArrayKind kind) {
  switch (kind) {
    case ArrayKind::numpy: return "numpy";
    case ArrayKind::torch: return "torch";
    case ArrayKind::cupy: return "cupy";
    case ArrayKind::dlpack: return "dlpack";
    case ArrayKind::cuda_array_interface: return "cuda_array_interface";
  }
  return "unknown";
}

std::optional<ArrayKind> array_kind(py::handle obj) {
  if (py::isinstance<py::array>(obj)) return ArrayKind::numpy;
  if (const py::object* tensor = torch_tensor(); tensor && py::isinstance(obj, *tensor))
    return ArrayKind::torch;
  if (const py::object* ndarray = cupy_ndarray(); ndarray && py::isinstance(obj, *ndarray))
    return ArrayKind::cupy;
  if (py::hasattr(obj, "__dlpack__") && py::hasattr(obj, "__dlpack_device__"))
    return ArrayKind::dlpack;
  if (py::hasattr(obj, "__cuda_array_interface__")) return ArrayKind::cuda_array_interface;
  return std::nullopt;
}

ArrayView read_array(py::handle obj, const std::string& argument, std::optional<uint64_t> stream) {
  return read_array(obj, array_kind(obj), argument, stream);
}

ArrayView read_array(py::handle obj, std::optional<ArrayKind> kind, const std::string& argument,
                     std::optional<uint64_t> stream) {
  if (!kind)
    unsupported(argument + " must be an array (numpy, torch, cupy, or an object with __dlpack__ or "
                "__cuda_array_interface__); got " + type_name(obj));
  switch (*kind) {
    case ArrayKind::numpy: return numpy_view(obj, argument);
    case ArrayKind::torch: return torch_view(obj, argument);
    case ArrayKind::cupy:
      return interface_view(obj, argument, *kind,
                            {BSRMM_DEVICE_CUDA, obj.attr("device").attr("id").cast<int32_t>()});
    case ArrayKind::dlpack: return dlpack_view(obj, argument, stream);
    case ArrayKind::cuda_array_interface:
      return interface_view(obj, argument, *kind, {BSRMM_DEVICE_CUDA, kAnyCudaOrdinal});
  }
  unsupported(argument + ": unknown array kind");
}

bsrmm_device array_device(py::handle obj, const std::string& argument) {
  const auto kind = array_kind(obj);
  if (!kind) return kCpu;
  switch (*kind) {
    case ArrayKind::torch: return torch_device(obj, argument);
    case ArrayKind::cupy: return {BSRMM_DEVICE_CUDA, obj.attr("device").attr("id").cast<int32_t>()};
    case ArrayKind::dlpack: return dlpack_device(obj, argument);
    case ArrayKind::cuda_array_interface: return {BSRMM_DEVICE_CUDA, kAnyCudaOrdinal};
    case ArrayKind::numpy: break;
  }
  return kCpu;
}

std::optional<bsrmm_dtype> value_dtype(const std::string& name) {
  if (name == "float32") return BSRMM_DTYPE_F32;
  if (name == "float16") return BSRMM_DTYPE_F16;
  if (name == "bfloat16") return BSRMM_DTYPE_BF16;
  if (name == "float64") return BSRMM_DTYPE_F64;
  // numpy (ml_dtypes) and torch name the OCP E4M3 format "float8_e4m3fn" (finite: no inf).
  if (name == "float8_e4m3fn") return BSRMM_DTYPE_FLOAT8_E4M3;
  if (name == "float8_e5m2") return BSRMM_DTYPE_FLOAT8_E5M2;
  return std::nullopt;
}

std::optional<Layout> layout_of(const ArrayView& view) {
  if (view.shape.size() != 1 && view.shape.size() != 2) return std::nullopt;
  const bool vector = view.shape.size() == 1;  // one column
  const int64_t rows = view.shape[0], cols = vector ? 1 : view.shape[1];
  const int64_t row_stride = view.strides[0], col_stride = vector ? 1 : view.strides[1];
  if (rows == 0 || cols == 0) return Layout{rows, cols, std::max<int64_t>(cols, 1)};
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols))
    return Layout{rows, cols, rows > 1 ? row_stride : cols, BSRMM_LAYOUT_ROW_MAJOR};
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows))
    return Layout{rows, cols, cols > 1 ? col_stride : rows, BSRMM_LAYOUT_COL_MAJOR};
  return std::nullopt;
}

bool is_aligned(const ArrayView& view) { return view.address % view.itemsize == 0; }

bool is_contiguous(const ArrayView& view) {
  if (std::find(view.shape.begin(), view.shape.end(), 0) != view.shape.end()) return true;
  int64_t expected = 1;
  for (std::size_t i = view.shape.size(); i-- > 0;) {
    if (view.shape[i] != 1 && view.strides[i] != expected) return false;
    expected *= view.shape[i];
  }
  return true;
}

std::pair<Address, Address> byte_span(const ArrayView& view) {
  int64_t low = 0, high = 0;
  for (std::size_t i = 0; i < view.shape.size(); ++i) {
    if (view.shape[i] == 0) return {view.address, view.address};
    (view.strides[i] < 0 ? low : high) += (view.shape[i] - 1) * view.strides[i];
  }
  return {view.address + low * view.itemsize, view.address + (high + 1) * view.itemsize};
}

bool readable_layout(const ArrayView& view) { return is_aligned(view) && layout_of(view); }

DenseShape dense_shape(const ArrayView& view, const std::string& argument, bool written) {
  if (view.shape.size() != 1 && view.shape.size() != 2)
    invalid(argument + " must be 1-D or 2-D; got " + std::to_string(view.shape.size()) +
            "-D with shape " + tuple_text(view.shape));
  const auto dtype = value_dtype(view.dtype);
  if (!dtype)
    unsupported(argument + " has dtype " + view.dtype +
                "; bsrmm computes with float32, float16, bfloat16 or float64");
  if (written && view.read_only)
    invalid(argument + " (" + type_name(view.source) + ") is read-only or cannot say it is writable");
  const auto layout = layout_of(view);
  if (!layout)
    invalid(argument + " must be row-major or column-major (unit stride along one dimension, the "
            "other at least that dimension's extent) to be written in place; it has shape " +
            tuple_text(view.shape) + " and element strides " + tuple_text(view.strides) +
            ". Pass a contiguous array as " + argument + " and copy it into yours afterwards");
  return DenseShape{*layout, *dtype};
}

bsrmm_dense dense_operand(const ArrayView& view, const DenseShape& shape, bsrmm_device device) {
  const Layout& l = shape.layout;
  return bsrmm_dense{to_pointer(view.address), l.rows, l.cols, l.ld, l.order, shape.dtype, device};
}

void bind_array_view(py::module_& m) {
  const auto tuple_of = [](const std::vector<int64_t>& values) {
    py::tuple tuple(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) tuple[i] = py::int_(values[i]);
    return tuple;
  };
  py::class_<ArrayView>(m, "ArrayView")
      .def_property_readonly("kind", [](const ArrayView& v) { return kind_name(v.kind); })
      .def_readonly("source", &ArrayView::source)
      .def_readonly("address", &ArrayView::address)
      .def_property_readonly("shape", [=](const ArrayView& v) { return tuple_of(v.shape); })
      .def_property_readonly("strides", [=](const ArrayView& v) { return tuple_of(v.strides); })
      .def_readonly("dtype", &ArrayView::dtype)
      .def_readonly("itemsize", &ArrayView::itemsize)
      .def_property_readonly(
          "device", [](const ArrayView& v) { return py::make_tuple(int(v.device.type), v.device.ordinal); })
      .def_readonly("read_only", &ArrayView::read_only)
      .def_property_readonly("size",
                             [](const ArrayView& v) {
                               int64_t size = 1;
                               for (const int64_t extent : v.shape) size *= extent;
                               return size;
                             })
      .def_property_readonly("is_contiguous", &is_contiguous)
      .def("byte_span", [](const ArrayView& v) {
        const auto [first, past] = byte_span(v);
        return py::make_tuple(first, past);
      });
  m.def("read_array",
        py::overload_cast<py::handle, const std::string&, std::optional<uint64_t>>(&read_array),
        py::arg("obj"), py::arg("argument"),
        py::arg("stream") = py::none());
  m.def(
      "array_kind",
      [](py::handle obj) -> std::optional<std::string> {
        const auto kind = array_kind(obj);
        if (!kind) return std::nullopt;
        return std::string(kind_name(*kind));
      },
      py::arg("obj"));
  m.def(
      "array_device",
      [](py::handle obj, const std::string& argument) {
        const bsrmm_device device = array_device(obj, argument);
        return py::make_tuple(int(device.type), device.ordinal);
      },
      py::arg("obj"), py::arg("argument"));
  m.def("readable_layout", &readable_layout, py::arg("view"));
  m.def(
      "readable_contiguous",
      [](const ArrayView& v) { return is_contiguous(v) && is_aligned(v); }, py::arg("view"));
  m.def(
      "dense_shape",
      [](const ArrayView& view, const std::string& argument, bool written) {
        const DenseShape shape = dense_shape(view, argument, written);
        const Layout& l = shape.layout;
        return py::make_tuple(l.rows, l.cols, l.ld, int(l.order), int(shape.dtype));
      },
      py::arg("view"), py::arg("argument"), py::arg("written"));
}

}  // namespace bsrmm_python
