// What the extension's translation units share: one bind_* per concept, and the pointer
// convention. Arrays are read once, by array_view.cpp, for both the general path (the Python
// layer asks _core.read_array and passes descriptors back as _core.Dense) and the direct path
// (direct_matmul.cpp); addresses otherwise cross this boundary as plain integers.
#pragma once

#include <bsrmm/bsrmm.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace bsrmm_python {

namespace py = pybind11;

using Address = std::uintptr_t;

inline void* to_pointer(Address address) { return reinterpret_cast<void*>(address); }

// The multiply's options from the Python layer's arguments (matmul.cpp).
bsrmm_matmul_options matmul_options_for(bool transpose_a, double alpha, double beta, Address bias,
                                        int activation);

void bind_errors(py::module_& m);   // errors.cpp: bsrmm::Error -> bsrmm.Error subclasses
void bind_library(py::module_& m);  // library.cpp: version, ABI constants, CUDA queries, variants
void bind_context(py::module_& m);  // context.cpp: bsrmm::Context
void bind_dense(py::module_& m);    // dense.cpp: the bsrmm_dense descriptor
void bind_matrix(py::module_& m);   // matrix.cpp: bsrmm::Matrix
void bind_matmul(py::module_& m);   // matmul.cpp: bsrmm_matmul, bsrmm_tune
void bind_sddmm(py::module_& m);    // sddmm.cpp: bsrmm_sddmm
void bind_direct_matmul(py::module_& m);  // direct_matmul.cpp: the common call's arrays read here
void bind_tuner(py::module_& m);    // tuner.cpp: the tuner's persistent cache
void bind_array_view(py::module_& m);  // array_view.cpp: the one reader of array protocols

}  // namespace bsrmm_python
