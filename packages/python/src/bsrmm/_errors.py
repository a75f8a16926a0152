"""The exception hierarchy: one class per status of the C ABI, each also a built-in Python
exception of the matching idiom, so ``except ValueError`` catches a bad argument as usual.

Errors raised by the core carry its message (which names the argument and the rule it broke);
errors raised by this package's own checks use the same classes and the same style.
"""

from __future__ import annotations

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


def _from_core(status: int, message: str) -> Error:
    """Builds the exception for a core failure (called by _core's exception translator)."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        error = InternalError(message)
        error.status = status
        return error
    return cls(message)


_core._set_error_factory(_from_core)
