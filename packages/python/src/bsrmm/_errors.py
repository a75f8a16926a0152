"""The exception hierarchy: one class per status of the C ABI, each also a built-in Python
exception of the matching idiom, so ``except ValueError`` catches a bad argument as usual.

Errors raised by the core carry its message (which names the argument and the rule it broke);
errors raised by this package's own checks use the same classes and the same style.
"""

from __future__ import annotations

import re
from typing import Tuple

from . import _core


class Error(Exception):
    """Base class of every bsrmm error.

    ``code`` is the C status name (e.g. ``"BSRMM_STATUS_INVALID_ARGUMENT"``), the same in every
    binding; ``status`` its stable number.
    """

    status: int = _core.STATUS_INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def code(self) -> str:
        return _core.status_name(self.status)


class InvalidArgumentError(Error, ValueError):
    """A value breaks a documented rule (shape, index, stride, layout)."""

    status = _core.STATUS_INVALID_ARGUMENT


class UnsupportedError(Error, TypeError):
    """Valid, but this backend, dtype or array type is not provided."""

    status = _core.STATUS_UNSUPPORTED


class OutOfMemoryError(Error, MemoryError):
    """A host or device allocation failed."""

    status = _core.STATUS_OUT_OF_MEMORY


class NoDeviceError(Error, RuntimeError):
    """CUDA is not compiled in, there is no driver, or no such device."""

    status = _core.STATUS_NO_DEVICE


class CudaError(Error, RuntimeError):
    """A CUDA call failed; the message holds CUDA's own error string."""

    status = _core.STATUS_CUDA_ERROR


class InternalError(Error, RuntimeError):
    """A bug in bsrmm: please report it with the message."""

    status = _core.STATUS_INTERNAL


class IoError(Error, RuntimeError):
    """The tuner cache could not be read or written."""

    status = _core.STATUS_IO_ERROR


_BY_STATUS: dict[int, type[Error]] = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        UnsupportedError,
        OutOfMemoryError,
        NoDeviceError,
        CudaError,
        InternalError,
        IoError,
    )
}


# The core's messages name the C ABI (flags, functions, struct fields). A Python caller passed
# keywords: each C name becomes the Python spelling that does the same thing. Longest first, so
# a name is replaced before any shorter name inside it.
_PYTHON_WORDS: Tuple[Tuple[str, str], ...] = (
    ("pass BSRMM_CREATE_SORT_INDICES to sort", "pass sort_indices=True to sort"),
    ("BSRMM_CREATE_SORT_INDICES", "sort_indices=True"),
    ("BSRMM_CREATE_BORROW_VALUES", "borrow=True"),
    (
        "force one of those (bsrmm_variant_get_kind tells them apart) or clear it with "
        "bsrmm_context_set_variant(ctx, NULL)",
        "use a context forced to one of those (bsrmm.variants(kind=...) lists each kind) or with "
        "variant=None",
    ),
    ("bsrmm_matmul runs", "bsrmm.matmul runs"),
    ("bsrmm_sddmm runs", "bsrmm.sddmm runs"),
    ("bsrmm_tune", "bsrmm.tune"),  # a CUDA graph capture's refusal says to tune before it
    ("list them with bsrmm_variant_name", "list them with bsrmm.variants()"),
    ("bsrmm_variant_name lists them", "bsrmm.variants() lists them"),
    ("copy it there first (bsrmm_matrix_copy_to)", "move it there first with A.to(device)"),
    ("options->bias", "bias"),
    ("C overlaps", "out overlaps"),
    ("C.data", "out"),
    ("C.rows", "out.shape[0]"),
    ("C.cols", "out.shape[1]"),
    ("B.data", "B"),
    ("B.rows", "B.shape[0]"),
    ("B.cols", "B.shape[1]"),
)

# Construction's C descriptor fields, named as from_arrays / from_dense take them.
CONSTRUCTION_WORDS: Tuple[Tuple[str, str], ...] = (
    ("desc.row_ptr", "indptr"),
    ("desc.col_idx", "indices"),
    ("col_idx[", "indices["),
    ("desc.values", "data"),
    ("desc.rows", "shape[0]"),
    ("desc.cols", "shape[1]"),
    ("desc.block_height", "blocksize[0]"),
    ("desc.block_width", "blocksize[1]"),
    ("desc.nnzb", "nnzb (data.shape[0])"),
    ("dense.rows", "array.shape[0]"),
    ("dense.cols", "array.shape[1]"),
    ("dense has", "array has"),
    ("block_height = ", "blocksize[0] = "),
    ("block_width = ", "blocksize[1] = "),
)


# The core opens each message with the C function that failed ("bsrmm_matrix_create: ...").
_C_FUNCTION_PREFIX = re.compile(r"^bsrmm_[a-z0-9_]+: ")


def in_python_words(message: str, words: Tuple[Tuple[str, str], ...] = _PYTHON_WORDS) -> str:
    message = _C_FUNCTION_PREFIX.sub("", message, count=1)
    for c_name, python_name in words:
        message = message.replace(c_name, python_name)
    return message


def reworded(error: Error, words: Tuple[Tuple[str, str], ...]) -> Error:
    """The same error with the C names in ``words`` replaced (raise it ``from None``)."""
    new = type(error)(in_python_words(error.message, words))
    new.status = error.status
    return new


def _from_core(status: int, message: str) -> Error:
    """Builds the exception for a core failure (called by _core's exception translator)."""
    message = in_python_words(message)
    cls = _BY_STATUS.get(status)
    if cls is None:
        error = InternalError(message)
        error.status = status
        return error
    return cls(message)


_core._set_error_factory(_from_core)
