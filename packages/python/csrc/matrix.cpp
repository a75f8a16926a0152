// bsrmm::Matrix as _core.Matrix. The Python layer has already checked every array's length
// against the shape it passes here: the core reads exactly that many elements at each address.
#include "bindings.hpp"

#include <bsrmm/bsrmm.hpp>

namespace bsrmm_python {

namespace {

// The C ABI's matrix descriptor from the arrays' addresses and the enum values as Python ints.
bsrmm_bsr_desc bsr_desc(int64_t rows, int64_t cols, int32_t block_height, int32_t block_width, int64_t nnzb,
                        Address row_ptr, Address col_idx, int index_type, Address values, int dtype,
                        bsrmm_device device) {
  return bsrmm_bsr_desc{rows,
                        cols,
                        block_height,
                        block_width,
                        nnzb,
                        to_pointer(row_ptr),
                        to_pointer(col_idx),
                        static_cast<bsrmm_index_type>(index_type),
                        to_pointer(values),
                        static_cast<bsrmm_dtype>(dtype),
                        device};
}

}  // namespace

void bind_matrix(py::module_& m) {
  using bsrmm::Context;
  using bsrmm::Matrix;
  using release_gil = py::call_guard<py::gil_scoped_release>;

  py::class_<bsrmm_matrix_info>(m, "MatrixInfo")
      .def_readonly("rows", &bsrmm_matrix_info::rows)
      .def_readonly("cols", &bsrmm_matrix_info::cols)
      .def_readonly("block_height", &bsrmm_matrix_info::block_height)
      .def_readonly("block_width", &bsrmm_matrix_info::block_width)
      .def_readonly("nnzb", &bsrmm_matrix_info::nnzb)
      .def_property_readonly("dtype",
                             [](const bsrmm_matrix_info& i) { return static_cast<int>(i.dtype); })
      .def_property_readonly(
          "device_type", [](const bsrmm_matrix_info& i) { return static_cast<int>(i.device.type); })
      .def_property_readonly("device_ordinal",
                             [](const bsrmm_matrix_info& i) { return i.device.ordinal; });

  // A matrix does not refer to the context that made it (the core copies its device and stream
  // out), so no keep_alive: matrices may outlive their contexts.
  py::class_<Matrix>(m, "Matrix")
      .def_static(
          "create",
          [](Context& ctx, int64_t rows, int64_t cols, int32_t block_height, int32_t block_width,
             int64_t nnzb, Address row_ptr, Address col_idx, int index_type, Address values,
             int dtype, int device_type, int device_ordinal, unsigned flags) {
            const bsrmm_bsr_desc desc =
                bsr_desc(rows, cols, block_height, block_width, nnzb, row_ptr, col_idx, index_type, values,
                         dtype, bsrmm_device{static_cast<bsrmm_device_type>(device_type), device_ordinal});
            return Matrix(ctx, desc, flags);
          },
          py::arg("ctx"), py::arg("rows"), py::arg("cols"), py::arg("block_height"),
          py::arg("block_width"), py::arg("nnzb"), py::arg("row_ptr"), py::arg("col_idx"),
          py::arg("index_type"), py::arg("values"), py::arg("dtype"), py::arg("device_type"),
          py::arg("device_ordinal"), py::arg("flags"), release_gil())
      // An fp8 matrix: the same arrays plus `scale_count` float32 scales of `scale_kind` at
      // `scales` (host memory; the Python layer has checked the count).
      .def_static(
          "create_scaled",
          [](Context& ctx, int64_t rows, int64_t cols, int32_t block_height, int32_t block_width,
             int64_t nnzb, Address row_ptr, Address col_idx, int index_type, Address values,
             int dtype, unsigned flags, Address scales, int scale_kind, int64_t scale_count) {
            const bsrmm_bsr_desc desc = bsr_desc(rows, cols, block_height, block_width, nnzb, row_ptr,
                                                 col_idx, index_type, values, dtype,
                                                 bsrmm_device{BSRMM_DEVICE_CPU, 0});
            bsrmm_scales given = bsrmm_scales_default();
            given.kind = static_cast<bsrmm_scale_kind>(scale_kind);
            given.data = static_cast<const float*>(to_pointer(scales));
            given.count = scale_count;
            return Matrix::scaled(ctx, desc, given, flags);
          },
          py::arg("ctx"), py::arg("rows"), py::arg("cols"), py::arg("block_height"),
          py::arg("block_width"), py::arg("nnzb"), py::arg("row_ptr"), py::arg("col_idx"),
          py::arg("index_type"), py::arg("values"), py::arg("dtype"), py::arg("flags"),
          py::arg("scales"), py::arg("scale_kind"), py::arg("scale_count"), release_gil())
      // (kind, count) of an fp8 matrix's scales; export_scales writes them to `scales`.
      .def("scale_info",
           [](const Matrix& matrix) {
             bsrmm_scale_kind kind{};
             int64_t count = 0;
             bsrmm::check(bsrmm_matrix_export_scales(matrix.get(), &kind, &count, nullptr));
             return py::make_tuple(static_cast<int>(kind), count);
           })
      .def(
          "export_scales",
          [](const Matrix& matrix, Address scales) {
            bsrmm_scale_kind kind{};
            int64_t count = 0;
            bsrmm::check(bsrmm_matrix_export_scales(matrix.get(), &kind, &count,
                                                    static_cast<float*>(to_pointer(scales))));
          },
          py::arg("scales"))
      .def_static("from_dense", &Matrix::from_dense, py::arg("ctx"), py::arg("dense"),
                  py::arg("block_height"), py::arg("block_width"), release_gil())
      .def("info", &Matrix::info)
      .def(
          "export_to",
          [](const Matrix& matrix, int index_type, Address row_ptr, Address col_idx,
             Address values) {
            matrix.export_to(static_cast<bsrmm_index_type>(index_type), to_pointer(row_ptr),
                             to_pointer(col_idx), to_pointer(values));
          },
          py::arg("index_type"), py::arg("row_ptr"), py::arg("col_idx"), py::arg("values"),
          release_gil())
      .def("to_dense", &Matrix::to_dense, py::arg("ctx"), py::arg("out"), release_gil())
      .def("copy_to", &Matrix::copy_to, py::arg("ctx"), release_gil())
      .def("transpose", &Matrix::transpose, py::arg("ctx"), release_gil())
      // The Python layer has checked that `values` holds nnzb * bh * bw elements of this dtype.
      // `flags` is 0 (the core copies the values) or CREATE_BORROW_VALUES (it reads them in
      // place; BsrMatrix.with_values(borrow=True) keeps the array alive beside the matrix).
      .def(
          "with_values",
          [](const Matrix& matrix, Context& ctx, Address values, int device_type,
             int device_ordinal, unsigned flags) {
            return matrix.with_values(
                ctx, to_pointer(values),
                bsrmm_device{static_cast<bsrmm_device_type>(device_type), device_ordinal}, flags);
          },
          py::arg("ctx"), py::arg("values"), py::arg("device_type"), py::arg("device_ordinal"),
          py::arg("flags") = 0u, release_gil());
}

}  // namespace bsrmm_python
