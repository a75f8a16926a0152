"""The one reader of array protocols (csrc/array_view.cpp): what it reads from each protocol
(address, shape, element strides, dtype name, device, writability), the errors it raises naming
the argument, and the layout it hands the core. Every product reads its operands through it, so
these pin down what both the direct and the general path see. torch cases skip when torch is
absent."""

from __future__ import annotations

import numpy as np
import pytest

import bsrmm
from bsrmm import _core

CPU = (_core.DEVICE_CPU, 0)


def test_numpy_views_keep_address_shape_strides_and_dtype():
    base = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
    for array in (base, base[1:, ::2], base.T, base[::-1], base[2]):
        view = _core.read_array(array, "B")
        assert view.kind == "numpy" and view.source is array
        assert view.address == array.__array_interface__["data"][0]
        assert view.shape == array.shape
        assert view.strides == tuple(s // 4 for s in array.strides)
        assert (view.dtype, view.itemsize, view.device, view.read_only) == ("float32", 4, CPU, False)


@pytest.mark.parametrize(
    "dtype, name",
    [(np.float16, "float16"), (np.float64, "float64"), (np.int8, "int8"), (np.uint64, "uint64"),
     (np.bool_, "bool"), (np.complex64, "complex64"), (np.dtype("<U3"), "str96")],
)
def test_numpy_dtype_names_are_numpys(dtype, name):
    assert _core.read_array(np.zeros(3, dtype), "B").dtype == name == np.dtype(dtype).name


def test_read_only_numpy_and_layouts():
    frozen = np.zeros((4, 3), np.float32)
    frozen.flags.writeable = False
    assert _core.read_array(frozen, "out").read_only
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"out \(ndarray\) is read-only"):
        _core.dense_shape(_core.read_array(frozen, "out"), "out", True)
    assert _core.dense_shape(_core.read_array(frozen, "B"), "B", False) == (
        4, 3, 3, _core.LAYOUT_ROW_MAJOR, _core.DTYPE_F32)


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda x: x, (6, 8, 8, "row")),
        (lambda x: x[:, :5], (6, 5, 8, "row")),
        (lambda x: x.T, (8, 6, 8, "col")),
        (lambda x: np.asfortranarray(x)[:4], (4, 8, 6, "col")),
        (lambda x: x[:, 0], (6, 1, 8, "row")),  # 1-D: one column, rows 8 apart
        (lambda x: x[:1], (1, 8, 8, "row")),
        (lambda x: x[:, :0], (6, 0, 1, "row")),
    ],
    ids=["compact", "padded", "transposed", "fortran-rows", "vector", "one-row", "empty"],
)
def test_layouts_the_core_reads(make, expected):
    view = _core.read_array(make(np.ones((6, 8), np.float32)), "B")
    rows, cols, ld, order = expected
    layout = _core.LAYOUT_ROW_MAJOR if order == "row" else _core.LAYOUT_COL_MAJOR
    assert _core.readable_layout(view)
    assert _core.dense_shape(view, "B", False) == (rows, cols, ld, layout, _core.DTYPE_F32)


def test_other_strides_are_not_readable_and_name_the_argument():
    view = _core.read_array(np.ones((8, 8), np.float32)[::2, ::2], "out")
    assert not _core.readable_layout(view) and not view.is_contiguous
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"out must be row-major .* \(4, 4\) .* \(16, 2\)"):
        _core.dense_shape(view, "out", True)
    misaligned = np.frombuffer(bytearray(33), np.uint8)[1:].view(np.float32)
    assert misaligned.flags.c_contiguous and not _core.readable_layout(_core.read_array(misaligned, "B"))
    assert not _core.readable_contiguous(_core.read_array(misaligned, "bias"))
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"B must be 1-D or 2-D; got 3-D"):
        _core.dense_shape(_core.read_array(np.ones((1, 2, 2), np.float32), "B"), "B", False)
    with pytest.raises(bsrmm.UnsupportedError, match=r"bias has dtype int32; bsrmm computes with"):
        _core.dense_shape(_core.read_array(np.ones(2, np.int32), "bias"), "bias", False)


