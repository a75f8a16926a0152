"""Which CUDA stream a call runs on. A GPU call is ordered after the caller's own work by running
on the stream the caller's array library is using right now: torch's and cupy's current stream,
or the stream a ``__cuda_array_interface__`` producer names. Streams are raw ``cudaStream_t``
values; 0 is the legacy default stream (1 and 2, the legacy and per-thread default handles, are
valid ``cudaStream_t`` values too)."""

from __future__ import annotations

import sys
from typing import Any, Optional

from . import _arrays
from ._errors import InvalidArgumentError
from ._typing import StreamLike


def current_stream(obj: Any) -> Optional[int]:
    """The stream the library that owns ``obj`` queues work on, for CUDA arrays; None when the
    object names none (CPU arrays, DLPack producers: those synchronise to our stream instead)."""
    kind = _arrays.array_kind(obj)
    if kind == _arrays.TORCH and obj.is_cuda:
        torch = sys.modules["torch"]
        # The raw lookup (what Triton uses) skips building a Stream object on every call.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return int(raw(obj.device.index))
        return int(torch.cuda.current_stream(obj.device).cuda_stream)
    if kind == _arrays.CUPY:
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(obj.device.id):
            return int(cupy.cuda.get_current_stream().ptr)
    if kind == _arrays.CUDA_ARRAY_INTERFACE:
        stream = obj.__cuda_array_interface__.get("stream")
        return None if stream is None else int(stream)
    return None


def stream_handle(stream: StreamLike) -> int:
    """A stream given by the user: an int ``cudaStream_t``, a ``torch.cuda.Stream``, a cupy
    ``Stream``, or any object with the ``__cuda_stream__`` protocol."""
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return int(stream.cuda_stream)
    if hasattr(stream, "ptr") and not isinstance(stream, int):  # cupy.cuda.Stream
        return int(stream.ptr)
    if isinstance(stream, int) and not isinstance(stream, bool) and 0 <= stream < 2**64:
        return stream
    raise InvalidArgumentError(
        "stream must be a cudaStream_t handle (an int in 0..2**64-1), a torch.cuda.Stream, a cupy "
        f"Stream or an object with __cuda_stream__; got {stream!r}"
    )
