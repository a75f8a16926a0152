"""The types in bsrmm's signatures. Array libraries are never imported here: an array is
described by the protocols bsrmm reads (DLPack, ``__cuda_array_interface__``), which numpy,
torch and cupy arrays all have."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Protocol, Sequence, Tuple, TypeVar, Union

import numpy as np
import numpy.typing as npt


class SupportsDLPack(Protocol):
    """An array exported in place through DLPack (torch, cupy, jax, numpy >= 1.22, ...)."""

    def __dlpack__(self, *, stream: Any = ...) -> Any: ...  # a PyCapsule (no type before 3.13)

    def __dlpack_device__(self) -> Tuple[int, int]: ...


class SupportsCudaArrayInterface(Protocol):
    """A CUDA array described by ``__cuda_array_interface__`` (numba, older cupy, ...)."""

    @property
    def __cuda_array_interface__(self) -> Mapping[str, Any]: ...


class TorchDeviceLike(Protocol):
    """A ``torch.device``: its type ("cpu", "cuda") and ordinal."""

    @property
    def type(self) -> str: ...

    @property
    def index(self) -> Optional[int]: ...


class ScipySparse(Protocol):
    """A ``scipy.sparse`` array or matrix (scipy ships no types: what from_scipy reads)."""

    @property
    def format(self) -> str: ...

    @property
    def shape(self) -> Tuple[int, int]: ...


class SupportsCudaStream(Protocol):
    """A stream object of the ``__cuda_stream__`` protocol (cuda.core, numba, ...)."""

    def __cuda_stream__(self) -> Tuple[int, int]: ...


class TorchStreamLike(Protocol):
    """A ``torch.cuda.Stream``."""

    @property
    def cuda_stream(self) -> int: ...


class CupyStreamLike(Protocol):
    """A ``cupy.cuda.Stream``."""

    @property
    def ptr(self) -> int: ...


class BsrOperand(Protocol):
    """A bsrmm matrix as a product's A: a ``BsrMatrix`` or its transpose ``A.T`` (each says
    which matrix it is, and whether it is transposed; named here, not in ``_matrix``, so the
    product does not import the matrices that call it)."""

    def _product_operand(self, transpose_a: bool) -> Tuple[Any, bool]: ...


StreamLike = Union[int, SupportsCudaStream, TorchStreamLike, CupyStreamLike]
"""A ``cudaStream_t`` handle (int) or a stream object of torch, cupy or ``__cuda_stream__``."""

DenseArray = Union[np.ndarray, SupportsDLPack, SupportsCudaArrayInterface]
"""An array bsrmm reads or writes where it lies."""

ArrayInput = Union[DenseArray, npt.ArrayLike]
"""An input: an array, or on the host anything numpy reads as one (copied once)."""

ArrayT = TypeVar("ArrayT", bound=DenseArray)

DeviceLike = Union[str, TorchDeviceLike]
"""``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a ``torch.device``."""

BlockSize = Union[int, Sequence[int]]
"""An int (square blocks) or (height, width)."""

class TorchDTypeLike(Protocol):
    """A ``torch.dtype``."""

    @property
    def is_floating_point(self) -> bool: ...


DTypeLike = Union[npt.DTypeLike, TorchDTypeLike]
"""A value type as numpy spells it (name, dtype, scalar type, ml_dtypes.bfloat16) or a torch dtype."""