def test_errors_name_the_argument():
    with pytest.raises(bsrmm.UnsupportedError, match=r"B must be an array .* got list"):
        _core.read_array([1.0], "B")
    with pytest.raises(bsrmm.UnsupportedError, match=r"x has non-native byte order \(>f4\)"):
        _core.read_array(np.ones(2, ">f4"), "x")
    odd = np.lib.stride_tricks.as_strided(np.ones(8, np.float32), (3,), (6,))
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"y has byte strides \(6,\) that are not multiples"):
        _core.read_array(odd, "y")
    assert _core.array_kind([1.0]) is None and _core.array_device([1.0], "B") == CPU


class Interface:
    def __init__(self, **fields):
        self.__cuda_array_interface__ = {"version": 3, "strides": None, **fields}


def test_cuda_array_interface_is_read_without_touching_memory():
    view = _core.read_array(Interface(shape=(4, 3), typestr="<f2", data=(4096, True),
                                      strides=(2, 8)), "B")
    assert (view.kind, view.address, view.shape, view.strides) == ("cuda_array_interface", 4096, (4, 3), (1, 4))
    assert (view.dtype, view.read_only, view.device) == ("float16", True, (_core.DEVICE_CUDA, -1))
    compact = _core.read_array(Interface(shape=(2, 5), typestr="<f4", data=(64, False)), "B")
    assert compact.strides == (5, 1) and not compact.read_only
    with pytest.raises(bsrmm.UnsupportedError, match="B is a masked array"):
        _core.read_array(Interface(shape=(2,), typestr="<f4", data=(64, False), mask=object()), "B")


class HostDLPack:
    def __init__(self, array, legacy=False):
        self._array, self._legacy = array, legacy

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *, stream=None, **kwargs):
        if self._legacy and kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        return self._array.__dlpack__(stream=stream, **kwargs)


def test_dlpack_producers_old_and_new():
    array = np.arange(12, dtype=np.float64).reshape(3, 4)[:, 1:]
    for legacy in (False, True):
        view = _core.read_array(HostDLPack(array, legacy), "B")
        assert (view.kind, view.shape, view.strides, view.dtype) == ("dlpack", (3, 3), (4, 1), "float64")
        assert view.address == array.__array_interface__["data"][0]
        assert view.read_only == legacy  # a pre-1.0 capsule cannot say it may be written


def test_dlpack_refusals_name_the_argument():
    class Elsewhere(HostDLPack):
        def __dlpack_device__(self):
            return (8, 0)  # Metal

    with pytest.raises(bsrmm.UnsupportedError, match="bias lives on DLPack device type 8"):
        _core.read_array(Elsewhere(np.ones(2)), "bias")

    class Refusing(HostDLPack):
        def __dlpack__(self, **kwargs):
            raise BufferError("not in place")

    with pytest.raises(bsrmm.UnsupportedError, match="out cannot be exported in place through DLPack: not in place"):
        _core.read_array(Refusing(np.ones(2)), "out")


def test_torch_tensors():
    torch = pytest.importorskip("torch", reason="torch is not installed: the torch reader untested here")
    base = torch.arange(24, dtype=torch.bfloat16).reshape(4, 6)
    view = _core.read_array(base.t()[1:], "B")
    assert (view.kind, view.shape, view.strides, view.dtype, view.itemsize) == ("torch", (5, 4), (1, 6), "bfloat16", 2)
    assert view.address == base.data_ptr() + 2 and view.device == CPU and not view.read_only
    assert _core.dense_shape(view, "B", True) == (5, 4, 6, _core.LAYOUT_COL_MAJOR, _core.DTYPE_BF16)
    with pytest.raises(bsrmm.UnsupportedError, match="B is a torch tensor with layout torch.sparse_coo"):
        _core.read_array(base.float().to_sparse(), "B")
    with pytest.raises(bsrmm.UnsupportedError, match="out is on torch device 'meta'"):
        _core.read_array(torch.empty(2, device="meta"), "out")
